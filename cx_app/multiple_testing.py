"""Multiple-testing correction: the one home of Holm's step-down adjustment (Holm 1979).

Used by the model comparisons (:mod:`cx_app.models.comparison`, over the pairs of one level and
metric) and the NPS flags (:mod:`cx_app.survey.nps_flags`, over segments or waves).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests

__all__ = ["holm"]


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (statsmodels); NaN p-values stay NaN and do not count.

    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(2).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out
