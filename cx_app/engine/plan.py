"""Reduction plans: how classes are grouped, step by step (reduced-matrix paper, Sections 3–4).

A plan is a list of steps. Each step partitions the labels of the previous level (the original
classes for the first step) into named groups, each with a grouping option:

- ``R`` (relaxed): every within-group cell is a true positive;
- ``S`` (strict): only the diagonal is a true positive, the rest is intragroup mismatch (IM);
- ``RS`` (hybrid): the diagonal plus declared ``tp_pairs`` (``[actual, predicted]``), or a
  ``tp_rule`` (``predicted_ge_actual`` / ``predicted_le_actual``, by position in the previous
  level's label order), are true positives.

A 2×2 step names its ``positive`` group. The same YAML shape is used inside survey schemas
(key ``plan``) and in stand-alone plan files, which add ``classes`` at the top: see
:data:`NPS_PLAN_YAML`.

This module validates the *shape* of a plan. Whether the groups partition the classes is checked
when the plan is resolved against a class list (:func:`cx_app.engine.grouping.resolve_plan`), which
names the step and group at fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cx_app.errors import CxAppError, PlanError
from cx_app.safe_text import PlainText

Label = int | PlainText
"""A class label: a score, or a group name (without control characters, as every name here)."""
GroupingOption = Literal["R", "S", "RS"]
TpRule = Literal["predicted_ge_actual", "predicted_le_actual"]


class GroupSpec(BaseModel):
    """One grouped class of a step: its name, the labels it groups and the option."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PlainText = Field(min_length=1)
    members: tuple[Label, ...] = Field(min_length=1)
    option: GroupingOption = "R"
    tp_pairs: tuple[tuple[Label, Label], ...] | None = None
    tp_rule: TpRule | None = None

    @model_validator(mode="after")
    def _rs_needs_its_pairs(self) -> GroupSpec:
        if self.option == "RS":
            if (self.tp_pairs is None) == (self.tp_rule is None):
                raise ValueError(
                    f"group '{self.name}' uses option RS: give exactly one of tp_pairs or tp_rule"
                )
        elif self.tp_pairs is not None or self.tp_rule is not None:
            raise ValueError(
                f"group '{self.name}' has tp_pairs/tp_rule but option {self.option}; "
                "they belong to option RS only"
            )
        return self


class StepSpec(BaseModel):
    """One reduction step: groups partitioning the previous level, and the positive group."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PlainText = Field(min_length=1)
    groups: tuple[GroupSpec, ...] = Field(min_length=2)
    positive: PlainText | None = None

    @model_validator(mode="after")
    def _names_unique_and_positive_known(self) -> StepSpec:
        names = [g.name for g in self.groups]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"step '{self.name}': group names must be unique, repeated: {dupes}")
        if self.positive is not None and self.positive not in names:
            raise ValueError(
                f"step '{self.name}': positive group '{self.positive}' is not one of {names}"
            )
        return self


def check_step_names(steps: Sequence[StepSpec]) -> None:
    """ValueError when two plan steps share a name or one is named ``original`` (the name of
    the unreduced level); the one check of step names, for plans and survey schemas alike."""
    names = [step.name for step in steps]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"plan step names must be unique, repeated: {dupes}")
    if "original" in names:
        raise ValueError("plan step name 'original' is reserved for the unreduced level; "
                         "rename that step")


class PlanSpec(BaseModel):
    """An ordered list of reduction steps, optionally with the class list it applies to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    classes: tuple[Label, ...] | None = None
    plan: tuple[StepSpec, ...] = ()

    @property
    def steps(self) -> tuple[StepSpec, ...]:
        return self.plan

    @model_validator(mode="after")
    def _step_names_unique(self) -> PlanSpec:
        check_step_names(self.plan)
        return self


def format_validation_error(error: ValidationError, source: str) -> str:
    """One readable sentence per problem: ``source: key.path: message``."""
    lines = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {where}: {message}")
    return "\n".join(lines)


def parse_plan(data: object, source: str = "plan") -> PlanSpec:
    """Validate a plan given as parsed YAML/JSON: a mapping with ``plan`` (and ``classes``),
    or a bare list of steps."""
    if isinstance(data, list):
        data = {"plan": data}
    if not isinstance(data, dict):
        raise PlanError(f"{source}: expected a mapping with a 'plan' list, got {type(data).__name__}")
    try:
        return PlanSpec.model_validate(data)
    except ValidationError as exc:
        raise PlanError(format_validation_error(exc, source)) from None


def read_yaml_document(path: str | Path, error: type[CxAppError], what: str) -> object:
    """Parse a YAML (or JSON) file, turning I/O and syntax problems into ``error`` naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise error(f"{path.name}: cannot read the {what} ({exc.strerror})") from None
    return parse_yaml_text(text, error, path.name)


def parse_yaml_text(text: str, error: type[CxAppError], name: str) -> object:
    """Parse YAML (or JSON) text, a syntax problem becoming ``error`` naming ``name``."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{name}: not valid YAML/JSON: {exc}") from None


def load_plan_file(path: str | Path) -> PlanSpec:
    """Read a stand-alone plan file (YAML, or JSON since YAML reads it)."""
    return parse_plan(read_yaml_document(path, PlanError, "plan file"), source=Path(path).name)


NPS_CLASSES: tuple[int, ...] = tuple(range(11))

NPS_PLAN_YAML = """\
classes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
plan:
  - name: "3x3+IM"
    groups:
      - {name: detractors, members: [0, 1, 2, 3, 4, 5, 6], option: R}
      - {name: passives,   members: [7, 8],                option: R}
      - {name: promoters,  members: [9, 10],               option: R}
  - name: "2x2+IM"
    positive: passives_promoters
    groups:
      - {name: detractors,         members: [detractors],          option: S}
      - {name: passives_promoters, members: [passives, promoters], option: S}
"""
NPS_PLAN = parse_plan(yaml.safe_load(NPS_PLAN_YAML), source="built-in NPS plan")
"""The papers' NPS plan: relaxed D/P/P (3×3+IM), then strict D vs P+P (2×2+IM)."""
