"""Deciding once per distinct text of a column, then spreading the answer over its cells.

Survey columns repeat a few answers and codes thousands of times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


def on_distinct(texts: pd.Series,
                compute: Callable[[pd.Series], Sequence[np.ndarray]]) -> tuple[np.ndarray, ...]:
    """``compute`` run on the distinct values of a column (``None`` last for the empty cells),
    each of the arrays it returns spread back over the column's cells.

    >>> on_distinct(pd.Series(["7", "x", None, "7"]), lambda d: [d.isna().to_numpy()])[0]
    array([False, False,  True, False])
    """
    codes, uniques = pd.factorize(texts, use_na_sentinel=True)
    distinct = pd.Series([*np.asarray(uniques, dtype=object).tolist(), None], dtype=object)
    codes = np.where(codes < 0, len(uniques), codes)
    return tuple(np.asarray(answer)[codes] for answer in compute(distinct))
