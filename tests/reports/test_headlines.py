"""Headlines from typed facts (``cx_app/reports/headlines.py``): one test per kind of fact, each
title claiming exactly what its fact holds; and the deck's best-model fact built from results
by the best-model rule (the slide-16 contradiction of issue 37 cannot come back)."""

from __future__ import annotations

import pandas as pd
import pytest
from pydantic import ValidationError
from report_fixtures import make_results

from cx_app.models.names import model_display_name
from cx_app.models.results import Results
from cx_app.reports.headlines import (
    BestModelFact,
    ChangeFact,
    DriversFact,
    FirstWaveFact,
    ReferenceOverallFact,
    ReferenceSegmentFact,
    ReferenceWavesFact,
    SegmentMovesFact,
)
from cx_app.reports.pptx_deck import best_model_fact
from cx_app.result import Estimate

LEVELS = ("the original scale", "3x3+IM", "2x2+IM")


def test_best_model_depends_on_the_level_only_when_it_differs():
    same = BestModelFact(models=3, best_by_level=tuple((lv, "Ordinal") for lv in LEVELS))
    assert same.same_everywhere
    assert same.headline() == "Ordinal is the best model at every level"
    assert "depends" not in same.headline()
    differs = BestModelFact(models=3, best_by_level=(
        (LEVELS[0], "Ordinal"), (LEVELS[1], "SVM"), (LEVELS[2], "Ordinal")))
    assert differs.headline() == ("The best model depends on the level: Ordinal at the "
                                  "original scale and 2x2+IM, SVM at 3x3+IM")
    one = BestModelFact(models=1, best_by_level=((LEVELS[0], "Ordinal"),))
    assert one.headline() == "Ordinal is the program's one model, so there is no other to compare"
    assert BestModelFact(models=0).headline() == "The program's results hold no model measures"
    with pytest.raises(ValidationError):  # frozen
        same.models = 2


def test_the_deck_fact_ranks_each_level_by_mean_fold_accuracy():
    doc = make_results()
    results = Results.from_dict(doc)
    fact = best_model_fact(results)
    expected = []
    for level in results.level_names():
        means = {m: sum(doc["models"][m]["levels"][level]["per_fold"]["accuracy"]) / 3
                 for m in doc["models"]}
        expected.append(max(means, key=means.get))
    assert [model for _, model in fact.best_by_level] == [model_display_name(m) for m in expected]
    assert fact.same_everywhere == (len(set(expected)) == 1)
    assert fact.headline().startswith("The best model depends") == (len(set(expected)) > 1)


def test_change_fact_says_beyond_only_when_significant():
    up = ChangeFact(score_name="NPS", since="Q2", change=4.26, significant=True)
    assert up.headline() == "The estimated NPS rose 4.3 points since Q2, beyond its uncertainty"
    down = ChangeFact(score_name="net score", since="Q2", change=-1.0, significant=False)
    assert down.headline() == "The estimated net score fell 1.0 points since Q2, within its uncertainty"
    flat = ChangeFact(score_name="NPS", since="Q2", change=0.0, significant=False)
    assert flat.headline() == "The estimated NPS did not move since Q2, within its uncertainty"
    assert FirstWaveFact(score_name="NPS", wave="Q1", score="12.0").headline() == \
        "The first wave, Q1, has an estimated NPS of 12.0"


def test_segment_moves_fact_names_only_flagged_values():
    none = SegmentMovesFact(head="Region in Q3", since="Q2")
    assert none.headline() == "Region in Q3: no value moved beyond its uncertainty since Q2"
    moved = SegmentMovesFact(head="Region in Q3", since="Q2", rises=("North",),
                             falls=("A", "B", "C", "D"))
    assert moved.headline() == ("Region in Q3: North rose and A, B, C and 1 more fell since Q2, "
                                "beyond the uncertainty")
    first = SegmentMovesFact(head="Region in Q1", since=None, highest="South", estimated=3)
    assert first.headline() == "Region in Q1: South has the highest NPS, beyond the uncertainty"
    level = SegmentMovesFact(head="Region in Q1", since=None, estimated=3)
    assert level.headline() == "Region in Q1: no value's NPS stands out beyond the uncertainty"
    assert SegmentMovesFact(head="Region in Q1", since=None).headline() == \
        "Region in Q1: every value is too small to estimate"


def test_a_first_waves_highest_segment_is_named_only_beyond_the_uncertainty():
    """The bank-like wave of the new-user walk: East -48.7, South -48.7, North -49.2 with
    standard errors near 5 is no ranking; 12 points apart with standard errors of 2 is one
    (z = 12 / (2·√2) = 4.2)."""
    from cx_app.reports.pptx_deck import _highest_beyond_uncertainty

    close = pd.DataFrame({"group": ["South", "East", "North"], "nps": [-48.66, -48.70, -49.2],
                          "se": [4.9, 5.8, 5.0]})
    assert _highest_beyond_uncertainty(close) is None
    apart = pd.DataFrame({"group": ["South", "East"], "nps": [-36.0, -48.0], "se": [2.0, 2.0]})
    assert _highest_beyond_uncertainty(apart) == "South"
    # z = 5.5 / (2·√2) = 1.94 < 1.96: not beyond
    near = pd.DataFrame({"group": ["South", "East"], "nps": [-42.5, -48.0], "se": [2.0, 2.0]})
    assert _highest_beyond_uncertainty(near) is None


def test_drivers_fact_claims_a_driver_only_beyond_uncertainty():
    assert DriversFact(score_name="NPS").headline() == \
        "No attribute drives the NPS clearly more than the others"
    assert DriversFact(score_name="NPS", top=("Price",)).headline() == \
        "Price drives the NPS most, beyond its uncertainty"
    assert DriversFact(score_name="NPS", top=("Price", "Network")).headline() == \
        "Price and Network drive the NPS most, beyond their uncertainty"
    assert DriversFact(score_name="NPS", analysed=False).headline() == \
        "The program's results hold no driver analysis"


def test_reference_facts():
    overall = ReferenceOverallFact(score_name="NPS", respondents=1200,
                                   score=Estimate(value=-3.84, ci95=(-9.0, 1.5)))
    assert overall.headline() == ("The reference survey's NPS is -3.8 (95% interval -9.0 to "
                                  "+1.5, 1,200 respondents)")
    segment = ReferenceSegmentFact(segment="Bank", score_name="NPS", above=("C",),
                                   below=("B",))
    assert segment.headline() == ("Bank in the reference survey: C above and B below the other "
                                  "respondents' NPS, beyond the uncertainty")
    assert ReferenceSegmentFact(segment="Bank", score_name="NPS").headline() == (
        "Bank in the reference survey: no value differs from the other respondents beyond the "
        "uncertainty")
    waves = ReferenceWavesFact(score_name="NPS", first="Q1", last="Q4", falls=("Q3",))
    assert waves.headline() == ("The reference survey's NPS from Q1 to Q4: fell in Q3, beyond "
                                "the uncertainty")
    assert ReferenceWavesFact(score_name="NPS", first="Q1", last="Q4").headline() == (
        "The reference survey's NPS from Q1 to Q4: no wave-on-wave change beyond the "
        "uncertainty")
