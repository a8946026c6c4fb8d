"""ALP estimates from any model's class probabilities: :func:`estimate_from_probabilities`.

CBPE's inputs (a labelled reference, an unlabelled analysis set) in, what ``cx-app estimate
--json`` gives out, overall and per chunk (docs/alp.md, "Any model's probabilities"); held-out
reference folds choose the calibration and give the intervals' model error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import Field, PlainSerializer, computed_field

from cx_app.engine.catalogue import MACRO_SUMMARY
from cx_app.errors import AnalysisError
from cx_app.estimate.alerts import (
    Alert,
    AlertThresholds,
    ReferenceBand,
    estimate_alerts,
)
from cx_app.estimate.alp import _check_proba, alp_confusion_matrix, net_outcome
from cx_app.estimate.calibration import (
    CALIBRATION_METHODS,
    CalibrationChoice,
    calibration_report,
    choose_calibration,
)
from cx_app.estimate.metric_intervals import (
    MetricIntervals,
    heldout_metric_errors,
    level_values,
    metric_intervals,
)
from cx_app.estimate.new_wave import (
    EstimatedNetScore,
    estimated_net_score,
    heldout_net_score_error,
)
from cx_app.models.crossval import class_positions
from cx_app.result import Array, Result, flattened

if TYPE_CHECKING:
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.survey.nps import NetScoreGroups

__all__ = ["AUTO_CALIBRATIONS", "CALIBRATION_FOLDS", "ChunkEstimate", "ProbabilityEstimate",
           "calibrate_probabilities", "default_groups", "estimate_from_probabilities"]

CALIBRATION_FOLDS = 5
"""Held-out folds of the reference for choosing the calibration and measuring the model error."""
AUTO_CALIBRATIONS: tuple[str, ...] = ("none", "temperature", "isotonic")
"""The methods ``calibration="auto"`` compares. Sigmoid is left out (it can still be asked
for): Platt's sigmoid is meant for scores, not probabilities — on calibrated 11-class
probabilities it left a mean error of 0.063 per class where temperature left 0.003 and
isotonic 0.025 — and scikit-learn's one-vs-rest fit took 1.9 s for 3,000 rows, against 0.06 s
for temperature."""
INTERVAL_METHOD = "delta"
"""The metrics' SE_outcome here and on the held-out folds: the delta method's closed form
(:mod:`cx_app.estimate.metric_intervals`; equal to 2,000 bootstrap draws within their Monte
Carlo error, and ~50× faster on 6,000 rows)."""
REFERENCE_CHUNKS = 10
"""Without analysis chunks, the reference is cut into this many chunks for the alert bands."""


_LOG_EPS = 1e-12
"""scikit-learn's ``_convert_to_logits`` default: logits of probabilities are log(p + 1e-12)."""


def calibrate_probabilities(method: str, reference_proba: np.ndarray, reference_idx: np.ndarray,
                            proba: np.ndarray) -> np.ndarray:
    """``proba`` recalibrated by ``method`` fitted on the reference (class positions
    ``reference_idx``): what ``CalibratedClassifierCV`` fits around a frozen classifier, without
    its wrapper (the tests check the two agree); one-vs-rest methods are renormalised (a row
    of calibrated zeros: uniform)."""
    if method == "none":
        return np.asarray(proba, dtype=float)
    if method not in CALIBRATION_METHODS:
        raise AnalysisError(f"unknown calibration {method!r}: one of {list(CALIBRATION_METHODS)} "
                            "or 'auto'")
    from sklearn.calibration import _SigmoidCalibration, _TemperatureScaling
    from sklearn.isotonic import IsotonicRegression

    ref = np.asarray(reference_proba, dtype=float)
    new = np.asarray(proba, dtype=float)
    y = np.asarray(reference_idx, dtype=np.int64)
    k = ref.shape[1]
    if method == "temperature":
        if k == 2:  # as scikit-learn builds the two logits from the positive class's column
            ref, new = (np.column_stack([1 - m[:, 1], m[:, 1]]) for m in (ref, new))
        # scikit-learn's own conversion, log(p + 1e-12), done once here: given logits, its
        # calibrator skips re-checking that every row is a probability vector
        ref, new = (np.log(m + _LOG_EPS) for m in (ref, new))
        out = _TemperatureScaling().fit(ref, y).predict(new)
    else:
        out = np.zeros((len(new), k))
        for c in ([1] if k == 2 else range(k)):  # one calibrator per class (K, not per row)
            calibrator = (IsotonicRegression(out_of_bounds="clip") if method == "isotonic"
                          else _SigmoidCalibration())
            out[:, c] = calibrator.fit(ref[:, c], (y == c).astype(float)).predict(new[:, c])
        if k == 2:
            out[:, 0] = 1.0 - out[:, 1]
        else:
            total = out.sum(axis=1, keepdims=True)
            out = np.divide(out, total, out=np.full_like(out, 1.0 / k), where=total != 0)
    out[(out > 1.0) & (out <= 1.0 + 1e-5)] = 1.0
    return out


def default_groups(classes: Sequence) -> NetScoreGroups:
    """NPS groups for the classes 0..10; otherwise top box (the last class) minus bottom box
    (the first), in the order ``classes`` are given, with neutral names."""
    from cx_app.survey.nps import NPS_GROUPS, NetScoreGroups

    if tuple(classes) == tuple(range(11)):
        return NPS_GROUPS
    if len(classes) < 2:
        raise AnalysisError("a net score needs at least two classes")
    return NetScoreGroups(tuple(classes), frozenset({classes[-1]}), frozenset({classes[0]}),
                          positive_name="high", neutral_name="middle", negative_name="low")


class ChunkEstimate(Result):
    """The estimates of one chunk of the analysis rows (or of all of them)."""

    chunk: str
    n: int
    estimated: dict[str, float]
    intervals: MetricIntervals = Field(alias="metric_intervals")
    class_counts: dict[str, float] = Field(alias="estimated_class_counts")
    net_score: EstimatedNetScore = Field(alias="estimated_nps")
    alerts: tuple[Alert, ...]

    @computed_field
    @property
    def estimated_ci95(self) -> dict[str, list[float]]:
        return self.intervals.ci95()

    @computed_field
    @property
    def estimated_class_shares(self) -> dict[str, float]:
        return {c: v / self.n for c, v in self.class_counts.items()}


class ProbabilityEstimate(Result):
    """What :func:`estimate_from_probabilities` returns: the estimate of all analysis rows
    (``overall``), one per chunk (``chunks``, empty without ``chunks=``), the calibration
    choice and the alert bands."""

    classes: tuple
    calibration: CalibrationChoice
    overall: ChunkEstimate
    """Written flat: the keys of ``cx-app estimate --json`` (``estimated``, ``estimated_ci95``,
    ``estimated_class_counts``, ``estimated_nps``, ``alerts``…) for all rows, beside
    ``classes``, ``calibration``, ``alert_bands`` and ``chunks`` (one such dict each)."""
    chunks: tuple[ChunkEstimate, ...]
    bands: dict[str, Annotated[ReferenceBand, PlainSerializer(lambda b: {
        "mean": b.mean, "unit_sd": b.unit_sd, "basis": b.basis})]] = Field(alias="alert_bands")
    calibrated_proba: Array = Field(exclude=True)
    """The analysis probabilities after calibration (what the ALP matrix is built from)."""

    flat_json = flattened("overall")


def _chunk_labels(chunks: int | Sequence | np.ndarray | None, n: int) -> np.ndarray | None:
    if chunks is None:
        return None
    if isinstance(chunks, int | np.integer):
        if chunks < 1:
            raise AnalysisError(f"chunk size must be at least 1, got {chunks}")
        return (np.arange(n) // int(chunks)).astype(object)
    labels = np.asarray(chunks, dtype=object)
    if labels.shape != (n,):
        raise AnalysisError(f"{len(labels)} chunk labels for {n} analysis rows")
    return labels


def _reference_bands(y_idx: np.ndarray, pred_idx: np.ndarray, groups: NetScoreGroups,
                     classes: Sequence, chunk_size: int) -> dict[str, ReferenceBand]:
    n = len(y_idx)
    size = max(1, min(chunk_size, n // 2))
    correct = (y_idx == pred_idx).astype(float)
    score = net_outcome(np.asarray(classes, dtype=object)[y_idx], groups)
    parts = [np.arange(s, min(s + size, n)) for s in range(0, n - size + 1, size)]
    sizes = [len(p) for p in parts]
    acc = float(correct.mean())
    pos, neg = float((score > 0).mean()), float((score < 0).mean())
    return {
        "accuracy": ReferenceBand.from_chunks(
            "accuracy", [correct[p].mean() for p in parts], sizes,
            unit_sd_floor=float(np.sqrt(acc * (1 - acc)))),
        "net_score": ReferenceBand.from_chunks(
            "net_score", [100 * score[p].mean() for p in parts], sizes,
            unit_sd_floor=100 * float(np.sqrt(max(pos + neg - (pos - neg) ** 2, 0.0)))),
    }


def estimate_from_probabilities(
    reference_proba: Any, reference_y: Sequence, analysis_proba: Any, *, classes: Sequence,
    calibration: str = "auto", chunks: int | Sequence | None = None,
    groups: NetScoreGroups | None = None, resolved_plan: ResolvedPlan | None = None,
    thresholds: AlertThresholds | None = None, seed: int = 0,
) -> ProbabilityEstimate:
    """ALP estimates of unlabelled rows from any model's probabilities (module docstring).

    ``reference_proba`` (n_ref × K, rows the model did not train on) and ``analysis_proba``
    (n × K): columns in the order of ``classes``. ``chunks``: None (all rows at once), a chunk
    size (consecutive rows, the last chunk holding the remainder) or one chunk label per
    analysis row (chunks in order of first appearance). ``thresholds`` default to the
    reference's 3-sigma bands.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.dirichlet([2, 2, 2], size=600)
    >>> ref_y = np.array([rng.choice(3, p=p) for p in ref])   # calibrated by construction
    >>> new = rng.dirichlet([4, 2, 1], size=300)
    >>> est = estimate_from_probabilities(ref, ref_y, new, classes=[0, 1, 2],
    ...                                   calibration="none", chunks=100)
    >>> bool(abs(est.overall.estimated["accuracy"] - new.max(axis=1).mean()) < 1e-12)
    True
    >>> doc = est.to_dict()
    >>> sorted(doc["estimated_ci95"]) == sorted(doc["estimated"])
    True
    >>> [c["n"] for c in doc["chunks"]]
    [100, 100, 100]
    """
    from joblib import Parallel, delayed
    from sklearn.model_selection import KFold

    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.engine.levels import reduce_confusion

    classes = tuple(classes)
    ref = _check_proba(reference_proba, classes)
    new = _check_proba(analysis_proba, classes)
    if len(reference_y) != len(ref):
        raise AnalysisError(f"{len(reference_y)} reference labels for {len(ref)} rows of "
                            "reference probabilities")
    y_idx = class_positions(reference_y, classes, "reference label")
    class_array = np.asarray(classes)
    if class_array.dtype.kind not in "iu":  # strings, mixed: compared as Python objects
        class_array = np.asarray(classes, dtype=object)
    y_labels = class_array[y_idx]  # integer classes stay a numeric array (fast lookups)
    if len(ref) < 2 * CALIBRATION_FOLDS:
        raise AnalysisError(f"the reference needs at least {2 * CALIBRATION_FOLDS} labelled "
                            f"rows, got {len(ref)}")
    groups = groups or default_groups(classes)
    kind = "nps" if tuple(classes) == tuple(range(11)) else "net"
    resolved = resolved_plan or ResolvedPlan(classes, ())  # the original level only
    methods = AUTO_CALIBRATIONS if calibration == "auto" else (calibration,)
    fold = np.empty(len(ref), dtype=int)
    for f, (_, test) in enumerate(KFold(CALIBRATION_FOLDS, shuffle=True,
                                        random_state=seed).split(ref)):
        fold[test] = f
    # every (method, fold) fit at once in threads: scikit-learn's loss and isotonic fits run
    # in compiled code that releases the GIL; results do not depend on the order
    fits = [(m, f) for m in methods if m != "none" for f in range(CALIBRATION_FOLDS)]
    fitted = Parallel(n_jobs=min(len(fits), os.cpu_count() or 1) or 1, prefer="threads")(
        delayed(calibrate_probabilities)(m, ref[fold != f], y_idx[fold != f], ref[fold == f])
        for m, f in fits)
    heldout, reports = {}, []
    for method in methods:
        oof = ref.copy()
        for (m, f), part in zip(fits, fitted, strict=True):
            if m == method:
                oof[fold == f] = part
        heldout[method] = oof
        reports.append(calibration_report(method, y_labels, oof, classes, groups=groups))
    choice = choose_calibration(reports, algorithm_name="the given probabilities")
    ref_pred = ref.argmax(axis=1)
    oof = heldout[choice.chosen]
    errors = heldout_metric_errors(y_idx, oof, fold, y_pred_idx=ref_pred,
                                   resolved_plan=resolved, seed=seed, method=INTERVAL_METHOD)
    net_se = heldout_net_score_error(y_labels, oof, fold, classes, groups).model_se
    calibrated = calibrate_probabilities(choice.chosen, ref, y_idx, new)
    pred = new.argmax(axis=1)

    labels = _chunk_labels(chunks, len(new))
    order = [] if labels is None else list(dict.fromkeys(labels.tolist()))
    sizes = [int((labels == c).sum()) for c in order] if order else [len(new)]
    chunk_size = (int(chunks) if isinstance(chunks, int | np.integer)
                  else int(np.median(sizes)) if order else len(ref) // REFERENCE_CHUNKS)
    bands = _reference_bands(y_idx, ref_pred, groups, classes, chunk_size)

    def rows(label: str, mask: np.ndarray | slice) -> ChunkEstimate:
        proba, pred_idx = calibrated[mask], pred[mask]
        levels = reduce_confusion(alp_confusion_matrix(
            proba, classes, np.asarray(classes, dtype=object)[pred_idx]), resolved)
        estimated = {k: float(levels[0].metrics[k]) for k in MACRO_SUMMARY}
        intervals = metric_intervals(proba, level_values(levels), y_pred_idx=pred_idx,
                                     resolved_plan=resolved, model_error=errors,
                                     model_error_source="held-out folds", seed=seed,
                                     method=INTERVAL_METHOD)
        net = estimated_net_score(proba, classes, groups, kind=kind, model_se=net_se)
        counts = {str(c): float(v) for c, v in zip(classes, proba.sum(axis=0), strict=True)}
        alerts = estimate_alerts(estimated["accuracy"], net.value, len(proba), bands, thresholds)
        return ChunkEstimate(chunk=label, n=len(proba), estimated=estimated, intervals=intervals,
                             class_counts=counts, net_score=net, alerts=alerts)

    overall = rows("all", slice(None))
    per_chunk = tuple(rows(str(c), labels == c) for c in order)
    return ProbabilityEstimate(classes=classes, calibration=choice, overall=overall,
                               chunks=per_chunk, bands=bands, calibrated_proba=calibrated)
