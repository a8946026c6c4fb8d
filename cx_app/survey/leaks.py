"""Attributes that carry the target's answer: a copy of the target, or a function of it.

A recode of the recommend answer (Qualtrics' ``Q1_NPS_GROUP``), taken as a driver, hands the
model the answer it should predict. Inference leaves such a column out of the attributes; a
mapping that names one is refused.
"""

from __future__ import annotations

import numpy as np
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
    t, a = (np.asarray(x, dtype=float) for x in (target, attribute))
    both = ~(np.isnan(t) | np.isnan(a))
    t_codes, t_values = pd.factorize(t[both])
    a_codes, a_values = pd.factorize(a[both])
    if both.sum() < MIN_ROWS or len(a_values) < 2 or len(t_values) < 2:
        return None
    # the distinct (target, attribute) answer pairs: one per target answer, or per attribute one
    pairs = np.count_nonzero(np.bincount(t_codes * len(a_values) + a_codes,
                                         minlength=len(t_values) * len(a_values)))
    if pairs == len(t_values):
        return "is a function of the target"
    if pairs == len(a_values):
        return "predicts perfectly the target"
    return None
