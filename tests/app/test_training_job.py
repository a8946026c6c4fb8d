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
