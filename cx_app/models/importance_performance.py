"""The importance–performance quadrant, with a label only where the data supports it.

Martilla & James (1977) place each attribute by its importance (Johnson's relative weight, %
of R²) and its performance (mean rating, % of its scale). The classic chart labels every
attribute, even seven within 0.7 points of each other; here an attribute gets a quadrant only
when it stands apart from the others on **both** axes beyond their uncertainty:

- the respondents are resampled with replacement (:data:`BOOTSTRAP_RESAMPLES` times, seeded;
  at most :data:`RESAMPLE_ROWS` per resample, rescaled, so the cost is bounded); on each
  resample the importances and the performances are computed again;
- for attribute j the difference to the mean of the others, d_j = value_j − mean(value_k,
  k ≠ j), is taken on each resample (paired: the same respondents for every attribute);
- its bootstrap standard error gives the two-sided p-value of d_j = 0 (normal approximation,
  z = d̂_j / SE); the k p-values of one axis are Holm-adjusted together (Holm 1979), so that on a
  survey whose attributes all matter alike no attribute is named at all in more than
  :data:`ALPHA` of surveys, however many attributes it has (each attribute tested on its own at
  95% named a false "top driver" in 3 of 40 surveys with 4 attributes and 6 of 40 with 8:
  bench/RESULTS.md, "Driver headlines");
- a Holm-adjusted p-value below :data:`ALPHA` puts the attribute "above" the others on that
  axis when d̂_j > 0, "below" when d̂_j < 0, otherwise it is "like the others".

then :data:`QUADRANTS`, or :data:`NO_STANDOUT`. Each attribute's own 95% percentile interval
(``*_low``, ``*_high``) is kept for the chart's error bars, its Holm-adjusted p-value as
``*_p_holm``. Normal rather than percentile p-values: with 200 resamples the smallest percentile
p-value is 2/201, above Holm's first threshold 0.05/k for k ≥ 6 attributes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from cx_app.errors import AnalysisError
from cx_app.multiple_testing import holm

QUADRANTS = {
    (True, False): "concentrate here",
    (True, True): "keep up the good work",
    (False, False): "low priority",
    (False, True): "possible overkill",
}
"""(importance above the others, performance above the others) → Martilla & James's quadrant,
given only when the attribute stands apart on both axes."""

NO_STANDOUT = "does not stand out"
"""The quadrant of an attribute that does not differ from the others on both axes."""

BOOTSTRAP_RESAMPLES = 200
"""Resamples of the respondents behind the intervals (seeded)."""

RESAMPLE_ROWS = 5_000
"""At most this many respondents per resample (200 fits: 1.5 s with ten attributes). A larger
survey is resampled m out of n, each deviation from the full-data value scaled by √(m/n) (the
m-out-of-n bootstrap of a mean-like statistic)."""

ALPHA = 0.05
"""Family-wise error rate of one axis's "stands out" decisions (Holm over the attributes)."""

METHOD = (f"bootstrap over respondents ({BOOTSTRAP_RESAMPLES} resamples, seeded; at most "
          f"{RESAMPLE_ROWS:,} respondents each, rescaled): an attribute stands out on an axis "
          "when its difference to the mean of the other attributes is non-zero at 5% after "
          "Holm's adjustment over the attributes (bootstrap standard error, normal p-values)")
"""The rule in words, as the page and the reports state it."""

ABOVE, BELOW, ALIKE = "above", "below", "like the others"


def as_frame(X: Any) -> pd.DataFrame:
    """Attribute scores as a float DataFrame (columns ``x1``, ``x2``, … for an array)."""
    if isinstance(X, pd.DataFrame):
        return X.astype(float)
    array = np.asarray(X, dtype=float)
    return pd.DataFrame(array, columns=[f"x{i + 1}" for i in range(array.shape[1])])


def _versus_others(point: np.ndarray, samples: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Per attribute (``point``: full-data values; ``samples``: resamples × attributes):
    above / below / like the others, and the Holm-adjusted p-value of its difference to the
    mean of the others being 0 (bootstrap standard error, normal approximation)."""
    k = len(point)
    if k < 2 or len(samples) < 2:
        return [ALIKE] * k, np.full(k, np.nan)

    def versus(values: np.ndarray) -> np.ndarray:
        return values - (values.sum(axis=-1, keepdims=True) - values) / (k - 1)

    diff = versus(point)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column without two resamples
        se = np.nanstd(versus(samples), axis=0, ddof=1)
        z = np.abs(diff) / se  # no spread: inf (p 0) unless no difference either (p 1)
    z[(se == 0) & (diff == 0)] = 0.0
    adjusted = holm(2 * norm.sf(z))  # NaN (no spread known) stays NaN: like the others
    labels = [ABOVE if p < ALPHA and d > 0 else BELOW if p < ALPHA and d < 0 else ALIKE
              for p, d in zip(adjusted, diff, strict=True)]
    return labels, adjusted


def _performance(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Answered-only means of ``values`` (rows × attributes, NaN = not answered), as % of each
    attribute's scale."""
    with np.errstate(invalid="ignore"):
        counts = np.sum(~np.isnan(values), axis=0)
        means = np.where(counts > 0, np.nansum(values, axis=0) / np.maximum(counts, 1), np.nan)
    return 100 * (means - low) / np.where(high > low, high - low, 1.0)


def importance_performance(X: Any, importance: Mapping[str, float],
                           direction: Mapping[str, float] | None = None,
                           scales: Mapping[str, tuple[float, float]] | None = None, *,
                           importance_on: Callable[[np.ndarray], np.ndarray] | None = None,
                           resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
                           ) -> pd.DataFrame:
    """Importance vs performance (mean attribute score over the respondents who answered it:
    never an imputed value, ``base`` of them) with each attribute's quadrant.

    ``scales`` (attribute → (min, max)) adds ``performance_pct``, the mean as a percentage of
    the attribute's own scale, the axis the quadrant is read on (a 1–5 and a 1–10 question's
    means cannot be compared). ``importance_on(rows)`` (the importances again on the
    respondents ``rows``) turns on the bootstrap of the module docstring; without it every
    quadrant is :data:`NO_STANDOUT`.
    """
    frame = as_frame(X)
    names = [str(c) for c in frame.columns]
    values = frame.to_numpy(dtype=float)
    imp = np.array([float(importance[n]) for n in names])
    base = np.sum(~np.isnan(values), axis=0)
    if scales is not None:
        low = np.array([float(scales[n][0]) for n in names])
        high = np.array([float(scales[n][1]) for n in names])
    else:
        low, high = np.zeros(len(names)), np.full(len(names), 100.0)
    out = pd.DataFrame({"attribute": names, "importance": imp,
                        "performance": np.asarray(frame.mean(skipna=True), dtype=float),
                        "base": base.astype(int),
                        "na_share": 1 - base / max(len(frame), 1)})
    if direction is not None:
        out["direction"] = [float(direction[n]) for n in names]
    if scales is not None:
        out["performance_pct"] = _performance(values, low, high)
    if importance_on is None:
        out["quadrant"] = NO_STANDOUT
        return out
    rng = np.random.default_rng(seed)
    imp_samples, perf_samples = [], []
    size = min(len(frame), RESAMPLE_ROWS)
    for _ in range(resamples):
        rows = rng.integers(0, len(frame), size)
        try:
            imp_samples.append(np.asarray(importance_on(rows), dtype=float))
        except (AnalysisError, np.linalg.LinAlgError, ValueError):
            continue  # a resample without variation in some column says nothing
        perf_samples.append(_performance(values[rows], low, high))
    shrink = math.sqrt(size / max(len(frame), 1))  # m-out-of-n: back to n respondents' spread
    imp_b = imp + (np.array(imp_samples).reshape(-1, len(names)) - imp) * shrink
    perf_point = _performance(values, low, high)
    perf_b = perf_point + (np.array(perf_samples).reshape(-1, len(names)) - perf_point) * shrink
    for axis, point, samples in (("importance", imp, imp_b), ("performance", perf_point, perf_b)):
        if len(samples):
            out[f"{axis}_low"], out[f"{axis}_high"] = np.nanpercentile(samples, [2.5, 97.5],
                                                                       axis=0)
        else:
            out[f"{axis}_low"] = out[f"{axis}_high"] = np.nan
        out[f"{axis}_vs_others"], out[f"{axis}_p_holm"] = _versus_others(point, samples)
    out["quadrant"] = [
        QUADRANTS[(i == ABOVE, p == ABOVE)] if ALIKE not in (i, p) else NO_STANDOUT
        for i, p in zip(out["importance_vs_others"], out["performance_vs_others"], strict=True)]
    return out


def standing_out(table: pd.DataFrame, quadrant: str) -> list[str]:
    """The attributes of an :func:`importance_performance` table labelled ``quadrant``."""
    return [str(a) for a in table.loc[table["quadrant"] == quadrant, "attribute"]]


def important_above_others(table: pd.DataFrame) -> list[str]:
    """The attributes whose importance stands above the others' (most important first); none
    when the table has no bootstrap."""
    if "importance_vs_others" not in table:
        return []
    above = table[table["importance_vs_others"] == ABOVE]
    return [str(a) for a in above.sort_values("importance", ascending=False)["attribute"]]
