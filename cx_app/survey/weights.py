"""Survey weights: reading a weight column and Kish's effective sample size.

The rules are in ``docs/bases-and-gaps.md`` ("Survey weights"). A bad weight is refused rather
than dropped: a weighted NPS over a silently reduced or re-weighted base would mislead.
Intervals rest on n_eff = (Σw)² / Σw²: one on the raw n would be too narrow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cx_app.errors import SchemaError


def effective_sample_size(weights: object) -> float:
    """Kish's effective sample size (Σw)² / Σw² (equals n for equal weights).

    >>> effective_sample_size([1, 1, 1, 1])
    4.0
    >>> round(effective_sample_size([1, 1, 1, 3]), 3)
    3.0
    """
    w = np.asarray(weights, dtype=float)
    total = float(w.sum())
    squares = float(np.square(w).sum())
    return total * total / squares if squares > 0 else 0.0


def clean_weights(raw: pd.Series, blank: pd.Series, keep: np.ndarray, header: str,
                  where: str) -> pd.Series:
    """The weights (float) of a weight column's texts, checked on the rows of ``keep``."""
    values = pd.to_numeric(raw.where(~blank), errors="coerce").astype(float)
    values, ambiguous = _decimal_commas(raw, values, blank)
    keep = np.asarray(keep, dtype=bool)
    problems = {
        "blank": blank.to_numpy(dtype=bool),
        "not a number": (values.isna() & ~blank).to_numpy(dtype=bool),
        "negative": (values < 0).to_numpy(dtype=bool),
        "infinite": np.isinf(values.to_numpy()),
    }
    for what, mask in problems.items():
        bad = np.flatnonzero(mask & keep)
        if bad.size:
            rows = ", ".join(
                f"row {raw.index[i]}" + (f" ({raw.iloc[i].strip()!r})" if what != "blank" else "")
                for i in bad[:3])
            raise SchemaError(
                f"{where}: the weight column {header!r} has {bad.size:,} {what} weight(s) "
                f"({rows}{', ...' if bad.size > 3 else ''}); every respondent needs a weight "
                "of 0 or more — fix the file, or map the column as a segment instead of the "
                "weight" + (f" ({ambiguous})" if ambiguous and what == "not a number" else ""))
    if keep.any() and not values[keep].sum() > 0:
        raise SchemaError(f"{where}: the weight column {header!r} sums to 0 over the "
                          "respondents; weights must have a positive total")
    return values


def _decimal_commas(raw: pd.Series, values: pd.Series,
                    blank: pd.Series) -> tuple[pd.Series, str | None]:
    """``values`` with weights written with a decimal comma (``1,25``, as a European Excel
    writes a CSV) read as numbers; and, when every such weight could as well be a thousands
    separator (``1,250``), no reading but the sentence that says why.

    >>> raw = pd.Series(["1,25", "0,8", "2"])
    >>> _decimal_commas(raw, pd.to_numeric(raw, errors="coerce"), raw.eq(""))[0].tolist()
    [1.25, 0.8, 2.0]
    """
    text = raw.where(values.isna() & ~blank).str.strip()
    comma = text.str.fullmatch(r"-?\d+,\d+").fillna(False).astype(bool)
    if not comma.any():
        return values, None
    if text[comma].str.fullmatch(r"-?\d{1,3}(?:,\d{3})+").all():
        first = text[comma].iloc[0]
        return values, (f"{first!r} reads as {first.replace(',', '.')} with a decimal comma and "
                        f"as {first.replace(',', '')} with a thousands separator: write the "
                        "weights with a decimal point")
    values = values.copy()
    values[comma] = pd.to_numeric(text[comma].str.replace(",", ".", regex=False))
    return values, None
