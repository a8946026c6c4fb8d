"""95 % intervals of the estimated (ALP) metrics, from the class probabilities alone.

An interval for *this* wave's realized metric (docs/alp.md, "Intervals on every estimated
metric"), SE² = SE_outcome² + SE_model²: the answers' part by a parametric bootstrap (each
respondent's class drawn from p̂_i, :func:`draw_realized_matrices`) or the delta method
(:func:`_outcome_delta`), the model's by :func:`heldout_metric_errors` (max(ê², V̂), not ê² − V̂:
that hid a bias of half an SE below five folds' noise). Centre: the mean realized metric over
the draws; interval = centre ± 1.96·SE within [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field, model_serializer, model_validator

from cx_app.engine.catalogue import WAVE_SUMMARY
from cx_app.result import Estimate, Result
from cx_app.survey.nps import Z95

if TYPE_CHECKING:
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.estimate.model_metadata import HeldOutFigures

__all__ = ["DRAW_BLOCK", "INTERVAL_DRAWS", "INTERVAL_METHODS", "LABEL_BUDGET", "MIN_DRAWS", "MetricComparisonRow",
           "MetricInterval",
           "MetricIntervals", "draw_realized_matrices", "effective_draws",
           "errors_from_pooled_gaps", "heldout_metric_errors", "level_values",
           "metric_intervals", "stacked_level_metrics", "wave_metric_intervals"]

INTERVAL_DRAWS = 400
"""Bootstrap draws per interval: the SD of 400 draws is within ±7 % of the true SD (95 %)."""
LABEL_BUDGET = 4_000_000
"""Labels drawn per interval (draws × respondents) before the draws are cut down: about 1.5 s
on one core. A wave of n > 10,000 gets LABEL_BUDGET // n draws, at least :data:`MIN_DRAWS`."""
MIN_DRAWS = 100
"""Fewest draws (the SD within ±14 %, 95 %); a 100,000-respondent wave costs ~4 s."""
DRAW_BLOCK = 1_000_000
"""Respondent labels drawn at once (draws × respondents): bounds memory to ~K·8 MB."""
INTERVAL_METHODS: tuple[str, ...] = ("bootstrap", "delta")
"""How SE_outcome is computed: parametric bootstrap draws, or the delta method (closed form)."""
DELTA_STEP = 1e-4
"""Central-difference step (respondent counts) of the delta method's gradients."""


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den, 0 where den is 0 (the engine's ``zero_division=0``)."""
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def _multiclass(matrix: np.ndarray, im: np.ndarray | None) -> dict[str, np.ndarray]:
    tp = np.diagonal(matrix, axis1=-2, axis2=-1)
    extra = 0.0 if im is None else im
    n_actual = matrix.sum(axis=-1) + extra
    n_pred = matrix.sum(axis=-2) + extra
    total = matrix.sum(axis=(-2, -1)) + (0.0 if im is None else im.sum(axis=-1))
    return {"accuracy": _ratio(tp.sum(axis=-1), total),
            "precision_macro": _ratio(tp, n_pred).mean(axis=-1),
            "recall_macro": _ratio(tp, n_actual).mean(axis=-1),
            "f1_macro": _ratio(2 * tp, n_actual + n_pred).mean(axis=-1)}


def _binary(matrix: np.ndarray, im: np.ndarray, p: int) -> dict[str, np.ndarray]:
    q = 1 - p
    tp, fn = matrix[..., p, p], matrix[..., p, q]
    fp, tn = matrix[..., q, p], matrix[..., q, q]
    p_actual, p_pred = tp + fn + im[..., p], tp + fp + im[..., p]
    n_actual = tn + fp + im[..., q]
    return {"tpr": _ratio(tp, p_actual), "tnr": _ratio(tn, n_actual),
            "ppv": _ratio(tp, p_pred), "f1": _ratio(2 * tp, p_actual + p_pred)}


def stacked_level_metrics(counts: np.ndarray, resolved_plan: ResolvedPlan | None = None,
                          ) -> dict[str, dict[str, np.ndarray]]:
    """The wave metrics (:data:`cx_app.engine.catalogue.WAVE_SUMMARY`) of a stack of K×K
    matrices ``(B, K, K)`` (rows actual, columns predicted) at every level of the plan:
    ``{level: {metric: array (B,)}}``. Same definitions as the engine (reduced levels with
    their IM counts; a 2×2+IM level also gets TPR, TNR, PPV and F1 of its positive group)."""
    c = np.asarray(counts, dtype=float)
    out = {"original": _multiclass(c, None)}
    for step in () if resolved_plan is None else resolved_plan.steps:
        matrix, im = step.reduce(c)
        metrics = _multiclass(matrix, im)
        if step.positive is not None and len(step.labels) == 2:
            metrics.update(_binary(matrix, im, step.positive_index))
        out[step.name] = {k: metrics[k] for k in WAVE_SUMMARY if k in metrics}
    return out


def draw_realized_matrices(proba: np.ndarray, pred_idx: np.ndarray, *,
                           n_draws: int = INTERVAL_DRAWS, seed: int = 0) -> np.ndarray:
    """``n_draws`` realized confusion matrices ``(n_draws, K, K)``: each respondent's actual
    class drawn from its probabilities (inverse CDF of one uniform)."""
    p = np.asarray(proba, dtype=float)
    n, k = p.shape
    cum = np.cumsum(p, axis=1)
    cum[:, -1] = np.inf  # a row summing to 1 − 1e-16 never draws past the last class
    rng = np.random.default_rng(seed)
    out = np.empty((n_draws, k, k))
    block = max(1, DRAW_BLOCK // max(n, 1))
    cell = pred_idx[None, :]
    for start in range(0, n_draws, block):
        b = min(block, n_draws - start)
        u = rng.random((b, n))
        drawn = np.empty((b, n), dtype=np.int64)
        for i in range(b):  # per draw: (n, K) comparisons, no (b, n, K) temporary
            drawn[i] = (u[i][:, None] >= cum).sum(axis=1)
        idx = (np.arange(b)[:, None] * k + drawn) * k + cell
        out[start:start + b] = np.bincount(idx.ravel(), minlength=b * k * k).reshape(b, k, k)
    return out


class MetricInterval(Estimate):
    """One estimated metric with its 95 % interval and the two SE parts."""

    se: float
    se_outcome: float
    se_model: float
    centre: float
    """The interval's centre: the mean realized metric over the draws (module docstring)."""


class MetricIntervals(Result):
    """Every estimated metric's interval: ``levels[level][metric]``."""

    levels: dict[str, dict[str, MetricInterval]]
    n_draws: int
    seed: int
    model_error: str
    """Where SE_model came from: "held-out folds", "pooled held-out gap" or "none"."""

    def ci95(self, level: str = "original") -> dict[str, list[float]]:
        """``{metric: [low, high]}`` of one level (the JSON's ``estimated_ci95`` for the
        original level)."""
        return {m: list(iv.ci95) for m, iv in self.levels.get(level, {}).items()}


class MetricComparisonRow(Result):
    """One metric of one level: its ALP estimate with its 95 % interval, written flat as
    ``ci_low``/``ci_high`` after ``estimated``, and its realized value when the wave has its
    scores (the key absent otherwise)."""

    level: str
    metric: str
    estimated: float | None
    interval: Estimate | None = Field(default=None, exclude=True)
    realized: float | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="before")
    @classmethod
    def _interval_from_json(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("ci_low") is not None:
            value = data.get("estimated")
            data = {**data, "interval": {"value": math.nan if value is None else value,
                                         "ci95": (data["ci_low"], data["ci_high"])}}
        return data

    @model_serializer(mode="wrap")
    def _interval_flat(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        head = {k: out.pop(k) for k in ("level", "metric", "estimated")}
        if self.interval is not None:
            head.update(ci_low=self.interval.ci95[0], ci_high=self.interval.ci95[1])
        return {**head, **out}


def effective_draws(n: int, n_draws: int = INTERVAL_DRAWS) -> int:
    """The draws an interval of ``n`` respondents gets: ``n_draws`` within the label budget
    (:data:`LABEL_BUDGET`), never fewer than :data:`MIN_DRAWS` (nor more than asked).

    >>> effective_draws(1_200), effective_draws(20_000), effective_draws(1_000_000)
    (400, 200, 100)
    """
    return min(n_draws, max(MIN_DRAWS, LABEL_BUDGET // max(n, 1)))


def _outcome_draws(proba: np.ndarray, pred_idx: np.ndarray, resolved_plan, n_draws: int,
                   seed: int) -> dict[str, dict[str, tuple[float, float]]]:
    """``{level: {metric: (mean, SD) of the realized metric over the draws}}``."""
    draws = stacked_level_metrics(draw_realized_matrices(proba, pred_idx, n_draws=n_draws,
                                                         seed=seed), resolved_plan)
    return {lv: {m: (float(v.mean()), float(v.std(ddof=1)) if n_draws > 1 else 0.0)
                 for m, v in ms.items()} for lv, ms in draws.items()}


def _outcome_delta(proba: np.ndarray, pred_idx: np.ndarray, resolved_plan,
                   ) -> dict[str, dict[str, tuple[float, float]]]:
    """``{level: {metric: (ALP value, delta-method SD of the realized metric)}}``:
    Var g(C) ≈ Σ_i [Σ_m p̂_im·G_mŷ_i² − (Σ_m p̂_im·G_mŷ_i)²], G = ∂g/∂C at the ALP matrix by
    central differences of :func:`stacked_level_metrics` over all K² cells in one stack."""
    p = np.asarray(proba, dtype=float)
    n, k = p.shape
    pred = np.asarray(pred_idx, dtype=np.int64)
    onehot = np.zeros((n, k))
    onehot[np.arange(n), pred] = 1.0
    alp = p.T @ onehot  # E[C]: rows actual, columns predicted
    # second moments per predicted column: S[c] = Σ_{i: ŷ_i = c} p̂_i p̂_iᵀ
    second = np.zeros((k, k, k))
    for c in np.unique(pred):  # one product per predicted class (not per respondent)
        rows = p[pred == c]
        second[c] = rows.T @ rows
    steps = np.eye(k * k).reshape(k * k, k, k) * DELTA_STEP
    stack = np.concatenate([alp[None], alp[None] + steps, alp[None] - steps])
    values = stacked_level_metrics(stack, resolved_plan)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for level, metrics in values.items():
        row = {}
        for m, v in metrics.items():
            grad = ((v[1:1 + k * k] - v[1 + k * k:]) / (2 * DELTA_STEP)).reshape(k, k)
            # Σ_c [Σ_m A_mc·G_mc² − G_·cᵀ S_c G_·c]
            var = float(np.sum(alp * grad**2) - np.einsum("mc,cml,lc->", grad, second, grad))
            row[m] = (float(v[0]), math.sqrt(max(var, 0.0)))
        out[level] = row
    return out


def _outcome_stats(proba: np.ndarray, pred_idx: np.ndarray, resolved_plan, method: str,
                   n_draws: int, seed: int) -> dict[str, dict[str, tuple[float, float]]]:
    if method == "delta":
        return _outcome_delta(proba, pred_idx, resolved_plan)
    if method != "bootstrap":
        raise ValueError(f"interval method {method!r}: one of {list(INTERVAL_METHODS)}")
    return _outcome_draws(proba, pred_idx, resolved_plan, n_draws, seed)


def metric_intervals(proba: np.ndarray, estimates: Mapping[str, Mapping[str, float]], *,
                     y_pred_idx: np.ndarray | None = None,
                     resolved_plan: ResolvedPlan | None = None,
                     model_error: Mapping[str, Mapping[str, float]] | None = None,
                     model_error_source: str | None = None,
                     n_draws: int = INTERVAL_DRAWS, seed: int = 0,
                     method: str = "bootstrap") -> MetricIntervals:
    """Intervals of the ALP ``estimates`` ``{level: {metric: value}}`` (module docstring);
    ``model_error``: SE_model per level and metric, missing entries 0; ``method="delta"``
    draws nothing (``n_draws`` of the result is 0).

    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]] * 50)
    >>> iv = metric_intervals(p, {"original": {"accuracy": 0.75}}, n_draws=200)
    >>> a = iv.levels["original"]["accuracy"]
    >>> round(a.se_outcome, 2), a.ci95[0] < 0.75 < a.ci95[1]
    (0.03, True)
    """
    p = np.asarray(proba, dtype=float)
    pred = p.argmax(axis=1) if y_pred_idx is None else np.asarray(y_pred_idx, dtype=np.int64)
    n_draws = 0 if method == "delta" else effective_draws(len(p), n_draws)
    stats = _outcome_stats(p, pred, resolved_plan, method, n_draws, seed)
    source = model_error_source or ("none" if model_error is None else "given")
    return _intervals(estimates, stats, model_error, source, n_draws, seed)


def _intervals(estimates: Mapping[str, Mapping[str, float]],
               stats: Mapping[str, Mapping[str, tuple[float, float]]],
               model_error: Mapping[str, Mapping[str, float]] | None, source: str,
               n_draws: int, seed: int) -> MetricIntervals:
    errors = model_error or {}
    levels: dict[str, dict[str, MetricInterval]] = {}
    for level, metrics in estimates.items():
        row = {}
        for metric, value in metrics.items():
            if value is None or metric not in stats.get(level, {}):
                continue
            centre, so = stats[level][metric]
            sm = float(errors.get(level, {}).get(metric, 0.0))
            se = math.hypot(so, sm)
            row[metric] = MetricInterval(value=float(value), ci95=(max(0.0, centre - Z95 * se),
                                                                   min(1.0, centre + Z95 * se)),
                                         se=se, se_outcome=so, se_model=sm, centre=centre)
        levels[level] = row
    return MetricIntervals(levels=levels, n_draws=n_draws, seed=seed, model_error=source)


def heldout_metric_errors(y_true_idx: np.ndarray, proba: np.ndarray, fold: np.ndarray, *,
                          y_pred_idx: np.ndarray | None = None,
                          resolved_plan: ResolvedPlan | None = None, n_draws: int = 200,
                          seed: int = 0, method: str = "bootstrap",
                          ) -> dict[str, dict[str, float]]:
    """SE_model ``{level: {metric: SE}}`` of every wave metric from out-of-fold
    probabilities: √max(ê², V̂), ê the pooled error of the centre, V̂ its sampling variance."""
    p = np.asarray(proba, dtype=float)
    y = np.asarray(y_true_idx, dtype=np.int64)
    k = p.shape[1]
    pred = p.argmax(axis=1) if y_pred_idx is None else np.asarray(y_pred_idx, dtype=np.int64)
    parts: dict[tuple[str, str], list[tuple[int, float, float]]] = {}  # per fold
    for i, f in enumerate(np.unique(fold)):
        rows = np.asarray(fold) == f
        real = np.bincount(y[rows] * k + pred[rows], minlength=k * k).reshape(1, k, k)
        rea = stacked_level_metrics(real, resolved_plan)
        stats = _outcome_stats(p[rows], pred[rows], resolved_plan, method,
                               effective_draws(int(rows.sum()), n_draws), seed + i)
        for level, metrics in stats.items():
            for m, (centre, sd) in metrics.items():
                # the error of the interval's centre on this fold, and its answers' variance
                parts.setdefault((level, m), []).append(
                    (int(rows.sum()), centre - float(rea[level][m][0]), sd * sd))
    out: dict[str, dict[str, float]] = {}
    for (level, m), per_fold in parts.items():
        n, errors, variances = np.array(per_fold, dtype=float).T
        error = float(np.sum(n * errors) / n.sum())
        variance = float(np.sum(n**2 * variances) / n.sum() ** 2)
        out.setdefault(level, {})[m] = math.sqrt(max(error * error, variance))
    return out


def errors_from_pooled_gaps(gaps: Mapping[str, Mapping[str, float]], outcome_sd: Mapping[
        str, Mapping[str, float]], n_wave: int, n_heldout: int) -> dict[str, dict[str, float]]:
    """SE_model from pooled held-out gaps ``{level: {metric: ALP − realized}}`` over
    ``n_heldout`` rows: √max(g², SE_outcome²·n_wave/n_heldout) (module docstring), for every
    metric of ``outcome_sd``. A metric whose gap was not kept (model files keep the macro
    metrics' gaps only, not the 2×2+IM level's TPR, TNR, PPV and F1) gets the check's noise
    alone, as if its gap were 0."""
    out: dict[str, dict[str, float]] = {}
    scale = n_wave / max(n_heldout, 1)
    for level, metrics in outcome_sd.items():
        for m, noise in metrics.items():
            g = gaps.get(level, {}).get(m) or 0.0
            out.setdefault(level, {})[m] = math.sqrt(max(g * g, noise * noise * scale))
    return out


def wave_metric_intervals(proba: np.ndarray, pred_idx: np.ndarray,
                          estimates: Mapping[str, Mapping[str, float]],
                          resolved_plan: ResolvedPlan | None, cv: HeldOutFigures, *,
                          n_draws: int = INTERVAL_DRAWS, seed: int = 0) -> MetricIntervals:
    """:func:`metric_intervals` of a wave scored by a saved model, SE_model from the model's
    cross-validation metadata ``cv``: its pooled held-out ALP-vs-CM gaps
    (``alp_vs_cm["heldout"]``) when the file has them, else none."""
    n_draws = effective_draws(len(pred_idx), n_draws)
    stats = _outcome_draws(np.asarray(proba, dtype=float), pred_idx, resolved_plan, n_draws,
                           seed)
    sd = {lv: {m: v[1] for m, v in ms.items()} for lv, ms in stats.items()}
    heldout = cv.alp_vs_cm.get("heldout", {})
    gaps = {lv: {m: row["gap"] for m, row in ms.items()} for lv, ms in heldout.items()}
    if not gaps or not cv.n:
        return _intervals(estimates, stats, None, "none", n_draws, seed)
    errors = errors_from_pooled_gaps(gaps, sd, len(pred_idx), int(cv.n))
    return _intervals(estimates, stats, errors, "pooled held-out gap", n_draws, seed)


def level_values(levels: Sequence) -> dict[str, dict[str, float]]:
    """``{level name: {metric: value}}`` of the wave metrics of engine levels."""
    return {lv.name: {m: float(lv.metrics[m]) for m in WAVE_SUMMARY if m in lv.metrics}
            for lv in levels}
