"""The two survey shapes of ``cx_app.simulation.shapes`` look like ``shared/SURVEYS.md`` says."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cx_app.simulation.shapes import (
    NA_TEXT,
    SIGNED_ATTRIBUTES,
    SIGNED_TARGET,
    SKEWED_ATTRIBUTES,
    SKEWED_TARGET,
    simulate_signed_agreement,
    simulate_skewed_six,
)


def test_skewed_six_is_top_heavy_with_routing_blanks():
    frame = simulate_skewed_six(3000, seed=5)
    pd.testing.assert_frame_equal(frame, simulate_skewed_six(3000, seed=5))  # seeded
    target = frame[SKEWED_TARGET]
    assert set(target) <= set(range(1, 7)) and target.isin([5, 6]).mean() > 0.5
    for a in SKEWED_ATTRIBUTES:
        blank = frame[a.column].isna()
        assert abs(blank.mean() - a.not_used) < 0.03, a.column  # blanks (None), no codes
        answered = frame.loc[~blank, a.column].astype(int)
        assert set(answered) <= set(range(1, 7)) and answered.mean() > 4, a.column


def test_signed_scale_keeps_minus_one_and_half_of_one_statement_is_na():
    frame = simulate_signed_agreement(3000, seed=6)
    assert set(frame[SIGNED_TARGET]) == set(range(1, 6))
    for a in SIGNED_ATTRIBUTES:
        column = frame[a.column]
        na = column.eq(NA_TEXT)
        assert abs(na.mean() - a.not_used) < 0.03, a.column
        answered = column[~na].astype(int)
        assert set(answered) == {-2, -1, 0, 1, 2}, a.column  # −1 is a real answer
    assert max(frame[a.column].eq(NA_TEXT).mean() for a in SIGNED_ATTRIBUTES) > 0.45


def test_unanswered_statements_move_the_target_as_their_effect_says():
    """The invoice statement's gap raises the utility by 0.20: respondents without an answer
    rate higher on average than those who answered it."""
    frame = simulate_signed_agreement(20_000, seed=7)
    invoice = next(a for a in SIGNED_ATTRIBUTES if a.not_used)
    na = frame[invoice.column].eq(NA_TEXT)
    target = frame[SIGNED_TARGET].astype(float)
    assert target[na].mean() > target[~na].mean() + 0.05
    assert np.isclose(na.mean(), 0.5, atol=0.02)
