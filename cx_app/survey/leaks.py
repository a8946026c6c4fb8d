"""Attributes that carry the target's answer: a copy of the target, or a function of it.

A recode of the recommend answer (Qualtrics' ``Q1_NPS_GROUP``), taken as a driver, hands the
model the answer it should predict. Inference leaves such a column out of the attributes; a
mapping that names one is refused.
"""

from __future__ import annotations

import pandas as pd

MIN_ROWS = 30
"""Below this many respondents answering both, a perfect relation may be chance: not judged."""


def leak_reason(target: pd.Series, attribute: pd.Series) -> str | None:
    """Why ``attribute`` leaks ``target`` over the respondents who answered both, or None.

    >>> t = pd.Series([0, 3, 6, 7, 8, 9, 10] * 5)
    >>> leak_reason(t, (t >= 9).astype(int) - (t <= 6).astype(int))
    'is a function of the target'
    >>> leak_reason(t, pd.Series([1, 2, 3, 4, 5] * 7)) is None
    True
    """
    both = pd.DataFrame({"t": target.to_numpy(), "a": attribute.to_numpy()}).dropna()
    if len(both) < MIN_ROWS or both["a"].nunique() < 2 or both["t"].nunique() < 2:
        return None
    if (both.groupby("t")["a"].nunique() == 1).all():
        return "is a function of the target"
    if (both.groupby("a")["t"].nunique() == 1).all():
        return "predicts perfectly the target"
    return None
