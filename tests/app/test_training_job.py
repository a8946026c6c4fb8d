"""The Models page's background training (cx_app.app.training): progress, cancel, hand-over."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.app.session import Analysis, ResultStore, survey_key
from cx_app.app.training import TrainingJob
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_mapping


@pytest.fixture
def analysis():
    rng = np.random.default_rng(5)
    n = 240
    attrs = rng.integers(1, 11, (n, 3))
    score = np.clip(np.round(attrs @ [0.5, 0.3, 0.2] + rng.normal(0, 1.5, n)), 0, 10)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", score.astype(int))
    schema = schema_from_mapping(target="NPS", scale=(0, 10),
                                 attributes=["Price", "Network", "Shops"])
    survey = load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="s.csv")
    return Analysis(survey=survey, plan=survey.schema.plan_spec,
                    data_key=survey_key(survey.source.sha256, None, schema.to_yaml(), "s.csv"))


def _job(analysis, algorithms, cls=TrainingJob):
    return cls(analysis, {a: {} for a in algorithms}, folds=3, seed=0, calibration="none",
               store=ResultStore(8))


class CancelAfterFirstModel(TrainingJob):
    """Cancels as soon as the first model is done, before the second starts its first fold."""

    def _event(self, event):
        super()._event(event)
        self.cancel()


def test_a_finished_job_hands_its_models_over_once(analysis):
    job = _job(analysis, ["nb", "dt"]).start()
    assert job.wait(120)
    assert job.state == "finished" and job.message == "Training finished"
    assert job.share == 1.0 and [e.status for e in job.events] == ["trained", "trained"]
    assert analysis.models == {}  # trained on a shadow: nothing changes under a page's feet
    assert not job.handed_over
    assert job.finish() is True and job.finish() is False and job.handed_over
    assert list(analysis.models) == ["nb", "dt"] and analysis.trainings == 2
    assert analysis.models["nb"].cv.folds == 3 and len(analysis.models["nb"].cv.y_pred) == 240


def test_cancel_keeps_the_finished_models_and_drops_the_one_in_training(analysis):
    job = _job(analysis, ["nb", "lr", "dt"], CancelAfterFirstModel).start()
    assert job.wait(120)
    assert job.state == "cancelled"
    assert job.message == ("Training cancelled (kept: nb; lr was stopped during training and "
                           "dropped; not started: dt).")
    assert job.finish() is True
    assert list(analysis.models) == ["nb"] and analysis.trainings == 1


def test_cancel_before_the_first_fold_trains_nothing(analysis):
    job = _job(analysis, ["lr"])
    job.cancel()
    job.start()
    assert job.wait(60) and job.state == "cancelled"
    assert job.message == ("Training cancelled (no model was finished; lr was stopped during "
                           "training and dropped).")
    assert job.finish() is True and analysis.models == {}


def test_a_running_job_is_not_handed_over(analysis):
    job = _job(analysis, ["nb"])
    assert job.running and job.finish() is False  # not started yet: nothing to hand over
    job.start()
    job.wait(60)
    assert job.finish() is True


def test_around_is_entered_in_the_training_thread_and_its_error_is_one_sentence(analysis):
    """joblib's backend (a Dask cluster) is chosen per thread: ``around`` must be entered by
    the training thread; an error of ours raised by it (a lost cluster) is shown as is."""
    import contextlib
    import threading

    from cx_app.errors import ClusterError

    seen = []

    @contextlib.contextmanager
    def lost_cluster():
        seen.append(threading.current_thread().name)
        yield
        raise ClusterError("the run on the Dask cluster at tcp://x:8786 failed: run it again")

    job = TrainingJob(analysis, {"nb": {}}, folds=3, seed=0, calibration="none",
                      store=ResultStore(8), around=lost_cluster).start()
    assert job.wait(60)
    assert seen == ["cx-app-training"]
    assert job.state == "failed"
    assert job.message == ("Training stopped: the run on the Dask cluster at tcp://x:8786 "
                           "failed: run it again")


# ---------------------------------------------------------------------- an immediate cancel


def test_cancel_answers_without_waiting_for_the_fold_in_training(analysis, slow_fold):
    job = _job(analysis, ["nb", "lr"]).start()
    assert slow_fold.reached.wait(60)  # nb done, lr stuck in its first fold
    job.cancel()
    # answered at once: the thread is still inside lr's fold, the page has its models
    assert job.wait(0) and not job.running and job.state == "cancelled"
    assert job.cancelling and not job.join(0)
    assert job.message == ("Training cancelled (kept: nb; lr was stopped during training and "
                           "dropped).")
    assert job.finish() is True
    assert list(analysis.models) == ["nb"] and analysis.trainings == 1
    slow_fold.open.set()  # the fold ends; the thread sees the cancel and stops
    assert job.join(60) and not job.cancelling
    assert list(analysis.models) == ["nb"]  # lr never added behind the user's back
    assert job.state == "cancelled" and [e.label for e in job.events] == ["nb"]


def test_a_model_whose_folds_finished_before_the_cancel_is_kept(analysis, slow_permutation):
    job = _job(analysis, ["nb", "lr"]).start()
    assert slow_permutation.reached.wait(60)  # lr's 3 folds done, its permutation running
    job.cancel()
    assert job.message == ("Training cancelled (kept: nb, lr without its permutation "
                           "importance).")
    assert job.finish() is True and list(analysis.models) == ["nb", "lr"]
    assert analysis.trainings == 2 and analysis.trained_keys == {
        m.key for m in analysis.models.values()}
    lr = analysis.models["lr"]
    assert lr.permutation is None and analysis.models["nb"].permutation is not None
    slow_permutation.open.set()
    assert job.join(60)
    assert analysis.models["lr"] is lr  # the late permutation is not slipped in
    # the kept cross-validation is the one a full training makes
    full = Analysis(survey=analysis.survey, plan=analysis.plan, data_key=analysis.data_key)
    done = _job(full, ["lr"]).start()
    assert done.wait(60) and done.finish()
    np.testing.assert_array_equal(lr.cv.y_pred, full.models["lr"].cv.y_pred)
    np.testing.assert_allclose(lr.cv.proba, full.models["lr"].cv.proba)
    assert full.models["lr"].permutation is not None


# ---------------------------------------------------------------------- callbacks


def test_on_model_and_record_fit_are_called_once_per_fresh_model(analysis):
    import threading

    from cx_app.models.algorithms import resolve_preset

    models, fits = [], []
    store = ResultStore(8)

    def run(target):
        job = TrainingJob(target, {"nb": {}, "dt": {}}, folds=3, seed=0, calibration="none",
                          store=store,
                          on_model=lambda m: models.append((m, threading.current_thread().name)),
                          record_fit=lambda *fit: fits.append(fit)).start()
        assert job.wait(120) and job.finish()
        return job

    first = run(analysis)
    assert [(m.model_id, thread) for m, thread in models] == [("nb", "cx-app-training"),
                                                              ("dt", "cx-app-training")]
    assert models[0][0] is analysis.models["nb"]
    assert [f[:5] for f in fits] == [("nb", resolve_preset("nb"), 240, 3, 3),
                                     ("dt", resolve_preset("dt"), 240, 3, 3)]
    assert 0 < fits[0][5] + fits[1][5] <= first.elapsed
    run(analysis)  # repeats of this session: neither stored nor timed again
    assert len(models) == 2 and len(fits) == 2
    other = Analysis(survey=analysis.survey, plan=analysis.plan, data_key=analysis.data_key)
    run(other)  # hits in the shared store: models for this user, but no fit was measured
    assert [m.model_id for m, _ in models[2:]] == ["nb", "dt"] and len(fits) == 2


def test_record_fit_gets_reference_seconds_for_non_default_settings(analysis):
    from cx_app.models.timing import COSTS, expected_phases, settings_factor

    fits = []
    job = TrainingJob(analysis, {"rf": {"n_estimators": 20}}, folds=3, seed=0,
                      calibration="sigmoid", store=ResultStore(8),
                      record_fit=lambda *fit: fits.append(fit)).start()
    assert job.wait(120) and job.finish()
    assert fits[0][:5] == ("rf", "fast", 240, 3, 3)
    factor = settings_factor("rf", settings={"n_estimators": 20}, calibration="sigmoid",
                             preset="fast", rows=240, attributes=3, folds=3)
    # 20 trees of 100 and 3 calibration fits on 2/3 of each training fold: the fits' phase
    # only, at the survey's size (240 respondents, 3 attributes, 3 folds)
    phases = expected_phases("rf", rows=240, attributes=3, folds=3)
    assert factor == pytest.approx((phases.folds * 0.2 * 3 * (2 / 3) ** COSTS["rf"].b
                                    + phases.importance) / phases.total)
    measured = fits[0][5] * factor  # the wall time, between the job's start and its end
    assert 0 < measured <= job.elapsed


def test_a_failing_callback_keeps_the_model_and_warns(analysis):
    def broken(*_args):
        raise OSError("disk full")

    job = TrainingJob(analysis, {"nb": {}}, folds=3, seed=0, calibration="none",
                      store=ResultStore(8), on_model=broken, record_fit=broken).start()
    assert job.wait(60) and job.state == "finished" and job.finish()
    assert list(analysis.models) == ["nb"]
    assert job.events[0].warnings[-2:] == (
        "nb could not be saved to the workspace: disk full",
        "nb: its training time was not recorded for the time estimates: disk full")


def test_a_model_kept_by_a_cancel_reaches_on_model_when_the_thread_ends(analysis,
                                                                        slow_permutation):
    seen = []
    job = TrainingJob(analysis, {"lr": {}}, folds=3, seed=0, calibration="none",
                      store=ResultStore(8), on_model=seen.append,
                      record_fit=lambda *fit: seen.append(fit)).start()
    assert slow_permutation.reached.wait(60)
    job.cancel()
    assert seen == [] and job.finish()
    slow_permutation.open.set()
    assert job.join(60)
    assert seen == [analysis.models["lr"]]  # without permutation; no fit time: not complete


def test_the_time_left_counts_the_permutation_importance_as_steps(analysis, slow_permutation):
    """During lr's permutation importance (its folds done: half its steps) the time left is
    the importance's expected seconds rescaled by the pace so far, not "almost done"."""
    from cx_app.models.timing import Phases, remaining_seconds

    said = {"lr": Phases(2.0, 8.0)}
    job = TrainingJob(analysis, {"lr": {}}, folds=3, seed=0, calibration="none",
                      store=ResultStore(8), expected=said).start()
    assert slow_permutation.reached.wait(60)
    assert job.share == 0.5 and job.text == "lr: permutation importance"
    before = job.began
    left = job.remaining
    import time

    after = time.monotonic() - before
    # the formula between the job's start and now (it grows with the time elapsed): with no
    # time elapsed, 8 s × (0 + 2) / (2 + 2) (prior weight 0.2 × 10 s)
    lowest = remaining_seconds([said["lr"]], 0.5, 0.0)
    assert lowest == pytest.approx(8.0 * 2 / 4) and left >= lowest
    assert left <= remaining_seconds([said["lr"]], 0.5, after)
    slow_permutation.open.set()
    assert job.wait(60) and job.remaining is None and job.share == 1.0


def test_a_note_every_model_gives_is_listed_once(analysis):
    """A class with fewer respondents than folds gives every model the same fold-assignment
    note: the page lists the job's warnings each once (each model's own ones stay)."""
    frame = analysis.survey.frame[["nps", "price", "network", "shops"]].copy()
    zeros = frame.index[frame["nps"].eq(0)]
    frame.loc[zeros[2:], "nps"] = 1  # two respondents of 0, three folds
    rare = load_survey(frame.to_csv(index=False).encode(), schema=analysis.survey.schema,
                       filename="rare.csv")
    job = _job(Analysis(survey=rare, plan=rare.schema.plan_spec,
                        data_key=survey_key(rare.source.sha256, None, rare.schema.to_yaml(),
                                            "rare.csv")), ["nb", "dt"]).start()
    assert job.wait(120) and job.state == "finished"
    note = [w for w in job.events[0].warnings if w.startswith("class 0 has 2 respondent(s)")]
    assert len(note) == 1 and note[0] in job.events[1].warnings
    assert job.warnings.count(note[0]) == 1
    every = [w for e in job.events for w in e.warnings]
    assert set(job.warnings) == set(every) and len(job.warnings) == len(set(every))
