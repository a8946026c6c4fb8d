"""The Models page's expected time, learned from the workspace's measured fits (at a quiet
machine's rate, scaled by the load now) and refined from the folds as they finish, and Cancel:
the kept models and an enabled Train button on the very next rerun (``AppTest``, no
browser)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from cx_app.app.session import ResultStore
from cx_app.app.training import TrainingJob
from cx_app.models.names import names_in_text
from cx_app.workspace import fits
from cx_app.workspace.database import open_database

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
TIMEOUT = 120  # generous: two busy cores


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Expected time"))


@pytest.fixture
def models_page():
    # an empty process-wide result store: it would hand over lr and nb trained by another test
    # of this process with the same recipe (test_app_audit's seed 31 did, when both ran in one
    # process), and a store hit is not a fit to learn from
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    _ok(at)
    at.number_input(key="folds").set_value(3).run()
    at.number_input(key="seed").set_value(31).run()
    return at


def test_the_expected_time_is_learned_from_the_fits_of_this_workspace(models_page):
    at = models_page
    assert "a first guess for Logistic regression, Naive Bayes" in _caption(at)
    assert _caption(at).endswith("Refined from the folds and the permutation importance as "
                                 "they finish.")
    at.button(key="train").click().run()
    _ok(at)
    survey = at.session_state["analysis"].survey
    respondents, attributes = survey.quality.rows_used, len(survey.schema.attributes)
    database = open_database(os.environ["CX_APP_DATABASE_URL"])
    try:
        recorded = {a: fits.recent_fits(database, a, "fast") for a in ("lr", "nb")}
        assert recorded["lr"][0].respondents == respondents == len(survey.y)
        assert [(len(f), f[0].attributes, f[0].folds) for f in recorded.values()] == [
            (1, attributes, 3), (1, attributes, 3)]
        # a quiet machine's seconds: the measured time divided by the load factor (≥ 1)
        assert 0 < recorded["lr"][0].seconds + recorded["nb"][0].seconds <= (
            at.session_state["training_job"].elapsed)
        at.run()
        expected = fits.expected_times(database, {"lr": {}, "nb": {}}, preset="fast",
                                       respondents=respondents, attributes=attributes,
                                       folds=3, load=1.0)
        assert expected.estimates["lr"].seconds == pytest.approx(recorded["lr"][0].seconds)
    finally:
        database.dispose()
    learned = "learned from this machine's fits for Logistic regression (1), Naive Bayes (1)"
    assert learned in names_in_text(expected.sentence(), ["lr", "nb"])  # in words
    assert learned in _caption(at)


def test_after_cancel_the_next_rerun_shows_the_kept_models_and_train(models_page, slow_fold):
    """Cancel's callback ends the job; the rerun it causes must not wait for the fold."""
    at = models_page
    analysis = at.session_state["analysis"]
    job = TrainingJob(analysis, {"nb": {}, "lr": {}}, folds=3, seed=0, calibration="none",
                      store=ResultStore(8), preset="fast").start()
    at.session_state["training_job"] = job
    assert slow_fold.reached.wait(60)  # nb done, lr held in its first fold
    job.cancel()  # what the Cancel button's on_click does before the rerun
    try:
        at.run()  # returns although the thread is still in lr's fold
        _ok(at)
        assert not at.button(key="train").disabled
        assert list(at.session_state["analysis"].models) == ["nb"]
        assert any(w.value == ("Training cancelled (kept: Naive Bayes; Logistic regression was "
                               "stopped during training and dropped).") for w in at.warning)
        assert any(s.value == "Trained models" for s in at.subheader)
    finally:
        slow_fold.open.set()
        assert job.join(60)

