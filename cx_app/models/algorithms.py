"""The papers' driver-model algorithms, as a registry of scikit-learn pipelines.

Every algorithm is an :class:`AlgorithmSpec` in :data:`ALGORITHMS`, keyed by a short id. Its
``defaults`` are the settings of the reduced-confusion-matrix paper's Appendix B (Tables A1–A7)
where the paper gives them, scikit-learn's defaults otherwise; an unknown setting name is an
:class:`~cx_app.errors.AnalysisError` that lists the valid ones.

``build`` returns a :class:`~sklearn.pipeline.Pipeline`: ``"gaps"`` (:func:`gap_filler`),
``"scale"`` (``StandardScaler``, fitted per fold) for the algorithms whose fit depends on the
attributes' scale (``AlgorithmSpec.scaled``), then ``"model"``. Which algorithms get "was
missing" indicators under the default ``impute_indicator`` (:attr:`AlgorithmSpec.gaps`), and
why, measured: ``docs/bases-and-gaps.md``.

Notes on fidelity to the papers:

- ``svm``: scikit-learn 1.9 deprecates ``SVC(probability=True)``; its replacement is
  ``CalibratedClassifierCV(SVC(), method="sigmoid", ensemble=False)`` with 5 internal folds,
  the same Platt scaling with internal 5-fold cross-validation that libsvm runs (multiclass
  probabilities are one-vs-rest sigmoids normalised to sum to 1, not libsvm's pairwise coupling).
- ``ann``: ``max_iter`` counts epochs for Adam; scikit-learn stops earlier when the training
  loss has not improved by ``tol`` for ``n_iter_no_change`` epochs (its default, kept).
- ``ordinal``: classes are taken in their sorted order, the scale order when cross-validation
  passes class positions (it does).

Presets
-------
Every algorithm has two presets (:data:`PRESETS`): ``papers``, exactly the settings above
(:data:`ALGORITHMS`), and ``fast`` (:data:`FAST`), the same model family with a faster solver
or stopping rule, each said in its ``description`` (an algorithm that is fast already keeps
the papers' estimator). Why these:

- ``svm``: the squared hinge: with the plain hinge, liblinear's dual solver hit its 1,000-pass
  limit on the sample survey and was barely faster than libsvm; one-vs-one as libsvm, since
  one-vs-rest was less accurate on ordinal scores, where a middle score cannot be cut from both
  neighbours by one hyperplane.
- ``ann``: early stopping on a 10 % validation split lost 0.011–0.018 accuracy
  (``bench_presets.py``), so it is not used.
- ``rf``, ``knn``: ``n_jobs`` ``None`` = decided at build time: one thread per fold in
  cross-validation (a forest's probabilities summed by several threads differ in the last bits
  with their order), :func:`inner_threads` for a model fitted alone.
- ``xgb`` keeps one thread: XGBoost's OpenMP threads spin at a barrier in every step of every
  tree, and on a shared 2-core server each barrier waits for a time slice (bench
  ``training_times``: 41–223 s on two threads against 6–11 s on one under load).

The default preset is :func:`default_preset`. A model of the non-default preset is labelled
with it (``svm papers``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsOneClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

from cx_app.errors import AnalysisError
from cx_app.models.cnn import CNNClassifier

GapHandling = Literal["indicator", "median"]  # under the default policy (module docstring)

DEFAULT_ALGORITHMS: tuple[str, ...] = ("lr", "svm", "knn", "nb", "dt", "rf", "ann", "xgb")
"""The papers' eight algorithms, in the order the app lists them."""


class _ArgmaxClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the class of the highest probability (ties to the first)."""

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class ContiguousLabels(_ArgmaxClassifier):
    """Fit ``estimator`` on labels re-encoded 0..k−1 (XGBoost needs them contiguous).

    ``classes_`` are the labels seen in training, sorted; ``predict_proba`` columns follow them.
    A training set with a single class predicts it with probability 1.
    """

    def __init__(self, estimator: Any = None):
        self.estimator = estimator

    def fit(self, X, y, sample_weight=None):
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        self.estimator_ = None
        if len(self.classes_) > 1:
            extra = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.estimator_ = clone(self.estimator).fit(X, codes, **extra)
        return self

    def predict_proba(self, X):
        if self.estimator_ is None:
            return np.ones((len(X), 1))
        return self.estimator_.predict_proba(X)


class OrdinalLogisticClassifier(_ArgmaxClassifier):
    """Ordinal (proportional-odds) regression, statsmodels ``OrderedModel``, as a classifier.

    The classes, sorted, are the ordered categories; ``predict_proba`` gives one column per
    class. ``result_`` is the statsmodels results object (``params``, ``conf_int()``, ...).
    """

    def __init__(self, distr: str = "logit", method: str = "bfgs", maxiter: int = 1000):
        self.distr = distr
        self.method = method
        self.maxiter = maxiter

    def fit(self, X, y):
        from statsmodels.miscmodels.ordinal_model import OrderedModel

        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        if len(self.classes_) < 2:
            raise AnalysisError("ordinal regression needs at least two distinct scores")
        model = OrderedModel(codes, np.asarray(X, dtype=float), distr=self.distr)
        self.result_ = model.fit(method=self.method, maxiter=self.maxiter, disp=False)
        return self

    def predict_proba(self, X):
        return np.asarray(
            self.result_.model.predict(self.result_.params, exog=np.asarray(X, float))
        )


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm: id, display name, description, default settings and how to build it."""

    id: str
    name: str
    description: str
    defaults: Mapping[str, Any]
    estimator: Callable[..., Any] = field(repr=False)
    scaled: bool = True
    seeded: bool = True
    wrap: Callable[[Any], Any] | None = field(default=None, repr=False)
    preset: str = "papers"
    fold_processes: bool = True
    """False for the CNN: JAX uses every core for one fit, and each fresh worker process pays
    seconds of Keras/JAX start-up, more than a fold's training (bench ``presets``)."""
    gaps: GapHandling = "indicator"

    def allowed_settings(self) -> tuple[str, ...]:
        """Every setting name ``build`` accepts: the estimator's parameters except the seed."""
        names = self.estimator().get_params(deep=False)
        return tuple(sorted(n for n in names if n != "random_state"))

    def settings(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The effective settings: defaults updated by ``overrides`` (validated by name)."""
        overrides = dict(overrides or {})
        allowed = self.allowed_settings()
        unknown = sorted(set(overrides) - set(allowed))
        if unknown:
            raise AnalysisError(
                f"algorithm '{self.id}' ({self.name}) has no setting {', '.join(map(repr, unknown))}; "
                f"its settings are: {', '.join(allowed)}"
            )
        return {**self.defaults, **overrides}

    def build(self, seed: int = 0, *, missing_policy: str = "impute_indicator",
              threads: int | None = None, **settings: Any) -> Pipeline:
        """A fresh, unfitted pipeline with the defaults updated by ``settings``; an ``n_jobs``
        setting of ``None`` becomes ``threads`` (default :func:`inner_threads`)."""
        params = self.settings(settings)
        if "n_jobs" in params and params["n_jobs"] is None and self.preset == "fast":
            params["n_jobs"] = threads if threads is not None else inner_threads(1)
        if self.seeded:
            params["random_state"] = seed
        model = self.estimator(**params)
        if hasattr(model, "_parameter_constraints"):  # scikit-learn's check now, not in a fold
            try:
                model._validate_params()
            except (ValueError, TypeError) as exc:
                raise AnalysisError(f"algorithm '{self.id}' ({self.name}): {exc}") from None
        if self.wrap is not None:
            model = self.wrap(model)
        steps = [("gaps", gap_filler(missing_policy, self.gaps))]
        steps += [("scale", StandardScaler())] if self.scaled else []
        return Pipeline([*steps, ("model", model)])


def inner_threads(fold_jobs: int | None = 1) -> int:
    """Threads one estimator may use while ``fold_jobs`` folds are fitted in parallel.

    >>> inner_threads(10_000)
    1
    """
    from joblib import cpu_count, effective_n_jobs

    return max(1, cpu_count() // max(1, effective_n_jobs(fold_jobs)))


def gap_filler(missing_policy: str = "impute_indicator",
               handling: GapHandling = "indicator") -> SimpleImputer:
    """The pipeline's ``"gaps"`` step: the training medians, with "was missing" indicators only
    for ``"indicator"`` under ``impute_indicator`` (module docstring).

    >>> gap_filler("impute_indicator", "median").add_indicator
    False
    """
    if missing_policy not in ("impute_indicator", "impute_median", "exclude"):
        raise AnalysisError(f"unknown missing-attribute policy {missing_policy!r}; choose "
                            "impute_indicator, impute_median or exclude")
    return SimpleImputer(strategy="median", keep_empty_features=True,
                         add_indicator=missing_policy == "impute_indicator"
                         and handling == "indicator")


class RareSafeCalibrated(_ArgmaxClassifier):
    """``CalibratedClassifierCV`` that copes with rare classes in the training data.

    scikit-learn refuses ``cv`` inner folds when a class has fewer than ``cv`` members: here
    they are lowered to the smallest class count (at least 2), and a class seen only once is
    left out of this fit (``dropped_classes_``, probability 0).
    """

    def __init__(
        self, estimator: Any = None, method: str = "sigmoid", cv: int = 5, ensemble: bool = False
    ):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.ensemble = ensemble

    def fit(self, X, y, sample_weight=None):
        y = np.asarray(y)
        labels, counts = np.unique(y, return_counts=True)
        self.dropped_classes_ = tuple(labels[counts < 2].tolist())
        keep = np.isin(y, labels[counts >= 2])
        X, y = np.asarray(X)[keep], y[keep]
        inner = int(min(self.cv, counts[counts >= 2].min()))
        # survey weights reach the estimator (when it takes them) and the calibrator
        extra = {} if sample_weight is None else {"sample_weight": np.asarray(sample_weight)[keep]}
        self.calibrated_ = CalibratedClassifierCV(
            self.estimator, method=self.method, cv=inner, ensemble=self.ensemble
        ).fit(X, y, **extra)
        self.classes_ = self.calibrated_.classes_
        self.inner_folds_ = inner
        return self

    def predict_proba(self, X):
        return self.calibrated_.predict_proba(X)


def _platt_svm(svc: Any) -> RareSafeCalibrated:
    return RareSafeCalibrated(svc, method="sigmoid", cv=5, ensemble=False)


def _xgb(**params: Any) -> Any:
    from xgboost import XGBClassifier

    return XGBClassifier(**params)


ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.id: spec
    for spec in (
        AlgorithmSpec(
            "lr",
            "Logistic regression",
            "Multinomial logistic regression on standardised attributes (L-BFGS, class weights 1, "
            "Table A7). Linear, fast, and its coefficients are readable.",
            {"solver": "lbfgs", "max_iter": 300, "class_weight": None, "C": 1.0},
            LogisticRegression,
            gaps="median",
        ),
        AlgorithmSpec(
            "svm",
            "Support vector machine",
            "Linear-kernel SVM on standardised attributes (class weights 1, Table A3); probabilities "
            "by Platt scaling with 5 internal folds. The slowest of the eight on large surveys.",
            {"kernel": "linear", "degree": 3, "class_weight": None, "C": 1.0},
            SVC,
            seeded=False,
            wrap=_platt_svm,
        ),
        AlgorithmSpec(
            "knn",
            "k-nearest neighbours",
            "Majority vote of the 5 nearest respondents (Minkowski distance, uniform weights, "
            "Table A2) on standardised attributes.",
            {"n_neighbors": 5, "metric": "minkowski", "p": 2, "weights": "uniform"},
            KNeighborsClassifier,
            seeded=False,
            gaps="median",
        ),
        AlgorithmSpec(
            "nb",
            "Naive Bayes",
            "Gaussian naive Bayes: attributes independent given the score (Appendix B.7).",
            {"var_smoothing": 1e-9},
            GaussianNB,
            scaled=False,
            seeded=False,
            gaps="median",
        ),
        AlgorithmSpec(
            "dt",
            "Decision tree",
            "A decision tree split by entropy, at most 3 levels deep, class weights 1 (Table A1).",
            {"criterion": "entropy", "max_depth": 3, "class_weight": None},
            DecisionTreeClassifier,
            scaled=False,
            gaps="median",
        ),
        AlgorithmSpec(
            "rf",
            "Random forest",
            "100 trees split by the Gini index (Table A4), each on a bootstrap sample.",
            {"n_estimators": 100, "criterion": "gini", "n_jobs": 1},
            RandomForestClassifier,
            scaled=False,
            gaps="median",
        ),
        AlgorithmSpec(
            "ann",
            "Neural network",
            "A multilayer perceptron with one hidden layer of 6 ReLU units and a softmax output, "
            "trained by Adam on batches of 10 for up to 100 epochs (Table A5).",
            {
                "hidden_layer_sizes": (6,),
                "activation": "relu",
                "solver": "adam",
                "batch_size": 10,
                "max_iter": 100,
            },
            MLPClassifier,
            gaps="median",
        ),
        AlgorithmSpec(
            "xgb",
            "XGBoost",
            "Gradient-boosted trees (XGBoost, 100 rounds, learning rate eta 0.3, depth 3, "
            "subsample 1).",
            {
                "n_estimators": 100,
                "learning_rate": 0.3,
                "max_depth": 3,
                "subsample": 1.0,
                "tree_method": "hist",
                "n_jobs": 1,
            },
            _xgb,
            scaled=False,
            wrap=ContiguousLabels,
            gaps="median",
        ),
        AlgorithmSpec(
            "ordinal",
            "Ordinal logistic regression",
            "Proportional-odds logistic regression (statsmodels OrderedModel) on standardised "
            "attributes: one coefficient per attribute and ordered cut-points, made for ordered "
            "scores such as NPS 0–10.",
            {"distr": "logit", "method": "bfgs", "maxiter": 1000},
            OrdinalLogisticClassifier,
            seeded=False,
        ),
        AlgorithmSpec(
            "cnn",
            "Convolutional neural network",
            "A 1-D convolutional network over the standardised attribute vector (Keras 3, JAX, "
            "CPU): 32 ReLU filters of width 3, max-pooling by 4, a softmax output; categorical "
            "cross-entropy, Adam, 100 epochs in batches of 128 (ALP paper Table A5, NPS paper "
            "Table A6). Surveys with fewer than 4 attribute columns get narrower windows (said "
            "in the warnings). The slowest algorithm: not pre-selected.",
            {"filters": 32, "kernel_size": 3, "pool_size": 4, "epochs": 100, "batch_size": 128,
             "learning_rate": 0.001},
            CNNClassifier,
            fold_processes=False,
            gaps="median",
        ),
    )
}


PRESETS: tuple[str, ...] = ("fast", "papers")
"""The presets of every algorithm (module docstring): ``fast`` (default) and ``papers``."""

_FAST_CHANGES: dict[str, dict[str, Any]] = {
    "svm": {
        "description": "Linear SVM on standardised attributes (C=1, class weights 1, one-vs-one: "
        "the papers' model, Table A3) by liblinear's primal solver (squared hinge loss), linear "
        "in the number of respondents; probabilities by Platt scaling with 5 internal folds.",
        "defaults": {"loss": "squared_hinge", "dual": False, "C": 1.0, "class_weight": None},
        "estimator": LinearSVC,
        "wrap": lambda svc: _platt_svm(OneVsOneClassifier(svc)),
    },
    "ann": {
        "description": "The papers' multilayer perceptron (one hidden layer of 6 ReLU units, "
        "softmax output, Adam, Table A5) in batches of 200 with Adam's step size 0.01 instead of "
        "batches of 10 at 0.001; stopped, like the papers' preset, when the training loss has "
        "not improved for 10 epochs (at most 200 epochs).",
        "defaults": {
            "hidden_layer_sizes": (6,),
            "activation": "relu",
            "solver": "adam",
            "batch_size": 200,
            "learning_rate_init": 0.01,
            "max_iter": 200,
        },
    },
    "rf": {"defaults": {"n_estimators": 100, "criterion": "gini", "n_jobs": None}},
    "knn": {"defaults": {"n_neighbors": 5, "metric": "minkowski", "p": 2, "weights": "uniform",
                         "n_jobs": None}},
    "cnn": {
        "description": "The papers' 1-D convolutional network (Keras 3, JAX, CPU: 32 ReLU filters "
        "of width 3, max-pooling by 4, softmax output, categorical cross-entropy, Adam, batches "
        "of 128; ALP paper Table A5, NPS paper Table A6) trained for 30 epochs instead of 100. "
        "Surveys with fewer than 4 attribute columns get narrower windows (said in the "
        "warnings).",
        "defaults": {"filters": 32, "kernel_size": 3, "pool_size": 4, "epochs": 30,
                     "batch_size": 128, "learning_rate": 0.001},
    },
}

_THREADED = (" Fast preset: on the cores the folds leave free (n_jobs null: decided when "
             "fitted; the results do not depend on it beyond rounding).")

FAST: dict[str, AlgorithmSpec] = {
    a: dataclasses.replace(
        spec,
        preset="fast",
        **{"description": spec.description + (_THREADED if "n_jobs" in
                                               _FAST_CHANGES.get(a, {}).get("defaults", {})
                                               else ""),
           **_FAST_CHANGES.get(a, {})},
    )
    for a, spec in ALGORITHMS.items()
}
"""The ``fast`` preset of every algorithm (module docstring)."""

PAPERS_BY_DEFAULT: frozenset[str] = frozenset()
"""Algorithms whose fast preset's 10-fold accuracy ``bench/bench_presets.py`` measured more
than 0.01 from the papers'. Empty: every fast preset is within 0.0048 (``bench/RESULTS.md``,
section presets)."""


def default_preset(algorithm_id: str) -> str:
    """The preset used when none is asked for (:data:`PAPERS_BY_DEFAULT`).

    >>> default_preset("svm")
    'fast'
    """
    return "papers" if algorithm_id in PAPERS_BY_DEFAULT else "fast"


def resolve_preset(algorithm_id: str, preset: str | None = None) -> str:
    """``preset``, checked, or the algorithm's default preset when it is ``None``."""
    if preset is None:
        return default_preset(algorithm_id)
    if preset not in PRESETS:
        raise AnalysisError(f"unknown preset {preset!r}; choose from: {', '.join(PRESETS)}")
    return preset


def preset_label(algorithm_id: str, preset: str | None = None) -> str:
    """The model id an algorithm gets under ``preset``: the bare id for its default preset.

    >>> preset_label("svm"), preset_label("svm", "papers")
    ('svm', 'svm papers')
    """
    chosen = resolve_preset(algorithm_id, preset)
    return algorithm_id if chosen == default_preset(algorithm_id) else f"{algorithm_id} {chosen}"


def get_algorithm(algorithm_id: str, preset: str | None = None) -> AlgorithmSpec:
    """The registry entry for ``algorithm_id`` under ``preset``, or an error listing the ids."""
    if algorithm_id not in ALGORITHMS:
        raise AnalysisError(
            f"unknown algorithm '{algorithm_id}'; choose from: {', '.join(ALGORITHMS)}"
        )
    chosen = resolve_preset(algorithm_id, preset)
    return (FAST if chosen == "fast" else ALGORITHMS)[algorithm_id]

