"""ROC of a 2×2+IM (hand example, slow loop from MATH.md §7, endpoints) and one-vs-rest ROC."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import NPS_PLAN, parse_plan
from cx_app.engine.roc import ovr_roc, reduced_roc
from cx_app.errors import AnalysisError


def _proba(rows):
    p = np.zeros((len(rows), 11))
    for r, cells in enumerate(rows):
        for c, v in cells.items():
            p[r, c] = v
    return p


def test_nps_by_hand():
    y = [9, 7, 3, 0]
    p = _proba([{9: 0.6, 1: 0.4}, {10: 0.5, 7: 0.3, 2: 0.2}, {8: 0.7, 3: 0.3}, {0: 0.9, 10: 0.1}])
    # scores (passives+promoters): 0.6, 0.8, 0.7, 0.1. If called positive:
    #   r1 → promoters → 9: TP;  r2 (actual 7) → promoters (0.5 > 0.3) → 10: IMP (strict step)
    #   r3 (detractor) → passives → 8: FP;  r4 → promoters → 10: FP.  P_actual = N_actual = 2.
    # thresholds +inf, 0.8 (r2: IMP), 0.7 (r3: FP), 0.6 (r1: TP), 0.1 (r4: FP)
    roc = reduced_roc(y, p, resolve_plan(NPS_PLAN))
    assert roc.fpr.tolist() == [0, 0, 0.5, 0.5, 1]
    assert roc.tpr.tolist() == [0, 0, 0, 0.5, 0.5]
    np.testing.assert_allclose(roc.thresholds, [np.inf, 0.8, 0.7, 0.6, 0.1], rtol=0, atol=1e-15)
    assert roc.tpr_max == 0.5  # TP_ML / P_actual = 1/2: r2 stays IM at every threshold
    assert roc.auc == pytest.approx(0.25, abs=1e-15)
    assert roc.random_auc == pytest.approx(0.25, abs=1e-15)
    assert roc.positive == "passives_promoters"
    # the classes-then-plan call form gives the same curve
    again = reduced_roc(y, p, resolve_plan(NPS_PLAN), classes=tuple(range(11)))
    np.testing.assert_array_equal(again.tpr, roc.tpr)
    with pytest.raises(AnalysisError, match="not the plan's classes"):
        reduced_roc(y, p, resolve_plan(NPS_PLAN), classes=tuple(range(1, 12)))


def test_ties_go_to_the_first_listed_member_and_descend_to_a_class():
    # step 1: S groups (so IM exists inside them); step 2 lists promoters before passives.
    plan = parse_plan(
        {
            "classes": list(range(4)),
            "plan": [
                {"name": "s1", "groups": [
                    {"name": "neg", "members": [0], "option": "R"},
                    {"name": "mid", "members": [1, 2], "option": "S"},
                    {"name": "top", "members": [3], "option": "R"}]},
                {"name": "s2", "positive": "pos", "groups": [
                    {"name": "pos", "members": ["top", "mid"], "option": "R"},
                    {"name": "n", "members": ["neg"], "option": "R"}]},
            ],
        }
    )  # fmt: skip
    rp = resolve_plan(plan)
    # r1: actual 3; top 0.25 ties mid (0.125 + 0.125): first listed "top" → class 3: TP.
    # r2: actual 2; mid 0.5 wins; inside mid 1 and 2 tie at 0.25: first listed 1 → IM (strict).
    # r3: actual 0, predicted positive at every threshold that takes it: FP.
    p = np.array([[0.0, 0.125, 0.125, 0.25], [0.0, 0.25, 0.25, 0.0], [0.5, 0.0, 0.0, 0.125]])
    roc = reduced_roc([3, 2, 0], p, rp)
    # scores 0.5, 0.5, 0.125 → thresholds +inf, 0.5 (r1 TP, r2 IM), 0.125 (r3 FP)
    assert roc.tpr.tolist() == [0, 0.5, 0.5]
    assert roc.fpr.tolist() == [0, 0, 1]
    assert roc.tpr_max == 0.5


def test_needs_a_two_group_step():
    rp = resolve_plan(NPS_PLAN)
    with pytest.raises(AnalysisError, match="3 groups"):
        reduced_roc([0, 9], np.full((2, 11), 1 / 11), rp, step=0)


def test_absent_group_is_undefined_not_a_crash():
    rp = resolve_plan(NPS_PLAN)
    roc = reduced_roc([0, 1], np.full((2, 11), 1 / 11), rp)  # no actual positives
    assert roc.undefined and roc.auc == 0.0


# --- the slow loop, from the definition -----------------------------------------------------


def _spec_tree(spec):
    """Per step: {group: (option, members, declared TP member pairs)}, and covers per label."""
    prev = list(spec.classes)
    covers = [{c: {c} for c in prev}]
    steps = []
    for step in spec.plan:
        groups = {}
        level_cov = {}
        for g in step.groups:
            members = list(g.members)
            if g.option == "R":
                pairs = {(a, b) for a in members for b in members}
            elif g.option == "S":
                pairs = set()
            elif g.tp_rule == "predicted_ge_actual":
                pairs = {(a, b) for a in members for b in members if prev.index(b) >= prev.index(a)}
            elif g.tp_rule == "predicted_le_actual":
                pairs = {(a, b) for a in members for b in members if prev.index(b) <= prev.index(a)}
            else:
                pairs = {tuple(x) for x in g.tp_pairs}
            groups[g.name] = (g.option, members, pairs)
            level_cov[g.name] = set().union(*(covers[-1][m] for m in members))
        covers.append(level_cov)
        steps.append(groups)
        prev = [g.name for g in step.groups]
    return steps, covers


def _kind(steps, covers, level, a, b):
    """'TP', 'IM' or 'OFF' for original cell (actual a, predicted b) at ``level``."""
    if level == 0:
        return "TP" if a == b else "OFF"
    for name, (_option, members, pairs) in steps[level - 1].items():
        if a in covers[level][name]:
            if b not in covers[level][name]:
                return "OFF"
            ma = next(m for m in members if a in covers[level - 1][m])
            mb = next(m for m in members if b in covers[level - 1][m])
            if ma == mb:
                return _kind(steps, covers, level - 1, a, b)
            return "TP" if (ma, mb) in pairs else "IM"
    raise AssertionError("class in no group")


def _descend(steps, covers, level, group, prob):
    for lvl in range(level, 0, -1):
        members = steps[lvl - 1][group][1]
        best, best_p = None, None
        for m in members:
            s = sum(prob[c] for c in covers[lvl - 1][m])
            if best is None or s > best_p:
                best, best_p = m, s
        group = best
    return group


def slow_roc(y, proba, spec):
    steps, covers = _spec_tree(spec)
    level = len(steps)
    last = spec.plan[-1]
    pos = last.positive or last.groups[1].name
    neg = next(g.name for g in last.groups if g.name != pos)
    pos_cols = sorted(covers[level][pos])
    score = proba[:, pos_cols].sum(axis=1)
    actual_pos = np.array([c in covers[level][pos] for c in y])
    p_actual, n_actual = actual_pos.sum(), (~actual_pos).sum()
    fpr, tpr = [], []
    for t in [np.inf, *sorted(set(score.tolist()), reverse=True)]:
        counts = {"TP": 0, "FP": 0, "IMP": 0, "FN": 0, "TN": 0, "IMN": 0}
        for i, a in enumerate(y):
            group = pos if score[i] >= t else neg
            b = _descend(steps, covers, level, group, proba[i])
            kind = _kind(steps, covers, level, a, b)
            if group == pos:
                key = {"TP": "TP", "IM": "IMP", "OFF": "FP"}[kind]
            else:
                key = {"TP": "TN", "IM": "IMN", "OFF": "FN"}[kind]
            counts[key] += 1
        assert sum(counts.values()) == len(y)
        tpr.append(counts["TP"] / p_actual)
        fpr.append(counts["FP"] / n_actual)
    return np.array(fpr), np.array(tpr)


@st.composite
def roc_cases(draw):
    k = draw(st.integers(3, 7))
    labels = list(range(k))
    steps = []
    n_steps = draw(st.integers(1, 3))
    for s in range(n_steps):
        last = s == n_steps - 1 or len(labels) == 2
        m = 2 if last else draw(st.integers(2, len(labels)))
        order = draw(st.permutations(labels))
        cuts = sorted(
            draw(st.sets(st.integers(1, len(labels) - 1), min_size=m - 1, max_size=m - 1))
        )
        bounds = [0, *cuts, len(labels)]
        groups = []
        for a in range(m):
            members = list(order[bounds[a] : bounds[a + 1]])
            option = draw(st.sampled_from(["R", "S", "RS"]))
            g = {"name": f"s{s}g{a}", "members": members, "option": option}
            if option == "RS":
                if draw(st.booleans()):
                    g["tp_rule"] = draw(
                        st.sampled_from(["predicted_ge_actual", "predicted_le_actual"])
                    )
                else:
                    pair = st.tuples(st.sampled_from(members), st.sampled_from(members))
                    g["tp_pairs"] = draw(st.lists(pair, max_size=3))
            groups.append(g)
        step = {"name": f"step{s}", "groups": groups}
        if last and draw(st.booleans()):
            step["positive"] = groups[0]["name"]
        steps.append(step)
        labels = [g["name"] for g in groups]
        if last:
            break
    spec = parse_plan({"classes": list(range(k)), "plan": steps})
    n = draw(st.integers(2, 25))
    y = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    # multiples of 1/16, not normalized: sums are exact in any order, so ties are real ties
    cells = draw(st.lists(st.integers(0, 4), min_size=n * k, max_size=n * k))
    proba = np.array(cells, dtype=float).reshape(n, k) / 16
    return spec, np.array(y), proba


@settings(max_examples=150, deadline=None)
@given(roc_cases())
def test_vectorized_roc_equals_slow_loop(case):
    spec, y, proba = case
    rp = resolve_plan(spec)
    roc = reduced_roc(y, proba, rp)
    if roc.undefined:
        return
    fpr, tpr = slow_roc(y.tolist(), proba, spec)
    np.testing.assert_allclose(roc.fpr, fpr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(roc.tpr, tpr, rtol=0, atol=1e-12)
    # eqs. (37)–(42): from (0,0) to (1, TP_ML/P_actual); monotone; AUC within the ROC space
    assert (roc.fpr[0], roc.tpr[0]) == (0, 0)
    assert roc.fpr[-1] == pytest.approx(1, abs=1e-12)
    assert roc.tpr[-1] == pytest.approx(roc.tpr_max, abs=1e-12)
    assert np.all(np.diff(roc.fpr) >= 0) and np.all(np.diff(roc.tpr) >= 0)
    assert 0 <= roc.auc <= roc.tpr_max + 1e-12
    assert roc.random_auc == pytest.approx(roc.tpr_max / 2, abs=1e-15)


def test_plain_two_class_problem_matches_sklearn_auc():
    # with two classes and R groups (no IM), the reduced ROC is the ordinary ROC
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    p1 = np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0, 1)
    proba = np.c_[1 - p1, p1]
    spec = parse_plan({"classes": [0, 1], "plan": [{"name": "b", "positive": "one", "groups": [
        {"name": "zero", "members": [0]}, {"name": "one", "members": [1]}]}]})  # fmt: skip
    roc = reduced_roc(y, proba, resolve_plan(spec))
    assert roc.auc == pytest.approx(roc_auc_score(y, p1), abs=1e-12)
    assert roc.tpr_max == 1


def test_ovr_roc_matches_sklearn_and_lists_absent_classes():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 4, 300)  # class 4 never occurs
    logits = rng.normal(size=(300, 5)) + 1.5 * np.eye(5)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    res = ovr_roc(y, proba, range(5))
    assert res.undefined == (4,) and res.auc[4] is None and res.curves[4] is None
    for c in range(4):
        assert res.auc[c] == pytest.approx(roc_auc_score(y == c, proba[:, c]), abs=1e-12)
    assert res.macro_auc == pytest.approx(np.mean([res.auc[c] for c in range(4)]), abs=1e-12)
    # with every class present the macro equals scikit-learn's multi_class="ovr" macro
    p4 = proba[:, :4] / proba[:, :4].sum(axis=1, keepdims=True)
    full = ovr_roc(y, p4, range(4))
    assert full.macro_auc == pytest.approx(
        roc_auc_score(y, p4, multi_class="ovr", average="macro"), abs=1e-12
    )
