"""Metrics of a 2×2 and of a 2×2+IM confusion matrix.

Reduced-matrix paper Table 2, Table 5, eqs. 24–36; MATH.md §6, §9, §12. Counts ``tp, fn, imp``
(actual positive group) and ``fp, tn, imn`` (actual negative group), possibly real-valued;
``imp = imn = 0`` is the ordinary 2×2. Denominators: P_actual = TP+FN+IMP, P_pred = TP+FP+IMP,
N_actual = TN+FP+IMN, N_pred = TN+FN+IMN (eq. 27 misprints IMP for IMN). MCC is the ordinary MCC
of the group-level 2×2 (the paper's eq. 28 drops a term); the other misprints handled and the
undefined-value convention: docs/engine.md.
"""

from __future__ import annotations

import math

from cx_app.engine.confusion import plain

__all__ = ["BINARY_KEYS", "binary_metrics"]

BINARY_KEYS: tuple[str, ...] = (
    "tp", "fn", "fp", "tn", "imp", "imn", "n",
    "p_actual", "p_pred", "n_actual", "n_pred",
    "accuracy", "tpr", "tnr", "ppv", "npv", "fnr", "fpr", "fdr", "for",
    "f1", "fm", "ba", "mcc", "pt", "bm", "mk", "ts",
    "pimr", "nimr", "ppimr", "npimr", "delta", "phi",
)  # fmt: skip
"""Keys of :func:`binary_metrics` besides ``undefined``, in display order."""


def binary_metrics(*, tp, fn, fp, tn, imp=0, imn=0) -> dict:
    """All metrics of a 2×2+IM matrix as a dict of plain Python numbers.

    Keyword-only on purpose: the argument orders of the papers differ, and a swapped FN/FP
    would go unnoticed. Keys: :data:`BINARY_KEYS` plus ``undefined`` (list of metric names).

    >>> m = binary_metrics(tp=8, fn=2, fp=1, tn=9)
    >>> m["tpr"], m["fpr"], m["accuracy"]
    (0.8, 0.1, 0.85)
    """
    counts = {"tp": tp, "fn": fn, "fp": fp, "tn": tn, "imp": imp, "imn": imn}
    for name, value in counts.items():
        value = plain(value)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite count ≥ 0, got {value!r}")
        counts[name] = value
    tp, fn, fp, tn, imp, imn = counts.values()
    undefined: set[str] = set()

    def ratio(name: str, num, den, *needs: str) -> float:
        if den == 0 or any(n in undefined for n in needs):
            undefined.add(name)
            return 0.0
        return float(num / den)

    p_actual, p_pred = tp + fn + imp, tp + fp + imp
    n_actual, n_pred = tn + fp + imn, tn + fn + imn
    n = p_actual + n_actual
    out: dict = dict(counts)
    out.update(n=n, p_actual=p_actual, p_pred=p_pred, n_actual=n_actual, n_pred=n_pred)
    out["accuracy"] = ratio("accuracy", tp + tn, n)
    for name, num, den in (
        ("tpr", tp, p_actual), ("fnr", fn, p_actual), ("pimr", imp, p_actual),
        ("tnr", tn, n_actual), ("fpr", fp, n_actual), ("nimr", imn, n_actual),
        ("ppv", tp, p_pred), ("fdr", fp, p_pred), ("ppimr", imp, p_pred),
        ("npv", tn, n_pred), ("for", fn, n_pred), ("npimr", imn, n_pred),
    ):  # fmt: skip
        out[name] = ratio(name, num, den)
    tpr, tnr, fpr, ppv = out["tpr"], out["tnr"], out["fpr"], out["ppv"]
    out["f1"] = ratio("f1", 2 * tp, p_actual + p_pred)
    out["fm"] = ratio("fm", math.sqrt(ppv * tpr), 1, "ppv", "tpr")
    out["ba"] = ratio("ba", tpr + tnr, 2, "tpr", "tnr")
    out["mcc"] = ratio(
        "mcc",
        (tp + imp) * (tn + imn) - fp * fn,
        math.sqrt(float(p_pred) * p_actual * n_pred * n_actual),
    )
    out["pt"] = ratio("pt", math.sqrt(tpr * (1 - tnr)) + tnr - 1, tpr + tnr - 1, "tpr", "tnr")
    out["bm"] = ratio("bm", tpr - fpr, 1, "tpr", "fpr")
    out["mk"] = ratio("mk", ppv - out["for"], 1, "ppv", "for")
    out["ts"] = ratio("ts", tp, tp + fn + fp + imp)
    out["delta"] = ratio("delta", tpr - fpr, 1, "tpr", "fpr")
    out["phi"] = ratio("phi", tpr + fpr - 1, 1, "tpr", "fpr")
    out["undefined"] = sorted(undefined)
    return out
