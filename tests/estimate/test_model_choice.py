"""Issue 36, point 3: the model that estimates new waves is the one whose held-out net score errs
least (:mod:`cx_app.estimate.model_choice`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.stats

from cx_app.errors import AnalysisError
from cx_app.estimate.alp import net_score_calibration_error
from cx_app.estimate.model_choice import (
    CHOICE_RESAMPLES,
    CHOICE_Z,
    calibration_error_replicates,
    choose_estimation_model,
    choose_from_crossvalidation,
    heldout_net_error,
    heldout_net_replicates,
)
from cx_app.simulation.waves import ordered_probit
from cx_app.survey.nps import NPS_GROUPS


def _draw(rng, proba):
    """One score 0..10 per row from its class probabilities (inverse CDF)."""
    return (rng.random(len(proba))[:, None] > np.cumsum(proba, axis=1)[:, :-1]).sum(axis=1)


def _net(p):
    return 100.0 * float(np.mean(p[:, 9:].sum(axis=1) - p[:, :7].sum(axis=1)))


def test_the_smallest_error_wins_by_a_margin_ties_go_first_and_unmeasured_come_last():
    assert choose_estimation_model({"lr": 3.4, "nb": 0.9}).chosen == "nb"
    assert choose_estimation_model({"lr": 1.0, "nb": 1.0}).chosen == "lr"
    # the first model (the analyst's default) stays unless another errs less by a point
    kept = choose_estimation_model({"lr": 0.8, "nb": 0.0})
    assert kept.chosen == "lr" and "no other model errs less by 1.0 point" in kept.reason
    zero = choose_estimation_model({"lr": 1.0, "nb": 0.0})
    assert zero.chosen == "nb"
    # a noise-corrected error of 0 is said in words, not as "0.0 points"
    assert zero.reason.endswith("(nb, within sampling noise; lr 1.0)")
    assert choose_estimation_model({"lr": 0.8, "nb": 0.0}, margin=0.0).chosen == "nb"
    c = choose_estimation_model({"old": None, "lr": 2.0}, {"old": "old file"})
    assert c.chosen == "lr"
    assert c.reason == ("estimated with the model whose held-out net-score error was smallest "
                        "(lr, 2.0 points; old file not measured)")
    none = choose_estimation_model({"a": None, "b": None})
    assert none.chosen == "a" and "first model" in none.reason
    assert choose_estimation_model({"one": 0.5}).reason.endswith("(one, 0.5 points)")
    with pytest.raises(AnalysisError):
        choose_estimation_model({})
    assert heldout_net_error(SimpleNamespace(alp_gap=None)) is None
    assert heldout_net_error(SimpleNamespace(
        alp_gap=SimpleNamespace(net_calibration_error=1.25))) == 1.25


def test_the_chosen_model_leans_less_towards_the_reference_on_a_shifted_wave():
    rng = np.random.default_rng(36)
    u_ref, u_wave = rng.normal(0.3, 0.6, 6000), rng.normal(0.6, 0.6, 3000)  # the wave moved
    truth_ref, truth_wave = ordered_probit(u_ref), ordered_probit(u_wave)
    y = _draw(rng, truth_ref)

    def flattened(p):  # too flat: every respondent pulled 40 % towards the reference's mean
        return 0.6 * p + 0.4 * truth_ref.mean(axis=0)

    classes = tuple(range(11))
    results = {m: SimpleNamespace(class_positions=lambda y=y: y, proba=f(truth_ref),
                                  classes=classes)
               for m, f in (("flat", flattened), ("calibrated", lambda p: p))}
    choice = choose_from_crossvalidation(results, NPS_GROUPS,
                                         {"flat": "flat model", "calibrated": "true model"})
    # the errors are the held-out net-score calibration errors themselves
    for m, cv in results.items():
        assert choice.errors[m] == pytest.approx(
            net_score_calibration_error(y, cv.proba, classes, NPS_GROUPS))
    assert choice.chosen == "calibrated"
    assert choice.errors["flat"] > 3 * choice.errors["calibrated"]
    assert choice.reason.startswith("estimated with the model whose held-out net-score error "
                                    "was smallest (true model, ")
    # on the shifted wave, the flat model's estimate leans back towards the reference by
    # 40 % of the move (a hand-computable pull); the chosen one does not lean
    move = _net(truth_wave) - _net(truth_ref)
    assert _net(flattened(truth_wave)) - _net(truth_wave) == pytest.approx(-0.4 * move)
    assert move > 10


def test_the_first_model_stays_unless_another_errs_less_beyond_the_paired_noise():
    names = {"lr": "logistic regression", "nb": "naive Bayes"}
    errors = {"lr": 3.0, "nb": 0.0}
    # the replicates' difference has standard deviation 1 (ddof=1): 3.0 points is 3 SEs
    base = np.array([-1.0, 1.0, -1.0, 1.0]) * np.sqrt(3 / 4)
    assert np.std(base, ddof=1) == pytest.approx(1.0)
    nb = np.array([0.2, 0.0, 0.4, 0.1])
    moved = choose_estimation_model(errors, names, replicates={"lr": nb + 3 + base, "nb": nb})
    assert moved.chosen == "nb"
    # 2.5 times the spread: 1.2 SEs, within the one-sided 10 % test's 1.28
    kept = choose_estimation_model(errors, names,
                                   replicates={"lr": nb + 3 + 2.5 * base, "nb": nb})
    assert kept.chosen == "lr"
    assert kept.reason == (
        "estimated with logistic regression (held-out net-score error 3.0 points): naive Bayes "
        "errs less (within sampling noise) by 3.0 points, 1.2 standard errors of the "
        "difference: within the noise of the comparison (more than 1.28 needed)")
    # twice the spread: 1.5 SEs, beyond it
    assert choose_estimation_model(errors, replicates={"lr": nb + 3 + 2 * base, "nb": nb}
                                   ).chosen == "nb"
    assert scipy.stats.norm.ppf(0.90) == pytest.approx(CHOICE_Z, abs=1e-15)
    # a file without replicates (saved before they were kept): the margin of 1 point decides
    assert choose_estimation_model(errors, names, replicates={"lr": None, "nb": nb}
                                   ).chosen == "nb"
    assert choose_estimation_model({"lr": 0.9, "nb": 0.0}, replicates={"nb": nb}
                                   ).chosen == "lr"


def test_replicates_are_the_error_on_resamples_every_model_shares():
    rng = np.random.default_rng(7)
    n = 900
    truth = ordered_probit(rng.normal(0.3, 0.6, n))
    y = _draw(rng, truth)
    classes = tuple(range(11))
    flat = 0.7 * truth + 0.3 * truth.mean(axis=0)
    r_true, r_flat = (calibration_error_replicates(y, p, classes, NPS_GROUPS, resamples=50)
                      for p in (truth, flat))
    # the resamples depend on the number of respondents alone: drawn again by hand
    draws = np.random.default_rng([36, n])
    for k in range(50):
        i = draws.integers(0, n, n)
        assert r_true[k] == pytest.approx(net_score_calibration_error(y[i], truth[i], classes,
                                                                      NPS_GROUPS))
        assert r_flat[k] == pytest.approx(net_score_calibration_error(y[i], flat[i], classes,
                                                                      NPS_GROUPS))
    # paired: the difference varies less than either error alone would if drawn apart
    assert np.std(r_flat - r_true) < np.hypot(np.std(r_flat), np.std(r_true))


def test_a_trained_model_keeps_its_replicates():
    from cx_app.estimate.training import train_model
    from cx_app.survey.importing import load_survey
    from cx_app.survey.nps import groups_for_schema
    from cx_app.survey.samples import sample_path

    survey = load_survey(sample_path("retail_csat"))
    outcome = train_model(survey, "nb", folds=3, seed=1)
    cv = outcome.cv
    kept = heldout_net_replicates(outcome.model.cv)
    assert len(kept) == CHOICE_RESAMPLES
    assert kept == pytest.approx(calibration_error_replicates(
        cv.class_positions(), cv.proba, cv.classes, groups_for_schema(survey.schema)).tolist())
    assert heldout_net_replicates(SimpleNamespace(net_score_error=None)) is None
