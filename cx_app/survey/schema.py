"""Survey schemas: a declarative, validated description of a survey file's layout.

Schemas live in ``survey_schemas/*.yaml``; without one, :func:`cx_app.survey.inference.infer_schema`
proposes a layout and :func:`schema_from_mapping` builds one from the CLI's ``--target --scale
--attributes`` flags. Columns are matched by their header or any alias (:func:`normalise_header`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cx_app.atomic_files import write_text_atomic
from cx_app.engine.plan import (
    PlanSpec,
    StepSpec,
    check_step_names,
    format_validation_error,
    parse_yaml_text,
    read_yaml_document,
)
from cx_app.errors import SchemaError
from cx_app.safe_text import PlainText, plain_text
from cx_app.survey.choices import vocabulary
from cx_app.survey.default_plans import default_plan

TargetKind = Literal["nps", "csat", "ces", "custom"]
SegmentRole = Literal["brand", "wave", "date", "region", "other"]
MissingPolicy = Literal["impute_indicator", "impute_median", "exclude"]
"""How models treat a respondent's unanswered attribute (docs/bases-and-gaps.md); ``exclude``
leaves them out of the model base, never out of the NPS."""
MISSING_POLICIES: tuple[str, ...] = get_args(MissingPolicy)
MissingCode = int | float | str

_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


def normalise_header(text: object) -> str:
    """A header as it is compared: without control characters (:func:`plain_text`),
    case-folded, whitespace runs collapsed, ends trimmed."""
    return " ".join(plain_text(str(text)).split()).casefold()


class Scale(BaseModel):
    """An integer rating scale, both ends included (0–10, 1–5, 1–7, 1–10, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int
    max: int

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.max <= self.min:
            raise ValueError(f"scale max ({self.max}) must be greater than min ({self.min})")
        if self.max - self.min > 100:
            raise ValueError(f"scale {self.min}-{self.max} has more than 101 points")
        return self

    @property
    def labels(self) -> tuple[int, ...]:
        return tuple(range(self.min, self.max + 1))

    def __str__(self) -> str:
        return f"{self.min}-{self.max}"


class ColumnSpec(BaseModel):
    """A column of the file: its identifier ``name``, its header ``column`` and ``aliases``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_IDENTIFIER)
    column: PlainText = Field(min_length=1)
    aliases: tuple[PlainText, ...] = ()

    @property
    def candidates(self) -> tuple[str, ...]:
        """Normalised headers this column is recognised by, in order of preference."""
        return tuple(dict.fromkeys(normalise_header(text)
                                   for text in (self.column, *self.aliases, self.name)))


class TargetSpec(ColumnSpec):
    """The question the models predict (the class of each respondent)."""

    kind: TargetKind = "custom"
    scale: Scale
    recommend: bool | None = None
    """Is the target a recommend question? None (a YAML schema written before this field):
    inferred by :attr:`is_recommend`."""

    @property
    def is_recommend(self) -> bool:
        """The ``recommend`` answer, else kind ``nps`` or a header that says so."""
        if self.recommend is not None:
            return self.recommend
        return self.kind == "nps" or guess_recommend(self.column)


class AttributeSpec(ColumnSpec):
    """An attribute (driver) question scored on an integer scale."""

    label: PlainText | None = None
    scale: Scale

    @property
    def display(self) -> str:
        return self.label or self.column


class SegmentSpec(ColumnSpec):
    """A column that splits respondents (brand, wave, date, region or another role)."""

    role: SegmentRole = "other"


class SurveySchema(BaseModel):
    """The layout of one kind of survey file; see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PlainText = Field(min_length=1)
    description: PlainText | None = None
    target: TargetSpec
    attributes: tuple[AttributeSpec, ...] = Field(min_length=1)
    respondent_id: ColumnSpec | None = None
    segments: tuple[SegmentSpec, ...] = ()
    weight: ColumnSpec | None = None
    """A survey-weight column (:mod:`cx_app.survey.weights`)."""
    missing_codes: tuple[MissingCode, ...] = ()
    missing_attributes: MissingPolicy = "impute_indicator"
    plan: tuple[StepSpec, ...] = ()

    @model_validator(mode="after")
    def _names_and_columns_unique(self) -> SurveySchema:
        specs = self.columns()
        for what, values in (
            ("names", [s.name for s in specs]),
            ("columns", [normalise_header(s.column) for s in specs]),
        ):
            dupes = sorted({v for v in values if values.count(v) > 1})
            if dupes:
                raise ValueError(f"column {what} must be unique, repeated: {dupes}")
        check_step_names(self.plan)
        return self

    def columns(self) -> list[ColumnSpec]:
        """Every column spec: target, attributes, segments, the respondent id, the weight."""
        return [self.target, *self.attributes, *self.segments,
                *(spec for spec in (self.respondent_id, self.weight) if spec is not None)]

    @property
    def classes(self) -> tuple[int, ...]:
        """The target scale's labels (0..10 for NPS): the classes of every model and matrix."""
        return self.target.scale.labels

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    @property
    def is_nps(self) -> bool:
        """Whether the target is an NPS: a recommend question on 0–10."""
        return self.target.is_recommend and (self.target.scale.min, self.target.scale.max) == (
            0, 10)

    @property
    def plan_spec(self) -> PlanSpec:
        """The reduction plan with ``classes`` filled in from the target scale."""
        return PlanSpec(classes=self.classes, plan=self.plan)

    def training_fields(self) -> dict[str, Any]:
        """What of the schema changes what a model sees: not the display words, the segments
        or the plan, so editing those never retrains a model
        (:attr:`cx_app.survey.data.SurveyData.data_key` is built from these fields)."""
        return self.model_dump(mode="json", exclude={
            "name": True, "description": True, "segments": True, "plan": True,
            "target": {"recommend"}, "attributes": {"__all__": {"label"}}})

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


# --------------------------------------------------------------------------- reading, writing


def parse_schema(data: object, source: str = "schema") -> SurveySchema:
    """Validate a schema given as parsed YAML/JSON; errors name ``source`` and the key."""
    if not isinstance(data, dict):
        raise SchemaError(
            f"{source}: expected a mapping of schema keys (name, target, attributes, ...), "
            f"got {type(data).__name__}"
        )
    try:
        return SurveySchema.model_validate(data)
    except ValidationError as exc:
        raise SchemaError(format_validation_error(exc, source)) from None


def load_schema(path: str | Path) -> SurveySchema:
    """Read and validate a survey schema file (YAML)."""
    data = read_yaml_document(path, SchemaError, "schema file")
    return parse_schema(data, source=Path(path).name)


MAX_SCHEMA_BYTES = 1_000_000


def schema_from_yaml_text(data: bytes | str, name: str = "schema") -> SurveySchema:
    """Validate a schema given as YAML text or bytes (an uploaded file named ``name``)."""
    if len(data) > MAX_SCHEMA_BYTES:
        raise SchemaError(f"{name}: a schema file of {len(data):,} bytes is too large for a "
                          "survey layout (limit 1 MB)")
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise SchemaError(f"{name}: not a text (YAML) file") from None
    return parse_schema(parse_yaml_text(text, SchemaError, name), source=name)


def save_schema(schema: SurveySchema, path: str | Path) -> Path:
    """Write ``schema`` as YAML that :func:`load_schema` reads back to an equal schema."""
    path = Path(path)
    write_text_atomic(path, schema.to_yaml())
    return path


# --------------------------------------------------------------------------- mapping


_SCALE_TEXT = re.compile(r"^\s*(-?\d+)\s*(?:-|–|\.\.|to|:)\s*(-?\d+)\s*$")


def parse_scale(text: str | Sequence[int] | Scale) -> Scale:
    """``"0-10"``, ``"1..5"``, ``(1, 7)`` or a :class:`Scale` → :class:`Scale`."""
    if isinstance(text, Scale):
        return text
    if isinstance(text, str):
        match = _SCALE_TEXT.match(text)
        if not match:
            raise SchemaError(f"scale '{text}' is not of the form MIN-MAX, e.g. 0-10 or 1-5")
        lo, hi = int(match.group(1)), int(match.group(2))
    else:
        lo, hi = (int(v) for v in text)
    try:
        return Scale(min=lo, max=hi)
    except ValidationError as exc:
        raise SchemaError(format_validation_error(exc, f"scale {lo}-{hi}")) from None


def slugify(text: str) -> str:
    """A header → an identifier: ``"Network - voice"`` → ``network_voice``."""
    slug = re.sub(r"[^0-9a-z]+", "_", normalise_header(text)).strip("_")
    if not slug:
        slug = "column"
    if slug[0].isdigit():
        slug = f"c_{slug}"
    return slug


def unique_names(names: Iterable[str], key: Callable[[str], str] = str.casefold,
                 taken: set[str] | None = None, suffix: str = " ({})") -> list[str]:
    """``names`` with a repeated one (equal by ``key`` to an earlier one or one in ``taken``,
    which grows) followed by `` (2)``, `` (3)``, … (``suffix``)."""
    taken = set() if taken is None else taken
    out = []
    for text in names:
        base, k = text, 2
        while key(text) in taken:
            text, k = base + suffix.format(k), k + 1
        taken.add(key(text))
        out.append(text)
    return out


def _unique_names(headers: Iterable[str], taken: set[str]) -> list[str]:
    return unique_names(map(slugify, headers), str, taken, "_{}")


RECOMMEND_WORDS = r"recommend|empfehl|recommand|recomend|raccomand|aanbevel"
""""Recommend" in English, German ("weiterempfehlen"), French, Spanish and Portuguese, Italian
and Dutch: a survey's recommend question is often asked in the respondents' language."""
NPS_WORDS = re.compile(rf"{RECOMMEND_WORDS}|\bnps\b|net promoter|promoter")


def guess_recommend(header: str) -> bool:
    """Whether a header reads as a recommend question ("likely" alone is not: "How likely are
    you to renew?" is no NPS).

    >>> guess_recommend("Q1. How likely are you to recommend Bank X?"), guess_recommend("Overall")
    (True, False)
    """
    return bool(NPS_WORDS.search(normalise_header(header)))


def guess_kind(header: str, scale: Scale) -> TargetKind:
    """NPS for a 0–10 recommend question; CES / CSAT by name; otherwise custom.

    >>> guess_kind("Likelihood to recommend", Scale(min=0, max=10))
    'nps'
    >>> guess_kind("Overall score", Scale(min=0, max=10))
    'custom'
    """
    text = normalise_header(header)
    if (scale.min, scale.max) == (0, 10) and guess_recommend(text):
        return "nps"
    if "effort" in text or re.search(r"\bCES\b", header):  # French "ces" is a word
        return "ces"
    if re.search(r"satisf|zufrieden|soddisf|tevreden|\bcsat\b", text):
        return "csat"
    return "custom"


_ROLE_WORDS: tuple[tuple[SegmentRole, tuple[str, ...], tuple[str, ...]], ...] = (
    ("date", ("date", "timestamp"), ("time", "day")),
    ("wave", ("wave", "month", "quarter", "period", "year", "round"), ()),
    ("brand", ("brand", "operator", "provider", "carrier", "supplier"), ("company", "bank")),
    ("region", ("region", "country", "city", "state", "province", "district"), ("area",)),
)
"""(role, words that give it in a column name, words that give it only alone or with
:data:`_ROLE_TAILS`): "Time" and "Bank name" are segments, "Waiting time" and "Bank staff" the
CX attributes they name."""
_ROLE_TAILS = {"name", "of", "the", "week", "start", "end", "submission", "submitted"}
_LONGEST_COLUMN_NAME = 4
"""Words in a column name with a role; a longer header is a question ("Which channels have
you used in the last month?" names no wave)."""


def guess_role(header: str) -> SegmentRole:
    """The segment role a column's header names.

    >>> [guess_role(h) for h in ("Month", "Time of day", "Waiting time", "Bank name",
    ...                          "Bank staff", "Which channels have you used in the last month?")]
    ['wave', 'date', 'other', 'brand', 'other', 'other']
    """
    found = re.findall(r"[a-z]+", normalise_header(header))
    words = set(found)
    if len(found) > _LONGEST_COLUMN_NAME:
        return "other"
    for role, keys, alone in _ROLE_WORDS:
        if words & set(keys) or (words & set(alone) and words <= set(alone) | _ROLE_TAILS):
            return role
    return "other"


def schema_from_mapping(
    *,
    target: str,
    scale: str | Sequence[int] | Scale,
    attributes: Sequence[str],
    segments: Sequence[str] = (),
    respondent_id: str | None = None,
    kind: TargetKind | None = None,
    attribute_scale: str | Sequence[int] | Scale | None = None,
    missing_codes: Sequence[MissingCode] = (),
    name: str = "mapping",
    weight: str | None = None,
    attribute_scales: Mapping[str, str | Sequence[int] | Scale] | None = None,
    segment_roles: Mapping[str, SegmentRole] | None = None,
) -> SurveySchema:
    """A schema from an explicit column mapping (headers as they appear in the file).

    The attributes share ``attribute_scale`` (default: the target scale) except those named
    in ``attribute_scales`` (header → scale); segment roles are guessed from their headers
    unless ``segment_roles`` (header → role) gives them.
    """
    target_scale = parse_scale(scale)
    attr_scale = target_scale if attribute_scale is None else parse_scale(attribute_scale)
    target_kind = kind or guess_kind(target, target_scale)
    if not attributes:
        raise SchemaError("mapping: give at least one attribute column (--attributes A,B,C)")
    own = {normalise_header(k): parse_scale(v) for k, v in (attribute_scales or {}).items()}
    unknown = sorted(set(own) - {normalise_header(a) for a in attributes})
    if unknown:
        raise SchemaError(f"mapping: --attribute-scale names {unknown}, which are not among "
                          f"the attributes {list(attributes)}")
    target_name = target_kind if target_kind != "custom" else slugify(target)
    taken = {target_name}
    attr_names = _unique_names(attributes, taken)
    seg_names = _unique_names(segments, taken)
    data: dict = {
        "name": name,
        "target": {
            "name": target_name,
            "column": target,
            "kind": target_kind,
            "scale": target_scale.model_dump(),
        },
        "attributes": [
            {"name": n, "column": c, "scale": own.get(normalise_header(c), attr_scale).model_dump()}
            for n, c in zip(attr_names, attributes, strict=True)
        ],
        "segments": [
            {"name": n, "column": c, "role": (segment_roles or {}).get(c) or guess_role(c)}
            for n, c in zip(seg_names, segments, strict=True)
        ],
        "missing_codes": list(missing_codes),
        "plan": [s.model_dump(mode="json", exclude_none=True)
                 for s in default_plan(target_kind, target_scale)],
    }
    for key, column in (("respondent_id", respondent_id), ("weight", weight)):
        if column:
            data[key] = {"name": _unique_names([column], taken)[0], "column": column}
    return parse_schema(data, source="mapping")


def with_recommend(schema: SurveySchema, recommend: bool) -> SurveySchema:
    """The schema with the analyst's answer to "is this an NPS (recommend) question?"; the
    kind and a default plan follow it on a 0–10 target, a plan the analyst wrote is kept.

    >>> s = schema_from_mapping(target="Overall rating", scale="0-10", attributes=["Price"])
    >>> s.is_nps, with_recommend(s, True).is_nps, with_recommend(s, True).plan[0].groups[0].name
    (False, True, 'detractors')
    """
    target = schema.target
    zero_to_ten = (target.scale.min, target.scale.max) == (0, 10)
    kind = target.kind
    if zero_to_ten:
        kind = "nps" if recommend else ("custom" if kind == "nps" else kind)
    plan = schema.plan
    if tuple(plan) == tuple(default_plan(target.kind, target.scale)):
        plan = default_plan(kind, target.scale)
    return schema.model_copy(update={
        "target": target.model_copy(update={"recommend": recommend, "kind": kind}),
        "plan": tuple(plan)})


# --------------------------------------------------------------------------- inference

KNOWN_TEXT_CODES = vocabulary().not_an_answer
"""Texts that mean "no answer" in any column (case-folded): the answer vocabulary's
``not_an_answer`` (``data/answer_scales.yaml``), one list for numeric and choice-text columns."""
KNOWN_NUMERIC_CODES = (99, 98, 999, 9999, -9, -99)
"""Numbers that mean "no answer" when they lie outside the column's scale (−1 is not one: it is
an answer on a signed scale such as −2..2)."""
def describe_schema(schema: SurveySchema, words: Mapping[str, str] | None = None) -> str:
    """A short human-readable summary; ``words``: how a person reads the policy's code."""
    words = words or {}
    lines = [
        f"schema '{schema.name}'" + (f" ({schema.description})" if schema.description else ""),
        f"  target: {schema.target.column!r} (kind {schema.target.kind}, scale "
        f"{schema.target.scale}; recommend question: "
        f"{'yes' if schema.target.is_recommend else 'no'})",
        "  attributes: " + ", ".join(
            f"{a.column!r} ({a.scale})" for a in schema.attributes),
    ]
    if schema.segments:
        lines.append("  segments: " + ", ".join(
            f"{s.column!r} ({s.role})" for s in schema.segments))
    if schema.respondent_id:
        lines.append(f"  respondent id: {schema.respondent_id.column!r}")
    if schema.weight:
        lines.append(f"  survey weight: {schema.weight.column!r}")
    codes = ", ".join(repr(c) for c in schema.missing_codes) or "none"
    policy = schema.missing_attributes
    lines.append(f"  missing codes: {codes}; missing attribute scores: "
                 f"{words.get(policy, policy)}")
    steps = " → ".join(s.name for s in schema.plan) or "none (original classes)"
    lines.append(f"  plan: {steps}")
    return "\n".join(lines)


__all__ = [
    "AttributeSpec", "ColumnSpec", "Scale", "SegmentSpec", "SurveySchema",
    "TargetSpec", "default_plan", "describe_schema",
    "load_schema", "normalise_header", "parse_scale", "parse_schema", "save_schema",
    "schema_from_mapping", "schema_from_yaml_text", "with_recommend",
]
