"""Assumption checks before trusting an ALP estimate on a new wave.

Theorem 1 of the ALP paper holds for a wave drawn from the training distribution, so each
attribute is compared with the training value counts the model file keeps (docs/alp.md,
"Drift checks"); the PSI and chi-square compare answered scores only, so a gap is never read as
a score. Every finding is a warning attached to the estimate, never silently dropped.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from pydantic import Field, computed_field, model_serializer
from scipy.stats import chi2_contingency

from cx_app.json_values import plain
from cx_app.multiple_testing import holm
from cx_app.result import Result

__all__ = [
    "AttributeDrift",
    "DriftReport",
    "PSI_MAJOR",
    "PSI_MODERATE",
    "attribute_drift",
    "population_stability_index",
    "value_counts_by_attribute",
]

NA_SHARE_CHANGE = 0.05
NA_SHARE_ALPHA = 0.01
PSI_MODERATE = 0.1
PSI_MAJOR = 0.25
LEVELS = ("stable", "moderate", "major")
"""The PSI's reading below :data:`PSI_MODERATE`, below :data:`PSI_MAJOR`, and above."""
SMOOTHING = 0.5


def _key(value) -> str:
    """Values as stable JSON keys: 7.0 and 7 are the same score."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(plain(value))


def value_counts_by_attribute(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per attribute, the count of every observed value (missing values are not counted).
    This is what the model file keeps of the training data."""
    out: dict[str, dict[str, int]] = {}
    for column in frame.columns:
        counts = frame[column].dropna().value_counts()
        out[str(column)] = {_key(v): int(c) for v, c in counts.items()}
    return out


def population_stability_index(reference: Mapping[str, float], current: Mapping[str, float],
                               *, smoothing: float = SMOOTHING) -> float:
    """PSI of two count tables keyed by value: Σ (q − r)·ln(q/r) over the union of values,
    shares computed after adding ``smoothing`` to every cell of both tables."""
    keys = sorted(set(reference) | set(current))
    r = np.array([float(reference.get(k, 0)) for k in keys]) + smoothing
    q = np.array([float(current.get(k, 0)) for k in keys]) + smoothing
    r, q = r / r.sum(), q / q.sum()
    return float(np.sum((q - r) * np.log(q / r)))


class AttributeDrift(Result):
    """One attribute: PSI, chi-square test, unseen/out-of-scale values, missing share."""

    name: str = Field("", exclude=True)
    """The attribute (its document is keyed by it)."""
    present: bool
    psi: float | None = None
    level: str = "missing"
    chi2: float | None = None
    dof: int | None = None
    p_value: float | None = None
    n_reference: int = 0
    n_current: int = 0
    n_missing: int = 0
    unseen_values: list[str] = []
    out_of_scale_values: list[str] = []
    na_share_reference: float | None = None
    na_share_current: float | None = None
    na_share_p: float | None = None
    na_share_p_holm: float | None = None
    """``na_share_p`` Holm-adjusted over the wave's attributes that have one."""

    @computed_field
    @property
    def na_share_changed(self) -> bool:
        """The n/a share moved by ≥ :data:`NA_SHARE_CHANGE` and significantly (Holm-adjusted
        p < 0.01)."""
        if self.na_share_reference is None or self.na_share_current is None:
            return False
        moved = abs(self.na_share_current - self.na_share_reference)
        return (moved >= NA_SHARE_CHANGE - 1e-12  # 0.15 − 0.10 is 0.0499… in floating point
                and self.na_share_p_holm is not None and self.na_share_p_holm < NA_SHARE_ALPHA)


class DriftReport(Result):
    """Every attribute's drift; its JSON is keyed by attribute name."""

    attributes: tuple[AttributeDrift, ...]
    warnings: tuple[str, ...] = ()

    @model_serializer
    def _by_name(self) -> dict[str, AttributeDrift]:
        return {a.name: a for a in self.attributes}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"attribute": a.name, **a.to_dict()} for a in self.attributes])


def _na_shares(reference_gaps: int | None, reference_n: int | None,
               column: pd.Series) -> tuple[float | None, float | None, float | None]:
    """(training n/a share, wave n/a share, two-proportion z-test p) of one attribute."""
    from statsmodels.stats.proportion import proportions_ztest

    n_current, gaps_current = len(column), int(column.isna().sum())
    current = gaps_current / n_current if n_current else None
    if reference_gaps is None or not reference_n or not n_current:
        return None, current, None
    reference = reference_gaps / reference_n
    p = None
    if 0 < reference_gaps + gaps_current < reference_n + n_current:
        _, p = proportions_ztest([reference_gaps, gaps_current], [reference_n, n_current])
        p = float(p)
    return reference, current, p


def attribute_drift(reference: Mapping[str, Mapping[str, int]], current: pd.DataFrame, *,
                    scales: Mapping[str, tuple[float, float]] | None = None,
                    reference_gaps: Mapping[str, int] | None = None,
                    reference_n: int | None = None,
                    labels: Mapping[str, str] | None = None) -> DriftReport:
    """Compare the new wave's attributes (``current``, NaN = unanswered) with the training
    value counts ``reference`` (:func:`value_counts_by_attribute`). ``scales``: attribute →
    (min, max); ``reference_gaps`` (unanswered scores among the ``reference_n`` training
    respondents) turns on the n/a-share signal; ``labels``: how the warnings name attributes."""
    scales = scales or {}
    reference_gaps = reference_gaps or {}
    na = {name: _na_shares(reference_gaps.get(name), reference_n, current[name])
          for name in reference if name in current.columns}
    adjusted = dict(zip(na, holm([np.nan if p is None else p for _, _, p in na.values()]),
                        strict=True))
    results, warnings = [], []
    for name, ref_counts in reference.items():
        if name not in current.columns:
            results.append(AttributeDrift(name=name, present=False))
            continue
        column = current[name]
        cur_counts = value_counts_by_attribute(column.to_frame())[name]
        keys = sorted(set(ref_counts) | set(cur_counts), key=_sort_key)
        table = np.array([[ref_counts.get(k, 0) for k in keys], [cur_counts.get(k, 0) for k in keys]],
                         dtype=float)
        table = table[:, table.sum(axis=0) > 0]
        chi2 = dof = p_value = None
        if table.shape[1] >= 2 and table[1].sum() > 0 and table[0].sum() > 0:
            res = chi2_contingency(table, correction=False)
            chi2, dof, p_value = float(res.statistic), int(res.dof), float(res.pvalue)
        psi = population_stability_index(ref_counts, cur_counts)
        unseen = tuple(k for k in keys if k not in ref_counts and cur_counts.get(k, 0) > 0)
        out_of_scale: tuple[str, ...] = ()
        if name in scales:
            lo, hi = scales[name]
            out_of_scale = tuple(k for k in cur_counts if _outside(k, lo, hi))
        na_ref, na_cur, na_p = na[name]
        na_holm = None if na_p is None else float(adjusted[name])
        item = AttributeDrift(
            name=name, present=True, psi=psi, level=LEVELS[bisect.bisect_right((PSI_MODERATE, PSI_MAJOR), psi)], chi2=chi2, dof=dof,
            p_value=p_value, n_reference=int(sum(ref_counts.values())),
            n_current=int(sum(cur_counts.values())), n_missing=int(column.isna().sum()),
            unseen_values=unseen, out_of_scale_values=out_of_scale, na_share_reference=na_ref,
            na_share_current=na_cur, na_share_p=na_p, na_share_p_holm=na_holm,
        )
        results.append(item)
        shown = (labels or {}).get(name, name)
        if item.na_share_changed:
            warnings.append(
                f"attribute '{shown}': {na_cur:.0%} of this wave did not answer it, "
                f"{na_ref:.0%} in training ({100 * (na_cur - na_ref):+.0f} points, p = "
                f"{na_holm:.2g}"
                + (f", Holm-adjusted over {len(na)} attributes" if len(na) > 1 else "")
                + "): a change in who uses this service, which the estimate may not "
                "reflect")
        if item.level != "stable":
            warnings.append(
                f"attribute '{shown}' has shifted since training ({item.level} change in "
                f"how it is answered: PSI {psi:.2f}"
                + (f"; chi-square p = {p_value:.2g}" if p_value is not None else "")
                + "): the estimate assumes the training distribution and may not hold"
            )
        if unseen:
            warnings.append(
                f"attribute '{shown}' has value(s) never seen in training: {', '.join(unseen)}"
            )
        if out_of_scale:
            warnings.append(
                f"attribute '{shown}' has value(s) outside its scale {lo}–{hi}: "
                f"{', '.join(out_of_scale)}"
            )
    return DriftReport(attributes=tuple(results), warnings=tuple(warnings))


def _sort_key(k: str):
    try:
        return (0, float(k), k)
    except ValueError:
        return (1, 0.0, k)


def _outside(key: str, lo: float, hi: float) -> bool:
    try:
        v = float(key)
    except ValueError:
        return True
    return math.isfinite(v) and (v < lo or v > hi)
