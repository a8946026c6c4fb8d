"""Cross-validation, once per model: out-of-fold predictions and class probabilities.

Every matrix, reduction, ROC, t-test and ALP view is computed from the cached
:class:`CrossValResult`. Conventions:

- Folds (:func:`assign_folds`: stratified k-fold shuffled with ``seed``) are the same for every
  model given ``y``, ``folds`` and ``seed``, which the paired t-tests need.
- Estimators are fitted on class *positions* (0..K−1), so ordinal models see the scale order
  and XGBoost gets integer labels; ``models[f].classes_`` are positions.
- ``proba[:, k]`` is the probability of ``classes[k]`` (0 for a class absent from the training
  fold). ``y_pred`` is ``classes[argmax(proba)]`` (ties to the first class), not the
  estimator's ``predict``, so that the ALP identity ŷ = argmax p̂ holds for every model.
- A class with fewer members than folds is merged, for fold *assignment only*, into its
  smaller neighbour in ``classes`` order (with a warning); with fewer than two strata left,
  folds are plain shuffled k-fold.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import joblib
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold

from cx_app.errors import AnalysisError
from cx_app.json_values import plain
from cx_app.models import cluster
from cx_app.models.algorithms import (
    RareSafeCalibrated,
    get_algorithm,
    resolve_preset,
)
from cx_app.models.results import CrossValidationSummary
from cx_app.models.timing import COSTS, expected_phases
from cx_app.models.weighting import fit_weighted, unweighted_reason
from cx_app.provenance import library_versions

Calibration = Literal["none", "sigmoid", "isotonic", "temperature"]
Progress = Callable[[int, int, str], None]
CALIBRATIONS: tuple[str, ...] = ("none", "sigmoid", "isotonic", "temperature")


@dataclass(frozen=True, eq=False)
class FoldAssignment:
    """Fold index per respondent, how it was made, and any warnings about rare classes."""

    fold: np.ndarray
    folds: int
    seed: int
    method: str  # "stratified", "stratified (rare classes merged)" or "kfold"
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class TrainFoldPredictions:
    """In-fold (training-set) predictions of one fold's model: rows ``index`` of the data."""

    fold: int
    index: np.ndarray
    y_pred: np.ndarray
    proba: np.ndarray


class FoldModelFile:
    """A fold model kept on disk (``joblib.dump``): a local run holds none in memory (a 10-fold
    random forest is about 1 GB); the folder goes when no result refers to its files."""

    def __init__(self, path: str, folder: Any = None) -> None:
        self.path, self._folder = path, folder

    def __reduce__(self) -> tuple:  # a task gets the path, not the folder's owner
        return FoldModelFile, (self.path,)

    def __getattr__(self, name: str) -> Any:  # m.predict_proba(X): read, used, let go
        if name.startswith("__") or name in ("path", "_folder"):
            raise AttributeError(name)
        return getattr(joblib.load(self.path), name)


class _ModelFolder:
    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="cx-app-folds-")
        weakref.finalize(self, shutil.rmtree, self.path, True)


def load_fold_model(model: Any) -> Any:
    """The fitted fold model of ``CrossValResult.models[f]`` (read from disk when kept there)."""
    return joblib.load(model.path) if isinstance(model, FoldModelFile) else model


@dataclass(frozen=True, eq=False)
class CrossValResult:
    """Out-of-fold predictions of one algorithm; everything else is derived from these."""

    y_true: np.ndarray
    y_pred: np.ndarray
    proba: np.ndarray
    fold: np.ndarray
    classes: tuple
    algorithm_id: str
    settings: Mapping[str, Any]
    calibration: str
    folds: int
    seed: int
    fit_seconds: float
    fold_fit_seconds: tuple[float, ...]
    warnings: tuple[str, ...] = ()
    feature_names: tuple[str, ...] = ()
    fold_method: str = "stratified"
    models: tuple[Any, ...] | None = field(default=None, repr=False)
    """The fold models (``keep_models``): pipelines or :class:`FoldModelFile`."""
    train_predictions: tuple[TrainFoldPredictions, ...] | None = field(default=None, repr=False)
    provenance: Mapping[str, str] = field(default_factory=dict)
    missing_policy: str = "impute_indicator"
    """How the pipelines filled unanswered attribute scores (``gap_filler``)."""
    preset: str = "papers"
    weighted: bool | None = None
    """Whether the folds were trained with the survey weights; None: no weights were given."""
    unweighted_reason: str | None = None

    @property
    def n(self) -> int:
        return len(self.y_true)

    def class_positions(self, labels: np.ndarray | None = None) -> np.ndarray:
        """Positions in ``classes`` of ``labels`` (default ``y_true``): what models were fit on."""
        return class_positions(self.y_true if labels is None else labels, self.classes)

    def summary(self) -> CrossValidationSummary:
        """The provenance of these predictions (no arrays), as ``results.json`` keeps it."""
        return CrossValidationSummary(
            algorithm=self.algorithm_id, preset=self.preset,
            settings={k: list(v) if isinstance(v, tuple) else plain(v)
                      for k, v in self.settings.items()},
            calibration=self.calibration, missing_policy=self.missing_policy, folds=self.folds,
            seed=self.seed, fold_method=self.fold_method, fit_seconds=round(self.fit_seconds, 4),
            fold_fit_seconds=[round(s, 4) for s in self.fold_fit_seconds],
            warnings=list(self.warnings), provenance=dict(self.provenance),
            weighted=self.weighted, unweighted_reason=self.unweighted_reason)


def class_positions(labels: Sequence | np.ndarray, classes: Sequence, what: str = "score") -> np.ndarray:
    """The position of each label in ``classes`` (labels compared as plain Python values, so
    1, 1.0 and numpy's 1 are the same class); AnalysisError naming the first label that is no
    class and its row. Vectorised: the distinct labels are looked up once (``pandas.factorize``)."""
    position = {c: i for i, c in enumerate(classes)}
    values = labels if isinstance(labels, np.ndarray) else np.asarray(list(labels), dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    lookup = np.empty(len(uniques), dtype=int)
    for j, lab in enumerate(uniques):
        key = plain(lab)
        if key not in position:
            i = int(np.flatnonzero(codes == j)[0])
            raise AnalysisError(f"{what} {key!r} (row {i}) is not one of the classes {list(classes)}")
        lookup[j] = position[key]
    return lookup[codes]


def assign_folds(
    y: Sequence | np.ndarray, folds: int = 10, seed: int = 0, *, names: Sequence | None = None
) -> FoldAssignment:
    """Stratified k-fold assignment (module docstring); ``names[y]``: the label warnings show."""

    def show(value: Any) -> Any:
        return names[int(value)] if names is not None else value

    y = np.asarray(y)
    n = len(y)
    if folds < 2:
        raise AnalysisError(f"cross-validation needs at least 2 folds, got {folds}")
    if n < folds:
        raise AnalysisError(f"{n} respondents are too few for {folds}-fold cross-validation")
    labels, strata, counts = np.unique(y, return_inverse=True, return_counts=True)
    notes: list[str] = []
    groups = [[i] for i in range(len(labels))]  # strata as lists of label indices, in order
    sizes = [int(c) for c in counts]
    while len(groups) > 1 and min(sizes) < folds:
        i = int(np.argmin(sizes))
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(groups)]
        j = min(neighbours, key=lambda k: (sizes[k], k))
        lo, hi = sorted((i, j))
        groups[lo : hi + 1] = [groups[lo] + groups[hi]]
        sizes[lo : hi + 1] = [sizes[lo] + sizes[hi]]
    rare = [k for k in range(len(labels)) if counts[k] < folds]
    for k in rare:
        partners = next(g for g in groups if k in g)
        others = [show(labels[m].item()) for m in partners if m != k]
        notes.append(
            f"class {show(labels[k].item())!r} has {counts[k]} respondent(s), fewer than the {folds} folds: "
            + (
                f"for fold assignment it was stratified together with class(es) {others}; "
                if others
                else ""
            )
            + "some test folds have none of it and some training folds may lack it "
            "(its probability is 0 there)"
        )
    if len(groups) < 2:
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
        split, method = splitter.split(np.zeros(n)), "kfold"
        if len(labels) > 1:
            notes.append("too few respondents per class to stratify: plain shuffled k-fold used")
    else:
        merged = np.empty(len(labels), dtype=np.intp)
        for g, members in enumerate(groups):
            merged[members] = g
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        split = splitter.split(np.zeros(n), merged[strata])
        method = "stratified (rare classes merged)" if rare else "stratified"
    fold = np.empty(n, dtype=np.intp)
    for f, (_, test) in enumerate(split):
        fold[test] = f
    return FoldAssignment(fold=fold, folds=folds, seed=seed, method=method, warnings=tuple(notes))


def make_folds(y: Sequence | np.ndarray, folds: int = 10, seed: int = 0) -> np.ndarray:
    """Fold index (0..folds−1) per respondent; the same for every model given y, folds, seed."""
    return assign_folds(y, folds, seed).fold


def aligned_proba(model: Any, X: Any, classes: Sequence) -> np.ndarray:
    """``model.predict_proba(X)`` with one column per class of ``classes`` in that order (0 for
    a class the model never saw); a model fitted on class positions takes ``range(K)``.

    >>> from sklearn.dummy import DummyClassifier
    >>> m = DummyClassifier(strategy="prior").fit([[0], [1], [2], [3]], ["a", "c", "c", "c"])
    >>> aligned_proba(m, [[0]], ["a", "b", "c"]).tolist()
    [[0.25, 0.0, 0.75]]
    """
    raw = np.asarray(model.predict_proba(X), dtype=float)
    out = np.zeros((raw.shape[0], len(classes)))
    position = {c: i for i, c in enumerate(classes)}
    for j, c in enumerate(model.classes_):
        key = c.item() if isinstance(c, np.generic) else c
        if key not in position:
            raise AnalysisError(f"the model predicts class {key!r}, not one of {list(classes)}")
        out[:, position[key]] = raw[:, j]
    return out


def build_model(
    algorithm_id: str,
    settings: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    calibration: str = "none",
    calibration_folds: int = 3,
    missing_policy: str = "impute_indicator",
    preset: str | None = None,
    threads: int | None = None,
) -> Any:
    """The unfitted estimator cross-validation fits in each fold (optionally calibrated);
    ``preset`` and ``threads`` as in :meth:`~cx_app.models.algorithms.AlgorithmSpec.build`."""
    if calibration not in CALIBRATIONS:
        raise AnalysisError(f"unknown calibration '{calibration}'; choose from {CALIBRATIONS}")
    model = get_algorithm(algorithm_id, preset).build(seed, missing_policy=missing_policy,
                                                      threads=threads, **dict(settings or {}))
    if calibration != "none":
        model = RareSafeCalibrated(model, method=calibration, cv=calibration_folds, ensemble=False)
    return model


def _fit_fold(template, X, codes, fold, f, n_classes, keep_train, keep_model,
              sample_weight=None):
    # keep_model: False, True (return the model) or a file to dump it into (FoldModelFile)
    # the fold's rows are found here, in the task, from the shared fold index (see cluster)
    train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, _ = fit_weighted(clone(template), X[train], codes[train],
                                None if sample_weight is None else sample_weight[train])
        proba = aligned_proba(model, X[test], range(n_classes))
        train_proba = aligned_proba(model, X[train], range(n_classes)) if keep_train else None
    seconds = time.perf_counter() - start
    messages = sorted({_warning_text(w) for w in caught})
    dropped = getattr(model, "dropped_classes_", ())
    if isinstance(keep_model, str):
        joblib.dump(model, keep_model)
        model = FoldModelFile(keep_model)
    return proba, train_proba, seconds, (model if keep_model else None), messages, dropped


def _warning_text(caught: warnings.WarningMessage) -> str:
    """A fold's warning as the pages and the CLI show it: scikit-learn's convergence warning
    in words, with its first line (the rest is advice on scaling and links); any other as
    "Category: message"."""
    if issubclass(caught.category, ConvergenceWarning):
        first = (str(caught.message).strip().splitlines() or [""])[0]
        return ("the fit stopped at its iteration limit before it settled, so this fold's "
                "model may fit a little less well than it could; a higher limit (max_iter, "
                f"in the Models page's settings) lets it finish (scikit-learn: {first})")
    return f"{caught.category.__name__}: {caught.message}"


def _plan_folds(
    X: Any,
    y: Sequence | np.ndarray,
    classes: Sequence,
    algorithm_id: str,
    *,
    folds: int = 10,
    seed: int = 0,
    settings: Mapping[str, Any] | None = None,
    calibration: Calibration = "none",
    calibration_folds: int = 3,
    keep_models: bool = False,
    keep_train_proba: bool = False,
    fold: np.ndarray | None = None,
    missing_policy: str = "impute_indicator",
    sample_weight: np.ndarray | None = None,
    preset: str | None = None,
) -> _FoldWork:
    """The folds of :func:`cross_validate_model` as joblib jobs, and how to assemble their
    outputs; ``fold`` overrides :func:`assign_folds`, ``sample_weight``: the survey weights
    (:func:`~cx_app.models.weighting.fit_weighted`)."""
    classes = tuple(classes)
    if len(classes) < 2:
        raise AnalysisError("cross-validation needs at least two classes")
    feature_names = tuple(str(c) for c in getattr(X, "columns", ()))
    Xa = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if Xa.ndim != 2 or len(Xa) != len(y):
        raise AnalysisError(f"attributes ({Xa.shape}) and scores ({len(y)}) do not line up")
    codes = class_positions(y, classes)
    preset = resolve_preset(algorithm_id, preset)
    spec = get_algorithm(algorithm_id, preset)
    effective = spec.settings(settings)
    template = build_model(
        algorithm_id,
        settings,
        seed=seed,
        calibration=calibration,
        calibration_folds=calibration_folds,
        missing_policy=missing_policy,
        preset=preset,
        threads=1,  # a forest's probabilities summed by several threads differ in the last
    )  # bits with the threads' order: one thread per fold, the folds share the cores
    notes: list[str] = []
    if fold is None:
        assignment = assign_folds(codes, folds, seed, names=classes)
        fold, fold_method = assignment.fold, assignment.method
        notes.extend(assignment.warnings)
    else:
        fold = np.asarray(fold, dtype=np.intp)
        if fold.shape != codes.shape or fold.min() < 0:
            raise AnalysisError("the given fold assignment does not match the respondents")
        folds, fold_method = int(fold.max()) + 1, "given"
    n_classes = len(classes)
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    why_not = None
    if weights is not None:
        if weights.shape != codes.shape:
            raise AnalysisError(f"{len(weights)} weights for {len(codes)} respondents")
        why_not = unweighted_reason(template)
        if why_not is not None:
            notes.append(f"{algorithm_id}: trained without the survey weights ({why_not})")
    splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(folds)]
    data = cluster.share(Xa, codes, fold, weights)  # on a cluster: scattered once per run
    fit_fold = cluster.task(_fit_fold)
    # locally, fold models go to files (the process holds none); a cluster sends them back
    folder = _ModelFolder() if keep_models and not cluster.active() else None
    keep = [f"{folder.path}/{algorithm_id}-{f}.joblib" if folder else keep_models
            for f in range(folds)]
    jobs = [
        delayed(fit_fold)(template, data[0], data[1], data[2], f, n_classes, keep_train_proba,
                          keep[f], data[3])
        for f in range(folds)
    ]
    def finish(outputs: list, total: float) -> CrossValResult:
        proba = np.zeros((len(codes), n_classes))
        messages: dict[str, list[int]] = {}
        for f, ((_, test), (p, _, _, _, msgs, dropped)) in enumerate(zip(splits, outputs, strict=True)):
            proba[test] = p
            for m in msgs:
                messages.setdefault(m, []).append(f)
            for d in dropped:
                messages.setdefault(
                    f"class {classes[int(d)]!r} has a single respondent in this training fold and "
                    "was left out of its calibration (probability 0)",
                    [],
                ).append(f)
        for m, fs in messages.items():
            notes.append(f"{algorithm_id}, fold(s) {', '.join(str(f + 1) for f in fs)}: {m}")
        numeric = all(isinstance(c, int | float | np.number) for c in classes)
        class_array = np.asarray(classes, dtype=None if numeric else object)
        train_predictions = tuple(
            TrainFoldPredictions(f, tr, class_array[tp.argmax(1)], tp)
            for f, ((tr, _), (_, tp, *_)) in enumerate(zip(splits, outputs, strict=True))
        ) if keep_train_proba else None
        return CrossValResult(
            y_true=y,
            y_pred=class_array[np.argmax(proba, axis=1)],
            proba=proba,
            fold=fold,
            classes=classes,
            algorithm_id=algorithm_id,
            settings=effective,
            calibration=calibration,
            folds=folds,
            seed=seed,
            fit_seconds=total,
            fold_fit_seconds=tuple(o[2] for o in outputs),
            warnings=tuple(notes),
            feature_names=feature_names,
            fold_method=fold_method,
            models=(tuple(FoldModelFile(o[3].path, folder) if folder else o[3] for o in outputs)
                    if keep_models else None),
            train_predictions=train_predictions,
            provenance=library_versions(),
            missing_policy=missing_policy,
            preset=preset,
            weighted=None if weights is None else why_not is None,
            unweighted_reason=why_not,
        )

    seconds = 0.0 if algorithm_id not in COSTS or 0 in Xa.shape else expected_phases(
        algorithm_id, rows=Xa.shape[0], attributes=Xa.shape[1], folds=folds, settings=effective,
        calibration=calibration, calibration_folds=calibration_folds, preset=preset).folds / folds
    return _FoldWork(algorithm_id, folds, jobs, spec.fold_processes, finish, seconds)


def cross_validate_model(
    X: Any,
    y: Sequence | np.ndarray,
    classes: Sequence,
    algorithm_id: str,
    *,
    n_jobs: int = 1,
    progress: Progress | None = None,
    **options: Any,
) -> CrossValResult:
    """k-fold cross-validation of one algorithm: out-of-fold probabilities over ``classes``.

    ``options``: those of :func:`_plan_folds`. Unanswered attribute scores (NaN) are filled
    inside each fold's pipeline. Every stochastic estimator gets ``random_state=seed`` and fits
    on one thread, so results do not depend on ``n_jobs`` (worker processes, −1: every core).
    """
    work = _plan_folds(X, y, classes, algorithm_id, **options)
    start = time.perf_counter()
    outputs = _run([work], n_jobs, progress, f"{algorithm_id}: fitting {work.folds} folds")
    return work.finish(outputs, time.perf_counter() - start)


def cross_validate_together(
    X: Any,
    y: Sequence | np.ndarray,
    classes: Sequence,
    algorithm_ids: Sequence[str],
    *,
    n_jobs: int = 1,
    progress: Progress | None = None,
    **options: Any,
) -> list[CrossValResult]:
    """:func:`cross_validate_model` of several algorithms, every fold of every algorithm a task
    of one joblib run (:func:`_run`). The results are those of separate calls but
    ``fit_seconds``: the sum of the fold fit times (they ran interleaved)."""
    works = [_plan_folds(X, y, classes, a, **options) for a in algorithm_ids]
    total = sum(w.folds for w in works)
    outputs = _run(works, n_jobs, progress, f"{', '.join(algorithm_ids)}: fitting {total} folds together")
    results, at = [], 0
    for work in works:
        mine = outputs[at:at + work.folds]
        at += work.folds
        results.append(work.finish(mine, float(sum(o[2] for o in mine))))
    return results


def _run(works: Sequence[_FoldWork], n_jobs: int, progress: Progress | None,
         title: str) -> list:
    """The outputs of every work's fold tasks, in order, from one ``joblib.Parallel``;
    batch_size=1 (auto-batching would pair slow folds on one worker while others idle). A
    CNN's folds (``fold_processes`` False: JAX uses every core) run before the pool's, in one
    process of their own (:func:`_apart`) that ends before the pool's workers start (its
    Keras/JAX memory and theirs never add up, and the workers go on to the permutation
    importance without a restart), except on a cluster."""
    tasks = [(w.fold_processes or cluster.active(), job) for w in works for job in w.jobs]
    total = len(tasks)
    if progress:
        progress(0, total, title)
    names = [w.algorithm_id for w in works for _ in w.jobs]
    expected = [w.fold_seconds for w in works for _ in w.jobs]
    outputs: list = [None] * total
    # longest expected first (a slow algorithm's folds listed last would run alone at the end
    # while the other workers idle); the outputs go back to their places
    pooled = sorted((i for i, (pool, _) in enumerate(tasks) if pool), key=lambda i: -expected[i])
    alone = [i for i, (pool, _) in enumerate(tasks) if not pool]
    parallel = Parallel(n_jobs=n_jobs if len(pooled) > 1 else 1, return_as="generator",
                        batch_size=1, idle_worker_timeout=cluster.idle_worker_seconds())
    def in_turn() -> Iterator[Any]:  # the pool is called (and starts) only after the CNN
        yield from _apart([tasks[i][1] for i in alone])
        yield from parallel(tasks[i][1] for i in pooled)

    for done, (i, out) in enumerate(zip([*alone, *pooled], in_turn(), strict=True), start=1):
        outputs[i] = out
        if progress:
            progress(done, total, f"{names[i]}: fold {done}/{total} done" if len(works) == 1
                     else f"fold {done}/{total} done ({names[i]})")
    return outputs


def _call(job: tuple) -> Any:
    fn, args, kwargs = job
    return fn(*args, **kwargs)


def _apart(jobs: list) -> Iterator[Any]:
    """The outputs of ``jobs`` in one loky process started for them (no thread limits), which
    ends with them and frees what Keras and JAX hold (about 350 MB)."""
    if jobs:
        from joblib.externals.loky import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=1) as executor:
            yield from executor.map(_call, jobs)


@dataclass(frozen=True)
class _FoldWork:
    algorithm_id: str
    folds: int
    jobs: list
    fold_processes: bool
    finish: Callable[[list, float], CrossValResult]
    fold_seconds: float = 0.0
    """One fold's expected fit time (:func:`~cx_app.models.timing.expected_phases`): the
    pool takes the longest folds first."""
