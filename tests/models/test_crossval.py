"""Cross-validation: fold integrity, class alignment, rare classes, calibration, reproducibility."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from cx_app.errors import AnalysisError
from cx_app.models.crossval import aligned_proba, assign_folds, cross_validate_model, make_folds

CLASSES = tuple(range(11))


@pytest.fixture(scope="module")
def survey():
    rng = np.random.default_rng(3)
    n = 400
    X = rng.integers(1, 11, (n, 5)).astype(float)
    y = np.clip(np.round(X[:, :3].mean(axis=1) + rng.normal(0, 1.2, n)), 1, 9).astype(int)
    y[:3] = 0  # a class with fewer members than folds
    return X, y


def test_folds_partition_respondents_and_keep_proportions(survey):
    _, y = survey
    y = y[y > 0]
    fold = make_folds(y, 5, seed=0)
    assert fold.shape == y.shape and set(fold) == set(range(5))
    for f in range(5):
        test = fold == f
        train = ~test
        assert not (test & train).any() and (test | train).all()
        # Stratification: each class's count in a test fold is floor or ceil of its share.
        for c in np.unique(y):
            expected = (y == c).sum() / 5
            assert np.floor(expected) <= (y[test] == c).sum() <= np.ceil(expected)
    assert np.array_equal(fold, make_folds(y, 5, seed=0))
    assert not np.array_equal(fold, make_folds(y, 5, seed=1))


def test_rare_classes_are_merged_for_assignment_and_warned(survey):
    _, y = survey
    a = assign_folds(y, 5, seed=0)
    assert a.method == "stratified (rare classes merged)"
    assert any(
        w.startswith("class 0 has 3 respondent(s), fewer than the 5 folds") for w in a.warnings
    )
    # Class 0 is stratified together with its smaller neighbour: the merged stratum is spread.
    partners = a.warnings[0].split("together with class(es) ")[1].split("]")[0]
    merged = np.isin(y, [0, *ast.literal_eval(partners + "]")])
    per_fold = np.bincount(a.fold[merged], minlength=5)
    assert per_fold.max() - per_fold.min() <= 1
    # A single class: plain k-fold with a note-free assignment.
    single = assign_folds(np.zeros(20, int), 4, 0)
    assert single.method == "kfold" and sorted(np.bincount(single.fold)) == [5, 5, 5, 5]
    with pytest.raises(AnalysisError, match="too few for 10-fold"):
        assign_folds(np.arange(5), 10, 0)


def test_out_of_fold_predictions_every_respondent_once(survey):
    X, y = survey
    cv = cross_validate_model(X, y, CLASSES, "lr", folds=5, seed=0, keep_models=True)
    assert cv.proba.shape == (len(y), 11)
    np.testing.assert_allclose(cv.proba.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(cv.fold, make_folds(np.searchsorted(CLASSES, y), 5, 0))
    # Classes absent from the data (no 10 in this sample) have all-zero columns.
    absent = [k for k, c in enumerate(CLASSES) if not (y == c).any()]
    assert absent and (cv.proba[:, absent] == 0).all()
    # Each respondent's probabilities come from the model that did not see them.
    for f, model in enumerate(cv.models):
        test = np.flatnonzero(cv.fold == f)
        np.testing.assert_allclose(cv.proba[test], aligned_proba(model, X[test], range(11)))
    # y_pred is the argmax of the aligned probabilities, mapped to labels.
    np.testing.assert_array_equal(cv.y_pred, np.asarray(CLASSES)[cv.proba.argmax(axis=1)])
    assert any("class 0 has 3" in w for w in cv.warnings)


def test_class_absent_from_a_training_fold_gets_a_zero_column(survey):
    X, y = survey
    # Put all three class-0 respondents in fold 0: its training set has no class 0.
    fold = make_folds(y, 4, 1)
    fold[y == 0] = 0
    cv = cross_validate_model(X, y, CLASSES, "nb", fold=fold)
    test0 = cv.fold == 0
    assert (cv.proba[test0, 0] == 0).all() and (cv.proba[~test0, 0] > 0).any()
    np.testing.assert_allclose(cv.proba.sum(axis=1), 1.0, atol=1e-9)


def test_alignment_is_by_label_not_by_order():
    class Reversed(LogisticRegression):
        def fit(self, X, y):
            super().fit(X, y)
            self.order_ = self.classes_[::-1]
            return self

        def predict_proba(self, X):
            return super().predict_proba(X)[:, ::-1]

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = Reversed().fit(X, [1, 1, 3, 3])
    model.classes_ = model.order_
    out = aligned_proba(model, X, range(5))
    raw = LogisticRegression().fit(X, [1, 1, 3, 3]).predict_proba(X)
    np.testing.assert_allclose(out[:, [1, 3]], raw)
    assert (out[:, [0, 2, 4]] == 0).all()


def test_string_labels_and_unknown_scores(survey):
    X, y = survey
    names = tuple(f"s{c}" for c in CLASSES)
    cv = cross_validate_model(X, np.array([f"s{v}" for v in y]), names, "dt", folds=3)
    assert set(cv.y_pred) <= set(names)
    with pytest.raises(AnalysisError, match=r"score 'x' \(row 0\) is not one of the classes"):
        cross_validate_model(X[:3], ["x", "s1", "s1"], names, "dt", folds=2)


def test_reproducible_across_runs_and_n_jobs(survey):
    X, y = survey
    one = cross_validate_model(X, y, CLASSES, "rf", folds=3, seed=5, settings={"n_estimators": 10})
    two = cross_validate_model(
        X, y, CLASSES, "rf", folds=3, seed=5, settings={"n_estimators": 10}, n_jobs=2
    )
    np.testing.assert_array_equal(one.proba, two.proba)
    np.testing.assert_array_equal(one.fold, two.fold)
    other = cross_validate_model(
        X, y, CLASSES, "rf", folds=3, seed=6, settings={"n_estimators": 10}
    )
    assert not np.array_equal(one.proba, other.proba)


def test_progress_calibration_and_training_probabilities(survey):
    X, y = survey
    calls = []
    cv = cross_validate_model(
        X,
        y,
        CLASSES,
        "lr",
        folds=3,
        calibration="sigmoid",
        keep_train_proba=True,
        progress=lambda done, total, msg: calls.append((done, total)),
    )
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert cv.calibration == "sigmoid"
    np.testing.assert_allclose(cv.proba.sum(axis=1), 1.0, atol=1e-9)
    assert len(cv.train_predictions) == 3
    for tp in cv.train_predictions:
        assert set(tp.index).isdisjoint(np.flatnonzero(cv.fold == tp.fold))
        assert len(tp.index) + (cv.fold == tp.fold).sum() == len(y)
        np.testing.assert_array_equal(tp.y_pred, np.asarray(CLASSES)[tp.proba.argmax(1)])
    with pytest.raises(AnalysisError, match="unknown calibration"):
        cross_validate_model(X, y, CLASSES, "lr", calibration="platt")


def test_calibration_leaves_out_a_class_seen_once_in_training_and_says_so():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.r_[np.zeros(29, int), np.ones(29, int), [2, 2]]
    fold = np.r_[np.arange(58) % 2, [0, 1]]  # one respondent of class 2 in each fold
    cv = cross_validate_model(X, y, (0, 1, 2), "nb", fold=fold, calibration="sigmoid")
    assert (cv.proba[:, 2] == 0).all()
    np.testing.assert_allclose(cv.proba.sum(axis=1), 1.0, atol=1e-9)
    assert any(
        w.startswith("nb, fold(s) 1, 2: class 2 has a single respondent in this training fold")
        and "left out of its calibration (probability 0)" in w
        for w in cv.warnings
    ), cv.warnings


def test_algorithms_cross_validated_together_equal_separate_runs():
    """One joblib run for several algorithms (what a cluster gets) gives each algorithm the
    same folds, probabilities and fold models as its own run."""
    from cx_app.models.crossval import cross_validate_together

    rng = np.random.default_rng(3)
    X = rng.integers(1, 11, size=(120, 4)).astype(float)
    y = np.clip((X.mean(axis=1) + rng.normal(0, 1, 120)).round(), 1, 10).astype(int)
    classes = tuple(range(1, 11))
    together = cross_validate_together(X, y, classes, ["lr", "dt", "nb"], folds=4, seed=2,
                                       keep_models=True)
    for result, algorithm_id in zip(together, ["lr", "dt", "nb"], strict=True):
        alone = cross_validate_model(X, y, classes, algorithm_id, folds=4, seed=2,
                                     keep_models=True)
        assert result.algorithm_id == algorithm_id
        assert np.array_equal(result.fold, alone.fold)
        assert np.array_equal(result.proba, alone.proba)
        assert np.array_equal(result.y_pred, alone.y_pred)
        assert len(result.models) == 4 and result.warnings == alone.warnings
        assert result.fit_seconds == pytest.approx(sum(result.fold_fit_seconds))


def test_fold_models_are_kept_in_files_that_go_with_the_result(survey):
    """A local run keeps its fold models in files (the process holds none of them): each is
    the fitted model of its fold (its probabilities are the out-of-fold ones, read back in a
    worker process too), and the folder is removed once no result refers to it."""
    import gc
    import os

    from joblib import Parallel, delayed

    from cx_app.models.crossval import FoldModelFile, load_fold_model

    X, y = survey
    cv = cross_validate_model(X, y, CLASSES, "nb", folds=3, seed=1, keep_models=True, n_jobs=2)
    assert all(isinstance(m, FoldModelFile) for m in cv.models)
    folder = os.path.dirname(cv.models[0].path)
    assert sorted(os.listdir(folder)) == [f"nb-{f}.joblib" for f in range(3)]
    probas = Parallel(n_jobs=2)(delayed(lambda m, rows: aligned_proba(load_fold_model(m), rows,
                                                                      range(11)))(m, X[cv.fold == f])
                                for f, m in enumerate(cv.models))
    for f, proba in enumerate(probas):
        np.testing.assert_allclose(cv.proba[cv.fold == f], proba)
    del cv
    gc.collect()
    assert not os.path.exists(folder)


def test_folds_of_several_algorithms_go_to_the_pool_longest_first(survey, monkeypatch):
    """A slow algorithm's folds listed last would run alone at the end while the other workers
    idle: the pool gets the folds longest-expected first (the time model), and each result
    still comes back to its own algorithm, equal to a separate cross-validation."""
    from cx_app.models import crossval
    from cx_app.models.timing import expected_phases

    X, y = survey
    submitted = []
    real_parallel = crossval.Parallel

    class RecordingParallel(real_parallel):
        def __call__(self, iterable):
            jobs = list(iterable)
            submitted.extend(type(job[1][0][-1]).__name__ for job in jobs)  # the template's model
            return super().__call__(jobs)

    monkeypatch.setattr(crossval, "Parallel", RecordingParallel)
    together = crossval.cross_validate_together(X, y, CLASSES, ["nb", "rf", "knn"], folds=3,
                                                seed=2, n_jobs=2)
    expected = {a: expected_phases(a, rows=X.shape[0], attributes=X.shape[1], folds=3).folds / 3
                for a in ("nb", "rf", "knn")}
    assert expected["rf"] > expected["knn"] > expected["nb"] > 0  # at 400 rows, 5 attributes
    assert submitted == ["RandomForestClassifier"] * 3 + ["KNeighborsClassifier"] * 3 + [
        "GaussianNB"] * 3
    monkeypatch.setattr(crossval, "Parallel", real_parallel)
    for a, cv in zip(["nb", "rf", "knn"], together, strict=True):
        alone = cross_validate_model(X, y, CLASSES, a, folds=3, seed=2)
        assert cv.algorithm_id == a
        np.testing.assert_array_equal(cv.proba, alone.proba)


def test_folds_that_need_a_process_of_their_own_run_before_the_pool_is_called(monkeypatch):
    """A CNN's folds (a process of their own, Keras/JAX ~350 MB) run before the pool of the
    other folds is called, so that the CNN's process and the pool's workers never live at once;
    the outputs still come back in the works' order."""
    from joblib import delayed

    from cx_app.models import crossval

    calls = []
    real_apart, real_parallel = crossval._apart, crossval.Parallel

    def recording_apart(jobs):
        calls.append(("apart", len(jobs)))
        yield from real_apart(jobs)
        calls.append(("apart done", len(jobs)))

    class RecordingParallel(real_parallel):
        def __call__(self, iterable):
            calls.append(("pool", None))
            return super().__call__(iterable)

    monkeypatch.setattr(crossval, "_apart", recording_apart)
    monkeypatch.setattr(crossval, "Parallel", RecordingParallel)
    pooled = crossval._FoldWork("a", 2, [delayed(pow)(2, k) for k in range(2)], True, None, 1.0)
    alone = crossval._FoldWork("b", 2, [delayed(pow)(3, k) for k in range(2)], False, None, 9.0)
    assert crossval._run([pooled, alone], 2, None, "") == [1, 2, 1, 3]
    assert calls == [("apart", 2), ("apart done", 2), ("pool", None)]


def test_a_fit_that_stops_at_its_iteration_limit_is_said_in_words_without_the_links():
    """scikit-learn's ConvergenceWarning (an MLP capped at 3 iterations; logistic regression's
    lbfgs at 2, whose message runs to several lines with links) reads as what happened and
    what to change, once per model with the folds it hit, its first line kept."""
    rng = np.random.default_rng(0)
    X = rng.integers(1, 11, (300, 4)).astype(float)
    y = np.clip(np.round(X @ [0.4, 0.3, 0.2, 0.1] + rng.normal(0, 1, 300)), 0, 10)
    classes = sorted(set(y))
    for algorithm, settings, first in (
            ("ann", {"max_iter": 3}, "Stochastic Optimizer: Maximum iterations (3) reached"),
            ("lr", {"max_iter": 2}, "lbfgs failed to converge after 2 iteration(s)")):
        cv = cross_validate_model(X, y, classes, algorithm, folds=3, seed=0, settings=settings)
        said = [w for w in cv.warnings if "iteration limit" in w]
        assert len(said) == 1, cv.warnings
        assert said[0].startswith(f"{algorithm}, fold(s) 1, 2, 3: the fit stopped at its "
                                  "iteration limit before it settled"), said
        assert f"(scikit-learn: {first}" in said[0] and "http" not in said[0]
        assert "\n" not in said[0]
