"""A segment's values in the order a person reads them: periods in time, other labels naturally.

Wave labels written as months or quarters ("March 2026", "Q4 2025") sorted as text put April
before March and every first quarter together, so the changes between consecutive waves were
computed between the wrong waves. When every label of a column names a period it is sorted by
the period's start (pandas' parser, plus quarters written "Q1 2026" or "2026 Q1"); otherwise the
labels are in natural order (natsort: "Wave 2" before "Wave 10", "Bank A" before "Bank B").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import pandas as pd
from natsort import natsort_keygen, ns

__all__ = ["label_order", "natural_key", "period_start"]

_QUARTER = re.compile(r"q([1-4])\W*(\d{4})|(\d{4})\W*q([1-4])", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
natural_key = natsort_keygen(alg=ns.IGNORECASE)
"""The natural sort key of a label: numbers inside compared as numbers, case ignored."""


@lru_cache(maxsize=4096)
def period_start(label: str) -> pd.Timestamp | None:
    """The first day of the period a label names, or None: a label without a four-digit year
    names none ("May" may be a person, "10" a wave number).

    >>> [str(period_start(t).date()) for t in ("March 2026", "2026-03", "Q4 2025", "2026 Q1")]
    ['2026-03-01', '2026-03-01', '2025-10-01', '2026-01-01']
    >>> period_start("Wave 10"), period_start("May"), period_start("North 2026 team")
    (None, None, None)
    """
    text = label.strip()
    quarter = _QUARTER.fullmatch(text)
    if quarter:
        q, year = (quarter[1], quarter[2]) if quarter[1] else (quarter[4], quarter[3])
        return pd.Timestamp(int(year), 3 * int(q) - 2, 1)
    if not _YEAR.search(text):
        return None
    try:
        return pd.Timestamp(text)
    except (ValueError, OverflowError):
        return None


def label_order(labels: Sequence[str], last: str | None = None) -> list[str]:
    """``labels`` sorted as periods when every one names a period, else naturally; ``last``
    (the missing values' label) stays at the end.

    >>> label_order(["April 2026", "March 2026", "May 2026"])
    ['March 2026', 'April 2026', 'May 2026']
    >>> label_order(["Q1 2026", "Q4 2025", "Q2 2026"])
    ['Q4 2025', 'Q1 2026', 'Q2 2026']
    >>> label_order(["Wave 10", "(missing)", "Wave 2", "Wave 1"], last="(missing)")
    ['Wave 1', 'Wave 2', 'Wave 10', '(missing)']
    """
    present = [label for label in labels if label != last]
    starts = [period_start(label) for label in present]
    if present and all(start is not None for start in starts):
        ordered = [label for _, label in sorted(zip(starts, present, strict=True),
                                                key=lambda pair: (pair[0], natural_key(pair[1])))]
    else:
        ordered = sorted(present, key=natural_key)
    return ordered + [label for label in labels if label == last]
