"""Issue 37 point 10: the Models page's expected time comes from a timed trial training of
each algorithm on this machine (``TimeProbes``), scaled to the survey and the folds; a trial is
run once per algorithm and settings, and a failed one leaves the estimate said without it.
How close it comes to the real time, over many surveys and algorithms on a busy machine, is
measured by ``bench/bench_time_estimate.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.app.session import Analysis, survey_key
from cx_app.app.training import TimeProbes
from cx_app.models import timing
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_mapping
from cx_app.workspace import fits


@pytest.fixture
def analysis():
    rng = np.random.default_rng(5)
    n = 900  # more than a trial's 400 respondents: the trial is scaled up
    attrs = rng.integers(1, 11, (n, 3))
    score = np.clip(np.round(attrs @ [0.5, 0.3, 0.2] + rng.normal(0, 1.5, n)), 0, 10)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", score.astype(int))
    schema = schema_from_mapping(target="NPS", scale=(0, 10),
                                 attributes=["Price", "Network", "Shops"])
    survey = load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="s.csv")
    return Analysis(survey=survey, plan=survey.schema.plan_spec,
                    data_key=survey_key(survey.source.sha256, None, schema.to_yaml(), "s.csv"))


def _fallback(algorithms, folds):
    return fits.expected_times(None, algorithms, preset=None, respondents=900, attributes=3,
                               folds=folds)


def test_a_trial_is_timed_once_and_scaled_to_the_folds(analysis, monkeypatch):
    calls = []
    real = timing.probe_seconds

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(timing, "probe_seconds", counted)
    probes = TimeProbes()
    algorithms = {"lr": {}, "nb": {}}
    ten = probes.expected(analysis, algorithms, _fallback(algorithms, 10), preset=None,
                          folds=10, calibration="none")
    five = probes.expected(analysis, algorithms, _fallback(algorithms, 5), preset=None,
                           folds=5, calibration="none")
    assert sorted(calls) == ["lr", "nb"] and len(probes) == 2  # not timed again for 5 folds
    assert all(e.probed and not e.learned for e in ten.estimates.values())
    for algorithm in algorithms:  # the cost model's scaling: folds × (n_train)^b
        b = timing.COSTS[algorithm].b
        ratio = ten.estimates[algorithm].seconds / five.estimates[algorithm].seconds
        assert ratio == pytest.approx(10 / 5 * (900 * 9 / 10 / (900 * 4 / 5)) ** b)
    assert "timed by a short trial training on this machine just now for lr, nb" in (
        ten.sentence())
    probes.expected(analysis, {"lr": {"C": 0.5}}, _fallback({"lr": {"C": 0.5}}, 10),
                    preset=None, folds=10, calibration="none")
    assert calls[-1] == "lr" and len(probes) == 3  # other settings: a trial of their own


def test_a_failed_trial_keeps_the_estimate_said_without_it(analysis, monkeypatch):
    def failing(*args, **kwargs):
        raise ValueError("no trial here")

    monkeypatch.setattr(timing, "probe_seconds", failing)
    fallback = _fallback({"lr": {}}, 10)
    times = TimeProbes().expected(analysis, {"lr": {}}, fallback, preset=None, folds=10,
                                  calibration="none")
    assert times.estimates == fallback.estimates and not times.estimates["lr"].probed
