"""One BLAS thread while a fold is fitted (cx_app.models.threads), and XGBoost on one thread."""

from __future__ import annotations

import threading

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from cx_app.models.algorithms import build_algorithm
from cx_app.models.threads import blas_threads, one_blas_thread


def test_one_blas_thread_inside_and_what_was_there_after():
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == 2
        with one_blas_thread():
            assert blas_threads() == 1
            with one_blas_thread():  # a fold inside a fold (nested joblib): still one
                assert blas_threads() == 1
            assert blas_threads() == 1
        assert blas_threads() == 2


def test_two_overlapping_trainings_leave_the_setting_as_it_was():
    """A enters, B enters (one thread: A's setting), A leaves (the setting it found is back),
    B leaves: 2, as before. Two plain threadpool_limits blocks in this order leave 1 for good."""
    seen: dict[str, int] = {}
    b_inside, b_may_leave = threading.Event(), threading.Event()

    def b() -> None:
        with one_blas_thread():
            seen["b inside, a inside"] = blas_threads()
            b_inside.set()
            b_may_leave.wait(10)
            seen["b inside, a left"] = blas_threads()

    with threadpool_limits(limits=2, user_api="blas"):
        other = threading.Thread(target=b)
        with one_blas_thread():
            other.start()
            assert b_inside.wait(10)
        b_may_leave.set()
        other.join(10)
        assert seen == {"b inside, a inside": 1, "b inside, a left": 2}
        assert blas_threads() == 2


def test_one_blas_thread_fits_the_same_model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 12))
    y = np.digitize(X @ rng.normal(size=12) + rng.normal(0, 0.5, 600), [-1, 0, 1])
    with threadpool_limits(limits=2, user_api="blas"):
        two = LogisticRegression(max_iter=300).fit(X, y).predict_proba(X)
        with one_blas_thread():
            one = LogisticRegression(max_iter=300).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(one, two, atol=1e-6)


def test_xgboost_fits_on_one_thread_in_both_presets():
    for preset in ("fast", "papers"):
        model = build_algorithm("xgb", preset=preset)["model"].estimator
        assert model.n_jobs == 1, preset
