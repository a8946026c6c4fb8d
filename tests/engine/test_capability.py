"""δ and φ (Armano et al., MATH.md §9)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.engine.binary import binary_metrics
from cx_app.engine.capability import delta_phi, feature_delta_phi


def test_delta_phi_by_hand():
    assert delta_phi(0.8, 0.1) == pytest.approx((0.7, -0.1), abs=1e-15)
    d, p = delta_phi([1.0, 0.0, 0.5], [0.0, 0.0, 0.5])
    np.testing.assert_allclose(d, [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(p, [0, -1, 0], atol=1e-15)


def test_feature_against_target_by_hand():
    # 4 promoters (3 with top-2 box), 6 others (1 with top-2 box)
    feature = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    target = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    r = feature_delta_phi(feature, target)
    assert (r.tpr, r.fpr) == pytest.approx((3 / 4, 1 / 6), abs=1e-15)
    assert r.delta == pytest.approx(3 / 4 - 1 / 6, abs=1e-15)
    assert r.phi == pytest.approx(3 / 4 + 1 / 6 - 1, abs=1e-15)
    assert (r.n_positive, r.n_negative, r.undefined) == (4, 6, ())


def test_feature_edge_cases():
    r = feature_delta_phi([True, False], [True, True])
    assert r.undefined == ("fpr", "delta", "phi") and r.delta == 0.0
    with pytest.raises(ValueError, match="boolean"):
        feature_delta_phi([0, 2], [1, 0])
    with pytest.raises(ValueError, match="values"):
        feature_delta_phi([0, 1, 1], [1, 0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_feature_delta_phi_is_the_binary_metrics_of_its_2x2(pairs):
    f = np.array([a for a, _ in pairs])
    t = np.array([b for _, b in pairs])
    r = feature_delta_phi(f, t)
    m = binary_metrics(
        tp=int((f & t).sum()),
        fn=int((~f & t).sum()),
        fp=int((f & ~t).sum()),
        tn=int((~f & ~t).sum()),
    )
    assert (r.delta, r.phi) == pytest.approx((m["delta"], m["phi"]), abs=1e-12)
    assert abs(r.delta) + abs(r.phi) <= 1 + 1e-12  # the rhombus
    # eq. (6), second form (corrected): δ = φ + 1 − 2·fp
    if not r.undefined:
        assert r.delta == pytest.approx(r.phi + 1 - 2 * r.fpr, abs=1e-12)
