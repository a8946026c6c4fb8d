"""Training jobs through the server's bounded pool (TrainingJob.start(pool=..., user=...)):
a user's second job waits behind the first, another user's does not, a queued job can be
cancelled, a queued job's models reach the workspace callback once it runs; and the Models
page's waiting sentence (app_pages.panels / app_pages.job_queue).

Real trainings on a tiny survey (nb, lr; 3 folds); the first job is held in lr's first fold by
the ``slow_fold`` gate, so the queue stands still while the test looks at it."""

from __future__ import annotations

import numpy as np
import pytest
from test_training_job import analysis  # noqa: F401 — the tiny survey fixture

from cx_app.app.job_pool import JobPool, JobState, PoolLimits
from cx_app.app.session import ResultStore
from cx_app.app.training import TrainingJob

WAIT = 120  # s; generous: two busy cores


class Kept(list):
    """An ``on_model`` callback that keeps what it is given (as the workspace would)."""

    def __call__(self, model):
        self.append(model)


def _job(analysis, algorithms, on_model=None):  # noqa: F811 — the fixture's value
    return TrainingJob(analysis, {a: {} for a in algorithms}, folds=3, seed=0,
                       calibration="none", store=ResultStore(8), on_model=on_model)


@pytest.fixture
def pool():
    pool = JobPool(PoolLimits(per_user=1, per_server=2), name="test-training")
    yield pool
    pool.shutdown(wait=False)


def test_a_users_second_job_waits_for_the_first_and_another_user_does_not(
        analysis, pool, slow_fold):  # noqa: F811
    first = _job(analysis, ["lr"]).start(pool=pool, user="ann@north.example")
    assert slow_fold.reached.wait(WAIT)  # ann's first job is training (held in lr's fold)
    kept = Kept()
    second = _job(analysis, ["nb"], on_model=kept).start(pool=pool, user="ann@north.example")
    assert (first.state, second.state) == ("running", "queued")
    assert second.position == 1 and second.running and second.text == "waiting for the server"
    assert second.finish() is False and not second.wait(0.5)
    assert kept == [] and second.began is None

    # bob's job is not kept behind ann's queued one: the server has a second place
    other = _job(analysis, ["nb"]).start(pool=pool, user="bob@south.example")
    assert other.position is None
    assert other.wait(WAIT) and other.state == "finished"
    assert [j.user for j in pool.running()] == ["ann@north.example"]
    assert second.state == "queued" and second.position == 1  # still behind ann's first
    assert [j.user for j in pool.queued()] == ["ann@north.example"]

    slow_fold.open.set()  # ann's first job ends; her second starts
    assert first.wait(WAIT) and first.state == "finished"
    assert second.wait(WAIT) and second.state == "finished", second.message
    assert second.began is not None and second.began >= first.ended
    assert second.position is None and pool.queued() == ()
    # its model reached the workspace callback, and it is the model a job of its own trains
    alone = _job(analysis, ["nb"]).start()
    assert alone.wait(WAIT) and alone.finish()
    assert [m.model_id for m in kept] == ["nb"]
    np.testing.assert_array_equal(kept[0].cv.y_pred, alone.analysis.models["nb"].cv.y_pred)
    assert second.finish() is True and list(analysis.models) == ["nb"]
    assert second.join(WAIT) and second.pooled.state is JobState.DONE


def test_cancelling_a_queued_job_takes_it_out_of_the_queue_and_hands_over_nothing(
        analysis, pool, slow_fold):  # noqa: F811
    first = _job(analysis, ["nb", "lr"]).start(pool=pool, user="ann@north.example")
    assert slow_fold.reached.wait(WAIT)  # nb done, lr held in its first fold
    kept = Kept()
    queued = _job(analysis, ["nb"], on_model=kept).start(pool=pool, user="ann@north.example")
    assert queued.position == 1
    queued.cancel()
    assert queued.state == "cancelled" and not queued.running and queued.wait(0)
    assert queued.message == "Training cancelled before it started (no model was trained)."
    assert pool.queued() == () and queued.position is None
    assert queued.pooled.state is JobState.CANCELLED and queued.join(0)
    assert queued.finish() is True and analysis.models == {} and analysis.trainings == 0

    # the running one cancels as without a pool: at once, keeping nb; its fold keeps the
    # server's place until it ends
    first.cancel()
    assert first.state == "cancelled" and first.wait(0) and first.cancelling
    assert [j.user for j in pool.running()] == ["ann@north.example"]
    slow_fold.open.set()
    assert first.join(WAIT) and pool.running() == ()
    assert first.finish() is True and list(analysis.models) == ["nb"]
    assert kept == []  # the cancelled queued job never trained


def test_a_job_cancelled_before_it_is_started_never_trains_in_the_pool(analysis, pool):  # noqa: F811
    kept = Kept()
    job = _job(analysis, ["nb"], on_model=kept)
    job.cancel()
    job.start(pool=pool, user="ann@north.example")
    assert job.join(WAIT) and job.state == "cancelled" and kept == [] and job.began is None
    assert job.finish() is True and analysis.models == {}


def test_the_waiting_sentence_shows_the_place_in_the_queue(analysis, slow_fold, monkeypatch):  # noqa: F811
    from app_pages import job_queue, panels

    monkeypatch.setenv("CX_APP_JOBS_PER_USER", "1")
    monkeypatch.setenv("CX_APP_JOBS_PER_SERVER", "2")
    job_queue.training_pool.clear()
    pool = job_queue.training_pool()
    try:
        first = _job(analysis, ["lr"]).start(pool=pool, user="local user")
        assert slow_fold.reached.wait(WAIT)
        second = _job(analysis, ["nb"]).start(pool=pool, user="local user")
        third = _job(analysis, ["nb"]).start(pool=pool, user="local user")
        assert (second.position, third.position) == (1, 2)
        assert panels._progress_line(second) == (  # Markdown-safe as it is
            "Waiting for the server: 0 training job(s) ahead of yours in the queue (yours is "
            "number 1); the server trains 2 job(s) at a time, 1 per person.")
        assert job_queue.waiting(third) == (
            "Waiting for the server: 1 training job(s) ahead of yours in the queue (yours is "
            "number 2); the server trains 2 job(s) at a time, 1 per person.")
        second.cancel()
        assert third.position == 1 and job_queue.waiting(second) is None
        assert job_queue.waiting(third).startswith(
            "Waiting for the server: 0 training job(s) ahead of yours in the queue (yours is "
            "number 1)")
        assert job_queue.waiting(first) is None
        assert panels._progress_line(first).startswith("Logistic regression: fitting · ")
        third.cancel()
        first.cancel()
    finally:
        slow_fold.open.set()
        pool.shutdown()
        job_queue.training_pool.clear()


# ---------------------------------------------------------------------- the Models page


@pytest.fixture
def server_pool(monkeypatch):
    """The app's process-wide pool (app_pages.job_queue), fresh, 1 job per user, 2 in all."""
    from app_pages import job_queue

    monkeypatch.setenv("CX_APP_JOBS_PER_USER", "1")
    monkeypatch.setenv("CX_APP_JOBS_PER_SERVER", "2")
    job_queue.training_pool.clear()
    pool = job_queue.training_pool()
    yield pool
    pool.shutdown()
    job_queue.training_pool.clear()


def _models_page():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
    at = AppTest.from_file(app, default_timeout=WAIT).run()
    at.switch_page("app_pages/models.py").run()
    at.number_input(key="folds").set_value(3).run()
    at.number_input(key="seed").set_value(47).run()  # a recipe no other test trains
    assert not at.exception and not at.error
    return at


def test_train_on_the_models_page_waits_in_the_servers_queue(server_pool, slow_fold):
    """Train runs as the local user's job in the server's pool: behind that user's running
    job it waits, and starts (and finishes, its models shown) once that one ends."""
    import threading
    import time

    at = _models_page()
    ahead = _job(at.session_state["analysis"], ["lr"]).start(pool=server_pool, user="local user")
    assert slow_fold.reached.wait(WAIT)
    seen = []

    def open_once_queued():  # what the queue holds while the page waits, then let ahead end
        deadline = time.monotonic() + WAIT
        while not server_pool.queued() and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.extend((j.user, j.position) for j in server_pool.queued())
        slow_fold.open.set()

    opener = threading.Thread(target=open_once_queued)
    opener.start()
    try:
        at.button(key="train").click().run()  # returns when the page's job has ended
    finally:
        opener.join()
    assert not at.exception and not at.error
    job = at.session_state["training_job"]
    assert seen == [("local user", 1)] and job.pooled is not None
    assert job.pooled.user == "local user"
    assert ahead.ended is not None and job.began >= ahead.ended  # it waited for its turn
    assert job.state == "finished" and job.handed_over
    assert sorted(at.session_state["analysis"].models) == ["lr seed=47", "nb seed=47"]
    assert not at.button(key="train").disabled


def test_cancel_on_the_models_page_takes_a_queued_job_out_at_once(server_pool, slow_fold):
    at = _models_page()
    ahead = _job(at.session_state["analysis"], ["lr"]).start(pool=server_pool, user="local user")
    assert slow_fold.reached.wait(WAIT)
    queued = _job(at.session_state["analysis"], ["nb"]).start(pool=server_pool,
                                                                user="local user")
    at.session_state["training_job"] = queued
    try:
        assert queued.position == 1
        queued.cancel()  # what the Cancel button's on_click does before the rerun
        at.run()  # returns at once: the queued job has ended
        assert not at.exception and not at.error
        assert any(w.value == "Training cancelled before it started (no model was trained)."
                   for w in at.warning)
        assert not at.button(key="train").disabled and server_pool.queued() == ()
        assert at.session_state["analysis"].models == {}
    finally:
        slow_fold.open.set()
        assert ahead.join(WAIT)
