"""The column mapping as an editable table: one row per column used, and back to a schema.

The edited rows keep the base schema's aliases, missing codes, policy and — while the target
scale is unchanged — its plan.
"""

from __future__ import annotations

from typing import Any, get_args

import pandas as pd

from cx_app.errors import SchemaError
from cx_app.survey.schema import (
    ColumnSpec,
    Scale,
    SegmentRole,
    SurveySchema,
    default_plan,
    guess_kind,
    guess_role,
    parse_schema,
)

ROLES = ("target", "attribute", "segment", "respondent id", "weight", "ignore")
SEGMENT_ROLES: tuple[str, ...] = get_args(SegmentRole)
COLUMNS = ("column", "role", "name", "label", "scale_min", "scale_max", "segment_role")

__all__ = ["COLUMNS", "ROLES", "SEGMENT_ROLES", "mapping_table", "schema_from_mapping_table",
           "target_is_unsure", "with_target"]


def mapping_table(schema: SurveySchema) -> pd.DataFrame:
    """One row per column the schema uses (target, attributes, segments, respondent id).

    >>> from cx_app.survey.schema import schema_from_mapping
    >>> s = schema_from_mapping(target="NPS", scale="0-10", attributes=["Price"])
    >>> mapping_table(s)[["column", "role", "scale_max"]].to_dict("records")
    [{'column': 'NPS', 'role': 'target', 'scale_max': 10}, {'column': 'Price', 'role': 'attribute', 'scale_max': 10}]
    """
    def row(spec: ColumnSpec, role: str, scale: Scale | None = None, **extra: Any) -> dict:
        return {"column": spec.column, "role": role, "name": spec.name, "label": "",
                "scale_min": scale and scale.min, "scale_max": scale and scale.max,
                "segment_role": None, **extra}

    rows = [row(schema.target, "target", schema.target.scale)]
    rows += [row(a, "attribute", a.scale, label=a.label or "") for a in schema.attributes]
    rows += [row(s, "segment", segment_role=s.role) for s in schema.segments]
    rows += [row(spec, role) for spec, role in ((schema.respondent_id, "respondent id"),
                                                (schema.weight, "weight")) if spec is not None]
    return pd.DataFrame(rows, columns=list(COLUMNS))


_UNSURE = ("unsure:", "no header names a target question")


def target_is_unsure(schema: SurveySchema) -> bool:
    """Whether inference could not tell which column is the target: the app asks instead."""
    return any(mark in (schema.description or "") for mark in _UNSURE)


def with_target(schema: SurveySchema, column: str) -> SurveySchema:
    """The schema with ``column`` as the target, the former one an attribute."""
    rows = mapping_table(schema)
    if column not in set(rows.loc[rows["role"].isin(["target", "attribute"]), "column"]):
        raise SchemaError(f"column {column!r} is not a scored column of this layout")
    rows.loc[rows["role"] == "target", "role"] = "attribute"
    rows.loc[rows["column"] == column, "role"] = "target"
    description = "; ".join(p for p in (schema.description or "").split("; ")
                            if not any(mark in p for mark in _UNSURE))
    confirmed = schema.model_copy(update={"description": description or None})
    if column == schema.target.column:
        return confirmed
    chosen = schema_from_mapping_table(rows, confirmed)
    kind = guess_kind(column, chosen.target.scale)
    if kind == chosen.target.kind:
        return chosen
    return chosen.model_copy(update={
        "target": chosen.target.model_copy(update={"kind": kind}),
        "plan": tuple(default_plan(kind, chosen.target.scale))})


def _text(value: Any) -> str | None:
    """A cell as text, or None when blank (editors give None, NaN or pd.NA for empty cells)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    text = str(value).strip()
    return text or None


def schema_from_mapping_table(rows: pd.DataFrame, base: SurveySchema) -> SurveySchema:
    """Edited mapping rows → a validated schema; rows with role ``ignore`` are left out, a
    segment without a kind gets the one its header suggests."""
    records = [r for r in rows.to_dict("records") if r.get("role") != "ignore"]
    targets = [r for r in records if r["role"] == "target"]
    if len(targets) != 1:
        raise SchemaError(f"mark exactly one column as the target (now {len(targets)})")
    aliases = {c.name: list(c.aliases) for c in base.columns()}

    def scale(r: dict) -> dict:
        lo, hi = r.get("scale_min"), r.get("scale_max")
        if _text(lo) is None or _text(hi) is None:
            raise SchemaError(f"column {r['column']!r}: give its scale (min and max)")
        return {"min": int(lo), "max": int(hi)}

    t = targets[0]
    target_scale = scale(t)
    bounds = (target_scale["min"], target_scale["max"])
    same_scale = bounds == (base.target.scale.min, base.target.scale.max)
    kind = base.target.kind if same_scale else guess_kind(t["column"], Scale(**target_scale))
    plan = base.plan if same_scale else default_plan(kind, bounds)
    # the analyst's answer to "is this an NPS question?" holds for the same question only
    recommend = (base.target.recommend if same_scale and t["column"] == base.target.column
                 else None)

    def spec(r: dict, **extra: Any) -> dict:
        return {"name": r["name"], "column": r["column"], "aliases": aliases.get(r["name"], []),
                **extra}

    data: dict = {
        "name": base.name,
        "target": spec(t, kind=kind, scale=target_scale, recommend=recommend),
        "attributes": [spec(r, label=_text(r.get("label")), scale=scale(r))
                       for r in records if r["role"] == "attribute"],
        "segments": [spec(r, role=_text(r.get("segment_role")) or guess_role(r["column"]))
                     for r in records if r["role"] == "segment"],
        "missing_codes": list(base.missing_codes),
        "missing_attributes": base.missing_attributes,
        "plan": [s.model_dump(mode="json", exclude_none=True) for s in plan],
    }
    if base.description is not None:
        data["description"] = base.description
    ids = [r for r in records if r["role"] == "respondent id"]
    if ids:
        data["respondent_id"] = spec(ids[0])
    weights = [r for r in records if r["role"] == "weight"]
    if len(weights) > 1:
        raise SchemaError("mark at most one column as the survey weight (now "
                          f"{len(weights)}: {', '.join(repr(r['column']) for r in weights)})")
    if weights:
        data["weight"] = spec(weights[0])
    return parse_schema(data, source="column mapping")
