"""Attributes that carry the target's answer (:mod:`cx_app.survey.leaks`), against a pandas
groupby reading of the same definition on random answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.survey.leaks import MIN_ROWS, leak_reason


def _groupby_reason(t: pd.Series, a: pd.Series) -> str | None:
    both = pd.DataFrame({"t": t, "a": a}).dropna()
    if len(both) < MIN_ROWS or both["a"].nunique() < 2 or both["t"].nunique() < 2:
        return None
    if (both.groupby("t")["a"].nunique() == 1).all():
        return "is a function of the target"
    if (both.groupby("a")["t"].nunique() == 1).all():
        return "predicts perfectly the target"
    return None


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 120), kind=st.sampled_from(
    ["random", "recode", "copy", "finer", "constant"]), gaps=st.floats(0, 0.5))
def test_leak_reason_is_the_groupby_definition(seed, n, kind, gaps):
    rng = np.random.default_rng(seed)
    t = pd.Series(rng.integers(0, 11, n).astype(float))
    a = {"random": pd.Series(rng.integers(1, 6, n).astype(float)),
         "recode": (t >= 9).astype(float) - (t <= 6).astype(float),
         "copy": t.copy(),
         "finer": t * 10 + rng.integers(0, 2, n),  # predicts the target, not a function of it
         "constant": pd.Series(np.full(n, 3.0))}[kind]
    t[rng.random(n) < gaps] = np.nan
    a[rng.random(n) < gaps] = np.nan
    assert leak_reason(t, a) == _groupby_reason(t, a)
