"""Training steps held until the test lets them go (a deliberately slow algorithm, without
sleeping): the fixtures ``slow_fold`` and ``slow_permutation`` (offered by tests/conftest.py)."""

from __future__ import annotations

import threading

import pytest


class Gate:
    """A step of the training held until the test opens it: ``reached`` is set when the
    training thread waits at it (a fold, or a permutation importance, that takes forever)."""

    def __init__(self):
        self.reached, self.open = threading.Event(), threading.Event()

    def hold(self):
        self.reached.set()
        assert self.open.wait(60), "the test never opened the gate"


@pytest.fixture
def slow_fold(monkeypatch):
    """lr's first fold never ends until the gate opens (a deliberately slow algorithm)."""
    from cx_app.app import session

    gate, real = Gate(), session.train_lean

    def train_lean(survey, algorithm_id, *, progress, **kwargs):
        if algorithm_id == "lr":
            progress(0, kwargs["folds"], "lr: fitting")
            gate.hold()  # the fold in training
            progress(1, kwargs["folds"], "lr: fold 1 done")
        return real(survey, algorithm_id, progress=progress, **kwargs)

    monkeypatch.setattr(session, "train_lean", train_lean)
    return gate


@pytest.fixture
def slow_permutation(monkeypatch):
    """lr's permutation importance (after its folds) never ends until the gate opens."""
    from cx_app.models import drivers

    gate, real = Gate(), drivers.permutation_importance_cv

    def permutation_importance_cv(cv, X, **kwargs):
        if cv.algorithm_id == "lr":
            gate.hold()
        return real(cv, X, **kwargs)

    monkeypatch.setattr(drivers, "permutation_importance_cv", permutation_importance_cv)
    return gate
