"""Discriminant (δ) and characteristic (φ) capability, Armano et al. (MATH.md §9).

For a 2×2 (or 2×2+IM) with tp = TPR and fp = FPR: δ = tp − fp, φ = tp + fp − 1, and
|δ| + |φ| ≤ 1 (the rhombus). δ near ±1: the feature (or classifier) separates the classes;
φ near ±1: it is true (or false) for almost everyone regardless of the class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cx_app.result import Result

__all__ = ["DeltaPhi", "delta_phi", "feature_delta_phi"]


def delta_phi(tpr: Any, fpr: Any) -> tuple[Any, Any]:
    """(δ, φ) = (tpr − fpr, tpr + fpr − 1) for numbers or arrays (one point per fold, ...)."""
    if np.ndim(tpr) == 0 and np.ndim(fpr) == 0:
        tpr, fpr = float(tpr), float(fpr)
    else:
        tpr, fpr = np.asarray(tpr, dtype=float), np.asarray(fpr, dtype=float)
    return tpr - fpr, tpr + fpr - 1


class DeltaPhi(Result):
    """δ and φ of a binary feature against a binary target, with the rates and group sizes;
    ``undefined`` names those without positive or negative respondents (reported as 0)."""

    delta: float
    phi: float
    tpr: float
    fpr: float
    n_positive: int
    n_negative: int
    undefined: tuple[str, ...] = ()


def _as_bool(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.reshape(-1)
    if arr.dtype.kind in "iuf" and np.all(np.isin(arr, (0, 1))):
        return arr.reshape(-1).astype(bool)
    raise ValueError(f"{name} must be boolean (True/False or 0/1); missing values are not allowed")


def feature_delta_phi(feature: Any, target: Any) -> DeltaPhi:
    """δ/φ of "feature is true" (e.g. "scored the attribute in its top-2 box") as a predictor
    of "target is true" (e.g. "is a promoter")."""
    f = _as_bool(feature, "feature")
    t = _as_bool(target, "target")
    if f.shape != t.shape:
        raise ValueError(f"feature has {f.size} values but target has {t.size}")
    n_pos = int(t.sum())
    n_neg = int(t.size - n_pos)
    tpr = float((f & t).sum() / n_pos) if n_pos else 0.0
    fpr = float((f & ~t).sum() / n_neg) if n_neg else 0.0
    undefined = [name for name, n in (("tpr", n_pos), ("fpr", n_neg)) if not n]
    if undefined:
        undefined += ["delta", "phi"]
        delta = phi = 0.0
    else:
        delta, phi = delta_phi(tpr, fpr)
    return DeltaPhi(delta=delta, phi=phi, tpr=tpr, fpr=fpr, n_positive=n_pos, n_negative=n_neg,
                    undefined=tuple(undefined))
