"""How the reports show numbers and names: cells, intervals, metric kinds, labels.

>>> format_value(0.4567, "percent"), format_value(-3.25, "pp"), format_value(1200, "count")
('45.7%', '-3.2 pp', '1,200')
>>> join(["a", "b", "c"])
'a, b and c'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cx_app.engine.catalogue import metric_definition
from cx_app.reports.blocks import ColumnKind, Table, TableColumn


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell(value: Any) -> Any:
    """NaN and infinities as an empty cell; yes/no; sequences as "a, b"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or is_number(value) or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, Sequence):
        return ", ".join("" if v is None else str(v) for v in value)
    return str(value)


_FORMATS = {"percent": "{:.1%}", "pvalue": "{:.4f}", "score": "{:.1f}", "pp": "{:+.1f} pp",
            "float": "{:.3f}"}


def format_value(value: Any, kind: str) -> str:
    """A cell as text (the workbook keeps full precision behind its number formats)."""
    if value is None:
        return ""
    if not is_number(value):
        return str(value)
    if kind in ("int", "count"):
        if float(value).is_integer():
            return f"{value:,.0f}" if kind == "count" else f"{value:.0f}"
        return f"{value:,.2f}"
    return _FORMATS[kind].format(value) if kind in _FORMATS else str(value)


def interval_text(ci95: Sequence[Any] | None) -> str:
    """`` (95% interval a to b)``, or nothing without a finite interval."""
    ci = list(ci95 or [])[:2]
    if len(ci) == 2 and all(is_number(c) and math.isfinite(c) for c in ci):
        return f" (95% interval {ci[0]:.1f} to {ci[1]:.1f})"
    return ""


def join(parts: Iterable[str]) -> str:
    parts = list(parts)
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def metric_kind(key: str, binary: bool) -> ColumnKind:
    found = metric_definition(key, binary=binary)
    if found is None:
        return "float"
    return {"percent": "percent", "count": "count"}.get(found.format, "float")


def facts_table(title: str, facts: Iterable[tuple[str, Any, ColumnKind]], *,
                note: str = "") -> Table:
    """Item / value rows, each in its own kind; facts without a value are left out."""
    kept = [(k, cell(v), kind) for k, v, kind in facts if v is not None and v != ""]
    return Table(title, (TableColumn("item", "Item"), TableColumn("value", "Value")),
                 tuple((k, v) for k, v, _ in kept), note=note,
                 cell_kinds=tuple((None, kind if is_number(v) else "text")
                                  for _, v, kind in kept))
