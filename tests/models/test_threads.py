"""Threads of the fits: XGBoost on one thread in both presets, and the app's server started
with BLAS on one thread (``cx_app.cli.app.SERVER_THREADS``) unless its environment says
otherwise; the predictions do not depend on the BLAS thread count beyond rounding."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

from cx_app.cli.app import SERVER_THREADS, server_launch
from cx_app.models.crossval import build_model

PROBE = ("import numpy, threadpoolctl; print(max(i['num_threads'] for i in "
         "threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))")


def _args() -> argparse.Namespace:
    return argparse.Namespace(port=8501, address="127.0.0.1", secrets=None, teams=None)


def test_the_server_runs_blas_on_one_thread_unless_told_otherwise():
    env = server_launch(_args(), {"PATH": os.environ.get("PATH", "")}).env
    assert {k: env[k] for k in SERVER_THREADS} == {"OPENBLAS_NUM_THREADS": "1",
                                                    "MKL_NUM_THREADS": "1"}
    assert server_launch(_args(), {"OPENBLAS_NUM_THREADS": "4"}).env["OPENBLAS_NUM_THREADS"] == "4"
    # what BLAS in a process started with that environment uses
    threads = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                             env={**os.environ, **SERVER_THREADS}, check=True).stdout
    assert int(threads) == 1


def test_one_blas_thread_fits_the_same_model():
    code = ("import numpy as np; from sklearn.linear_model import LogisticRegression; "
            "r = np.random.default_rng(0); X = r.normal(size=(600, 12)); "
            "y = (X[:, :3].sum(1) + r.normal(size=600) > 0).astype(int) + (X[:, 3] > 1); "
            "p = LogisticRegression(max_iter=300).fit(X, y).predict_proba(X); "
            "print(' '.join(map(str, p.ravel().tolist())))")
    runs = [np.array(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True, env={**os.environ, **extra}
                                    ).stdout.split(), dtype=float)
            for extra in (SERVER_THREADS, {"OPENBLAS_NUM_THREADS": "2"})]
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-6)


def test_xgboost_fits_on_one_thread_in_both_presets():
    for preset in ("fast", "papers"):
        model = build_model("xgb", preset=preset)["model"].estimator
        assert model.n_jobs == 1, preset
