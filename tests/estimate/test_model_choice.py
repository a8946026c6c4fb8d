"""Issue 36, point 3: the model that estimates new waves is the one whose held-out net score errs
least (:mod:`cx_app.estimate.model_choice`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cx_app.errors import AnalysisError
from cx_app.estimate.alp import net_score_calibration_error
from cx_app.estimate.model_choice import (
    choose_estimation_model,
    choose_from_crossvalidation,
    heldout_net_error,
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
