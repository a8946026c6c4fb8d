"""The model-quality suite's surveys and its independent reference (shared with ``bench``).

Four surveys with gaps, each read by :func:`~cx_app.survey.importing.load_survey` without a
schema, as a new user would (inferred layout, default gap policy ``impute_indicator``):

- ``sample``: the bundled telecom sample, a fixed random subset of :data:`SAMPLE_ROWS` of its
  7,506 respondents (attribute gaps: roaming about half, shops, call centre and mobile app
  15–21 %);
- ``bank``: the messy bank export of :mod:`cx_app.simulation.bank_export` (two waves, survey
  weights, 99 / "N/A" / "Don't know" / routing blanks, scales 1–10, 1–5 and −2..2);
- ``skewed_six`` and ``signed``: :mod:`cx_app.simulation.shapes` (a 1–6 scale skewed to
  the top with blanks; signed −2..2 statements with "n/a" on half of one).

The reference of an algorithm is written here from the libraries alone, not from
``cx_app.models``: the same estimator family and settings (the ``fast`` preset's), every gap
filled by the training fold's median (``SimpleImputer``), standardised where ours is, fitted
fold by fold on the folds of our cross-validation, with the survey weights when the estimator
takes them. Where our model differs in ways that do not change its family, the reference is the
plain version: the linear SVM is scikit-learn's ``CalibratedClassifierCV`` (Platt scaling, 5
inner folds; ours lowers the inner folds for rare classes), the ordinal model is statsmodels' ``OrderedModel`` called directly, and the
CNN is the papers' network written directly in Keras (``Sequential``: ``Conv1D``,
``MaxPooling1D``, ``Flatten``, softmax ``Dense``; Adam, ``Model.fit`` with its own shuffling),
not through :class:`~cx_app.models.cnn.CNNClassifier` and its compiled training loop.
"""

from __future__ import annotations

import functools
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.multiclass import OneVsOneClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import has_fit_parameter

from cx_app.simulation.bank_export import simulate_bank_waves, write_bank_export
from cx_app.simulation.shapes import simulate_signed_agreement, simulate_skewed_six
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

SURVEYS = ("sample", "bank", "skewed_six", "signed")
SAMPLE_ROWS = 2500
HEAVY_ROWS = {"svm": 1200, "ordinal": 1200}
"""Algorithms cross-validated on a fixed random subset of at most this many respondents of each
survey (their fits, and the reference's, cost seconds per fold)."""
SEED = 0
FOLDS = 5


def reference_tolerance(standard_error: float) -> float:
    """How far below the reference our default may score: max(0.01, 2 × the reference's
    across-fold standard error). The reference's per-fold accuracies on these surveys spread
    with a standard error of 0.004–0.018 (0.002–0.024 for macro-F1): two models of the same
    family scored on the same folds that differ by less than two such errors differ by chance
    at the 5 % level; 0.01 is the floor the issue sets for "does not hurt".

    >>> reference_tolerance(0.002), reference_tolerance(0.012)
    (0.01, 0.024)
    """
    return max(0.01, 2 * standard_error)


@dataclass(frozen=True, eq=False)
class QualitySurvey:
    """A survey as the models see it: attributes (gaps as NaN), scores, classes, weights."""

    name: str
    X: pd.DataFrame
    y: np.ndarray
    classes: tuple
    weights: np.ndarray | None
    missing_policy: str

    def positions(self) -> np.ndarray:
        lookup = {c: i for i, c in enumerate(self.classes)}
        return np.array([lookup[v] for v in self.y.tolist()])

    def subset(self, rows: int) -> QualitySurvey:
        """A fixed random subset of ``rows`` respondents (all of them when there are fewer)."""
        if rows >= len(self.y):
            return self
        keep = np.sort(np.random.default_rng(SEED).choice(len(self.y), rows, replace=False))
        return QualitySurvey(self.name, self.X.iloc[keep].reset_index(drop=True), self.y[keep],
                             self.classes, None if self.weights is None else self.weights[keep],
                             self.missing_policy)

    def majority_rate(self) -> float:
        """Accuracy of always predicting the most frequent score."""
        return float(np.bincount(self.positions()).max() / len(self.y))


def load_quality_survey(name: str) -> QualitySurvey:
    """One of :data:`SURVEYS`, read with defaults (module docstring)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "sample":
            survey = load_survey(sample_path("telecom_nps"))
        elif name == "bank":
            with tempfile.TemporaryDirectory() as tmp:
                waves = simulate_bank_waves(800, waves=2, seed=11, drop_in_last_wave=False)
                survey = load_survey(write_bank_export(waves, Path(tmp) / "bank_tracker.xlsx"))
        elif name == "skewed_six":
            survey = load_survey(simulate_skewed_six(1500).to_csv(index=False).encode(),
                                 filename="skewed_six.csv")
        elif name == "signed":
            survey = load_survey(simulate_signed_agreement(1500).to_csv(index=False).encode(),
                                 filename="signed.csv")
        else:
            raise ValueError(f"unknown quality survey {name!r}")
    weights = survey.model_weights
    loaded = QualitySurvey(name, survey.X.reset_index(drop=True), np.asarray(survey.y),
                           tuple(survey.classes),
                           None if weights is None else np.asarray(weights, dtype=float),
                           survey.schema.missing_attributes)
    return loaded.subset(SAMPLE_ROWS) if name == "sample" else loaded


def _mlp(seed: int) -> MLPClassifier:
    return MLPClassifier((6,), activation="relu", solver="adam", batch_size=200,
                         learning_rate_init=0.01, max_iter=200, random_state=seed)


def reference_estimator(algorithm_id: str, seed: int = SEED):
    """The plain-library model of ``algorithm_id`` with median imputation (module docstring);
    ``None`` for ``ordinal`` (statsmodels, fitted in :func:`_fit_predict`)."""
    from xgboost import XGBClassifier

    scaled = {
        "lr": LogisticRegression(solver="lbfgs", max_iter=300, C=1.0),
        "svm": CalibratedClassifierCV(OneVsOneClassifier(LinearSVC(loss="squared_hinge",
                                                                    dual=False, C=1.0)),
                                      method="sigmoid", cv=5, ensemble=False),
        "knn": KNeighborsClassifier(n_neighbors=5),
        "ann": _mlp(seed),
        "cnn": _mlp(seed),
    }
    unscaled = {
        "nb": GaussianNB(),
        "dt": DecisionTreeClassifier(criterion="entropy", max_depth=3, random_state=seed),
        "rf": RandomForestClassifier(n_estimators=100, criterion="gini", random_state=seed,
                                     n_jobs=1),
        "xgb": XGBClassifier(n_estimators=100, learning_rate=0.3, max_depth=3, subsample=1.0,
                             tree_method="hist", n_jobs=1, random_state=seed),
    }
    if algorithm_id == "ordinal":
        return None
    fill = ("fill", SimpleImputer(strategy="median", keep_empty_features=True))
    if algorithm_id in scaled:
        return Pipeline([fill, ("scale", StandardScaler()), ("model", scaled[algorithm_id])])
    return Pipeline([fill, ("model", unscaled[algorithm_id])])


def _fit_predict(algorithm_id: str, X: np.ndarray, y: np.ndarray, weights, train, test):
    """Fit the reference on the rows ``train``, predict the rows ``test`` (class positions).
    Training labels are re-encoded 0..k−1 (XGBoost needs it; a fold may lack a class)."""
    labels, codes = np.unique(y[train], return_inverse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if algorithm_id in ("ordinal", "cnn"):
            prepare = Pipeline([("fill", SimpleImputer(strategy="median",
                                                       keep_empty_features=True)),
                                ("scale", StandardScaler())]).fit(X[train])
            X_train, X_test = prepare.transform(X[train]), prepare.transform(X[test])
            if algorithm_id == "cnn":
                w = None if weights is None else weights[train]
                return labels[_keras_cnn(X_train, codes, w, X_test, len(labels))]
            from statsmodels.miscmodels.ordinal_model import OrderedModel

            result = OrderedModel(codes, X_train, distr="logit").fit(method="bfgs",
                                                                     maxiter=1000, disp=False)
            proba = np.asarray(result.model.predict(result.params, exog=X_test))
            return labels[proba.argmax(axis=1)]
        model = reference_estimator(algorithm_id)
        fit = {}
        if weights is not None and has_fit_parameter(model.steps[-1][1], "sample_weight"):
            fit = {"model__sample_weight": weights[train]}
        model.fit(X[train], codes, **fit)
        return labels[model.predict(X[test])]


@functools.cache
def _keras_network(p: int, classes: int):
    """The papers' CNN (fast preset: 32 filters of width 3, pooling by 4, Adam at 0.001) in
    plain Keras, compiled once per shape, and its initial weights. Every fold starts from these
    weights with a fresh optimiser state (:func:`_keras_cnn`), so the compiled training step is
    reused instead of compiled again for each fold."""
    from cx_app.models.cnn import _keras

    keras = _keras()  # Keras on JAX, as our CNN has it (the backend is set before importing)
    seeded = {"kernel_initializer": keras.initializers.GlorotUniform(seed=SEED)}
    model = keras.Sequential([
        keras.Input((p, 1)),
        keras.layers.Conv1D(32, min(3, p), activation="relu", padding="same", **seeded),
        keras.layers.MaxPooling1D(min(4, p), padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dense(classes, activation="softmax", **seeded),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.001),
                  loss="sparse_categorical_crossentropy")
    return model, model.get_weights()


def _keras_cnn(X_train, codes, weights, X_test, classes: int, epochs: int = 30) -> np.ndarray:
    """Train :func:`_keras_network` from its initial weights for ``epochs`` epochs of batches
    of 128 (Keras' ``Model.fit``; rows in their order, which is random already, so that the
    reference is deterministic); predicted codes of ``X_test``."""
    model, initial = _keras_network(X_train.shape[1], classes)
    model.set_weights(initial)
    for variable in model.optimizer.variables:  # Adam's step count and moments, not its rate
        if variable.path.endswith(("iteration", "momentum", "velocity")):
            variable.assign(np.zeros(variable.shape, dtype=variable.dtype))
    model.fit(X_train[..., None], codes, sample_weight=weights, epochs=epochs, batch_size=128,
              shuffle=False, verbose=0)
    return model.predict(X_test[..., None], verbose=0).argmax(axis=1)


@dataclass(frozen=True)
class ReferenceScore:
    """The reference's out-of-fold accuracy and macro-F1, and their across-fold standard
    errors (SD of the per-fold values / √folds)."""

    accuracy: float
    macro_f1: float
    accuracy_se: float
    macro_f1_se: float


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    return float(f1_score(y_true, y_pred, average="macro", labels=range(n_classes),
                          zero_division=0))


def reference_score(algorithm_id: str, survey: QualitySurvey, fold: np.ndarray,
                    n_jobs: int = 2) -> ReferenceScore:
    """Cross-validate the reference of ``algorithm_id`` on ``survey`` with the fold index
    ``fold`` (one fold number per respondent, as our cross-validation assigned them)."""
    X, y = survey.X.to_numpy(dtype=float), survey.positions()
    folds = int(fold.max()) + 1
    parts = Parallel(n_jobs=1 if algorithm_id == "cnn" else n_jobs)(
        delayed(_fit_predict)(algorithm_id, X, y, survey.weights,
                              np.flatnonzero(fold != f), np.flatnonzero(fold == f))
        for f in range(folds))
    pred = np.empty_like(y)
    for f, part in enumerate(parts):
        pred[fold == f] = part
    k = len(survey.classes)
    accuracy = [float(np.mean(pred[fold == f] == y[fold == f])) for f in range(folds)]
    f1 = [macro_f1(y[fold == f], pred[fold == f], k) for f in range(folds)]
    return ReferenceScore(float(np.mean(pred == y)), macro_f1(y, pred, k),
                          float(np.std(accuracy, ddof=1) / np.sqrt(folds)),
                          float(np.std(f1, ddof=1) / np.sqrt(folds)))


@dataclass(frozen=True)
class QualityRow:
    """One algorithm on one survey: our default pipeline, our ``impute_median`` pipeline and
    the reference, on the same folds; the majority-class rate."""

    algorithm_id: str
    survey: str
    n: int
    folds: int
    accuracy: float
    macro_f1: float
    median_accuracy: float
    reference: ReferenceScore
    majority_rate: float
    seconds: float


def quality_row(algorithm_id: str, survey: QualitySurvey, folds: int = FOLDS,
                n_jobs: int = 2) -> QualityRow:
    """Cross-validate ``algorithm_id`` on ``survey`` by default (the survey's policy, the
    default preset), with ``impute_median`` on the same folds, and the reference."""
    import time

    from cx_app.models.crossval import cross_validate_model

    start = time.perf_counter()
    survey = survey.subset(HEAVY_ROWS.get(algorithm_id, len(survey.y)))
    runs = {}
    fold = None
    for policy in (survey.missing_policy, "impute_median"):
        if policy != survey.missing_policy and _same_gap_step(algorithm_id,
                                                               survey.missing_policy, policy):
            runs[policy] = runs[survey.missing_policy]  # the same pipeline, folds and seed
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs[policy] = cross_validate_model(
                survey.X, survey.y, survey.classes, algorithm_id, folds=folds, seed=SEED,
                n_jobs=n_jobs, fold=fold, missing_policy=policy, sample_weight=survey.weights)
        fold = runs[policy].fold
    default, median = runs[survey.missing_policy], runs["impute_median"]
    y = survey.positions()
    pred = default.class_positions(default.y_pred)
    reference = reference_score(algorithm_id, survey, default.fold, n_jobs=n_jobs)
    return QualityRow(algorithm_id, survey.name, len(y), folds,
                      float(np.mean(pred == y)), macro_f1(y, pred, len(survey.classes)),
                      float(np.mean(median.class_positions(median.y_pred) == y)), reference,
                      survey.majority_rate(), time.perf_counter() - start)


def _same_gap_step(algorithm_id: str, policy: str, other: str) -> bool:
    """Whether our pipelines under two policies are the same (then so are their results)."""
    from cx_app.models.crossval import build_model

    def step(p: str) -> str:
        return repr(build_model(algorithm_id, missing_policy=p).named_steps["gaps"])

    return step(policy) == step(other)
