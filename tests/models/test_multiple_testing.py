"""Holm's adjustment (``cx_app/multiple_testing.py``) against statsmodels' ``multipletests``
(the reference), and without the full garbage collection statsmodels runs on every call."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from cx_app.multiple_testing import holm


@pytest.mark.parametrize("n", [1, 2, 3, 9, 40, 250])
def test_holm_is_statsmodels_holm(n, monkeypatch):
    monkeypatch.setattr(gc, "collect", lambda *args: 0)  # the reference's full collection
    rng = np.random.default_rng(n)
    for _ in range(20):
        p = rng.uniform(0, 1, n) ** 3  # many small p-values: the running maximum matters
        if n > 3:
            p[1] = p[2]  # ties
        np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], rtol=0,
                                   atol=1e-15)


def test_holm_skips_nan_and_keeps_the_order():
    p = np.array([0.5, np.nan, 0.001, 0.02, np.nan])
    out = holm(p)
    assert np.isnan(out[[1, 4]]).all()
    np.testing.assert_allclose(out[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="holm")[1])
    assert holm([]).shape == (0,) and np.isnan(holm([np.nan])).all()


def test_holm_runs_no_garbage_collection(monkeypatch):
    def collect(*args):
        raise AssertionError("gc.collect called")

    monkeypatch.setattr(gc, "collect", collect)
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.20]), [0.04, 0.09, 0.09, 0.20])
    with pytest.raises(AssertionError):  # the reference does collect (why holm is our own)
        multipletests([0.01, 0.04], method="holm")
