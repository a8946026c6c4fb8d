"""Attributes that carry the target's answer: a copy of the target, or a function of it.

A platform's derived column (Qualtrics' ``Q1_NPS_GROUP``: 1 = detractor, 2 = passive,
3 = promoter) or any recode of the recommend answer, taken as a driver, hands the model the
answer it should predict: its "driver" is the target itself. :func:`leak_reason` says whether
one attribute column does so, over the respondents who answered both: the attribute takes one
value for each target answer (a function of the target), or the target takes one value for
each attribute value (it predicts the target perfectly). Inference leaves such a column out
of the attributes; a mapping that names one is refused with this sentence
(:func:`~cx_app.survey.importing.load_survey`).
"""

from __future__ import annotations

import pandas as pd

MIN_ROWS = 30
"""Below this many respondents answering both, a perfect relation may be chance: not judged."""


def leak_reason(target: pd.Series, attribute: pd.Series) -> str | None:
    """Why ``attribute`` leaks ``target`` (both aligned numeric columns, NaN for no answer),
    or None.

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
