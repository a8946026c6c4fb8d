"""Grouping and multi-step reduction: a hand-reduced NPS matrix, plan errors, identities."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.engine.confusion import ConfusionMatrix
from cx_app.engine.grouping import resolve_plan
from cx_app.engine.levels import reduce_confusion
from cx_app.engine.plan import NPS_PLAN, parse_plan
from cx_app.errors import AnalysisError, PlanError

NPS = tuple(range(11))

# A small NPS matrix, rows actual 0..10, columns predicted 0..10; N = 27.
CELLS = {
    (0, 0): 2, (0, 3): 1, (1, 9): 1, (2, 6): 1, (3, 3): 1, (5, 7): 1, (6, 4): 2, (6, 8): 1,
    (7, 7): 3, (7, 8): 1, (8, 7): 2, (8, 10): 1,
    (9, 9): 2, (9, 10): 1, (10, 8): 1, (10, 9): 2, (10, 10): 4,
}  # fmt: skip
C = np.zeros((11, 11), dtype=np.int64)
for (i, j), v in CELLS.items():
    C[i, j] = v
CM = ConfusionMatrix(NPS, C)

D, P, PR = list(range(7)), [7, 8], [9, 10]


def one_step(option, **extra):
    groups = [
        {"name": "detractors", "members": D, "option": option, **extra},
        {"name": "passives", "members": P, "option": option, **extra},
        {"name": "promoters", "members": PR, "option": option, **extra},
    ]
    return parse_plan({"classes": list(NPS), "plan": [{"name": "3x3+IM", "groups": groups}]})


def reduced(plan):
    levels = reduce_confusion(CM, resolve_plan(plan))
    return levels[-1]


# Cells by group (actual→predicted):
#   D→D: (0,0)2 (0,3)1 (2,6)1 (3,3)1 (6,4)2 = 7;  D→P: (5,7)1 (6,8)1 = 2;  D→Pr: (1,9)1
#   P→P: (7,7)3 (7,8)1 (8,7)2 = 6;  P→Pr: (8,10)1
#   Pr→Pr: (9,9)2 (9,10)1 (10,9)2 (10,10)4 = 9;  Pr→P: (10,8)1


def test_relaxed_by_hand():
    lv = reduced(one_step("R"))
    assert lv.matrix.tolist() == [[7, 2, 1], [0, 6, 1], [0, 1, 9]]
    assert lv.im.tolist() == [0, 0, 0]
    assert lv.metrics["accuracy"] == pytest.approx(22 / 27, abs=1e-15)
    # recall(passives) = 6 / (6 + 1 + 0), precision(passives) = 6 / (2 + 6 + 1)
    assert lv.metrics["per_class"]["passives"]["recall"] == pytest.approx(6 / 7, abs=1e-15)
    assert lv.metrics["per_class"]["passives"]["precision"] == pytest.approx(6 / 9, abs=1e-15)


def test_strict_by_hand():
    lv = reduced(one_step("S"))
    # TP: D (0,0)2 + (3,3)1 = 3, IM 7−3 = 4; P (7,7)3, IM (7,8)1 + (8,7)2 = 3;
    # Pr (9,9)2 + (10,10)4 = 6, IM (9,10)1 + (10,9)2 = 3.
    assert lv.matrix.tolist() == [[3, 2, 1], [0, 3, 1], [0, 1, 6]]
    assert lv.im.tolist() == [4, 3, 3]
    # accuracy unchanged: original trace 2+1+3+2+4 = 12
    assert lv.metrics["accuracy"] == pytest.approx(12 / 27, abs=1e-15)
    # recall(D) = 3 / (3 + 3 + 4), precision(D) = 3 / (3 + 0 + 4)
    assert lv.metrics["per_class"]["detractors"]["recall"] == pytest.approx(3 / 10, abs=1e-15)
    assert lv.metrics["per_class"]["detractors"]["precision"] == pytest.approx(3 / 7, abs=1e-15)
    assert lv.metrics["per_class"]["detractors"]["im"] == 4


def test_hybrid_rule_by_hand():
    lv = reduced(one_step("RS", tp_rule="predicted_ge_actual"))
    # D: (0,0)(0,3)(2,6)(3,3) TP = 5, (6,4) IM = 2; P: (7,7)(7,8) TP = 4, (8,7) IM = 2;
    # Pr: (9,9)(9,10)(10,10) TP = 7, (10,9) IM = 2.
    assert lv.matrix.tolist() == [[5, 2, 1], [0, 4, 1], [0, 1, 7]]
    assert lv.im.tolist() == [2, 2, 2]
    lv = reduced(one_step("RS", tp_rule="predicted_le_actual"))
    # D: diag 3 + (6,4)2 = 5, IM (0,3)1 + (2,6)1 = 2; P: 3 + (8,7)2 = 5, IM 1;
    # Pr: 6 + (10,9)2 = 8, IM 1.
    assert lv.matrix.tolist() == [[5, 2, 1], [0, 5, 1], [0, 1, 8]]
    assert lv.im.tolist() == [2, 1, 1]


def test_hybrid_pairs_by_hand_with_string_members():
    plan = parse_plan(
        {
            "classes": list(NPS),
            "plan": [
                {
                    "name": "3x3+IM",
                    "groups": [
                        # string members match int labels by str()
                        {
                            "name": "D",
                            "members": [str(c) for c in D],
                            "option": "RS",
                            "tp_pairs": [[6, 4], ["0", "3"]],
                        },
                        {"name": "P", "members": P, "option": "S"},
                        {"name": "Pr", "members": PR, "option": "R"},
                    ],
                }  # fmt: skip
            ],
        }
    )
    lv = reduced(plan)
    # D: diag (0,0)2 (3,3)1 + (6,4)2 + (0,3)1 = 6, IM (2,6)1; P strict: 3, IM 3; Pr relaxed: 9
    assert lv.matrix.tolist() == [[6, 2, 1], [0, 3, 1], [0, 1, 9]]
    assert lv.im.tolist() == [1, 3, 0]
    assert resolve_plan(plan).steps[0].groups[0].members == tuple(D)  # the labels' own values


def test_nps_plan_two_steps_by_hand():
    levels = reduce_confusion(CM, resolve_plan(NPS_PLAN))
    assert [lv.name for lv in levels] == ["original", "3x3+IM", "2x2+IM"]
    assert levels[0].im is None and levels[0].matrix.tolist() == C.tolist()
    assert levels[1].matrix.tolist() == [[7, 2, 1], [0, 6, 1], [0, 1, 9]]
    two = levels[2]
    # strict D vs {P, Pr}: TP(PP) = 6 + 9, cross-member cells P→Pr 1 + Pr→P 1 become IM.
    assert two.labels == ("detractors", "passives_promoters")
    assert two.matrix.tolist() == [[7, 3], [0, 15]]
    assert two.im.tolist() == [0, 2]
    assert two.positive == "passives_promoters"
    m = two.metrics
    assert (m["tp"], m["fn"], m["imp"], m["fp"], m["tn"], m["imn"]) == (15, 0, 2, 3, 7, 0)
    assert m["tpr"] == pytest.approx(15 / 17, abs=1e-15)
    assert m["fpr"] == pytest.approx(3 / 10, abs=1e-15)
    assert m["pimr"] == pytest.approx(2 / 17, abs=1e-15)
    assert m["mcc"] == pytest.approx((17 * 7 - 0) / np.sqrt(20 * 17 * 7 * 10), abs=1e-15)
    assert m["accuracy"] == pytest.approx(22 / 27, abs=1e-15)
    assert "f1_macro" in m and "per_class" in m  # multiclass view of the same level too
    json.dumps([lv.to_dict() for lv in levels], allow_nan=False)


def test_strict_then_relaxed_carries_im_forward():
    plan = parse_plan(
        {
            "classes": list(NPS),
            "plan": [
                one_step("S").plan[0],
                {
                    "name": "2x2+IM",
                    "groups": [
                        {"name": "D", "members": ["detractors"], "option": "R"},
                        {"name": "PP", "members": ["passives", "promoters"], "option": "R"},
                    ],
                },
            ],
        }
    )
    levels = reduce_confusion(CM, resolve_plan(plan))
    two = levels[2]
    # PP: TP 3 + 6 + cross 1 + 1 = 11; IM 3 + 3 stays IM under R. D: TP 3, IM 4.
    assert two.matrix.tolist() == [[3, 3], [0, 11]]
    assert two.im.tolist() == [4, 6]
    assert two.positive == "PP"  # no positive in the plan: the second group
    assert "second group" in two.note


def test_three_step_plan_by_hand():
    # step 1 R: VL {0..3}, L {4,5,6}, P {7,8}, Pr {9,10}; step 2 S: D {VL, L}, P, Pr;
    # step 3: N {D} (R) vs PP {P, Pr} (RS, predicted ≥ actual by level order D < P < Pr).
    plan = parse_plan(
        {
            "classes": list(NPS),
            "plan": [
                {"name": "four", "groups": [
                    {"name": "VL", "members": [0, 1, 2, 3], "option": "R"},
                    {"name": "L", "members": [4, 5, 6], "option": "R"},
                    {"name": "P", "members": P, "option": "R"},
                    {"name": "Pr", "members": PR, "option": "R"}]},
                {"name": "three", "groups": [
                    {"name": "D", "members": ["VL", "L"], "option": "S"},
                    {"name": "P", "members": ["P"], "option": "S"},
                    {"name": "Pr", "members": ["Pr"], "option": "S"}]},
                {"name": "two", "positive": "PP", "groups": [
                    {"name": "N", "members": ["D"], "option": "R"},
                    {"name": "PP", "members": ["P", "Pr"], "option": "RS",
                     "tp_rule": "predicted_ge_actual"}]},
            ],
        }
    )  # fmt: skip
    levels = reduce_confusion(CM, resolve_plan(plan))
    assert [lv.name for lv in levels] == ["original", "four", "three", "two"]
    # VL→VL (0,0)2 (0,3)1 (3,3)1 = 4, VL→L (2,6)1, VL→Pr (1,9)1; L→L (6,4)2, L→P (5,7)(6,8) 2
    assert levels[1].matrix.tolist() == [[4, 1, 0, 1], [0, 2, 2, 0], [0, 0, 6, 1], [0, 0, 1, 9]]
    assert levels[1].im.tolist() == [0, 0, 0, 0]
    # D strict: TP 4 + 2, the VL→L cell becomes IM
    assert levels[2].matrix.tolist() == [[6, 2, 1], [0, 6, 1], [0, 1, 9]]
    assert levels[2].im.tolist() == [1, 0, 0]
    # PP: TP 6 + 9 + P→Pr 1 = 16, Pr→P 1 is IM; N keeps D's IM 1 (carried forward)
    two = levels[3]
    assert two.matrix.tolist() == [[6, 3], [0, 16]] and two.im.tolist() == [1, 1]
    m = two.metrics
    assert (m["tp"], m["fn"], m["imp"], m["fp"], m["tn"], m["imn"]) == (16, 0, 1, 3, 6, 1)
    assert (m["p_actual"], m["n_actual"], m["p_pred"], m["n_pred"]) == (17, 10, 20, 7)
    assert m["accuracy"] == pytest.approx(22 / 27, abs=1e-15)
    assert m["tpr"] == pytest.approx(16 / 17, abs=1e-15)
    assert m["nimr"] == pytest.approx(1 / 10, abs=1e-15)
    assert m["npv"] == pytest.approx(6 / 7, abs=1e-15)
    assert m["mcc"] == pytest.approx((17 * 7 - 3 * 0) / np.sqrt(20 * 17 * 7 * 10), abs=1e-15)
    assert levels[2].metrics["per_class"]["D"] == {
        "tp": 6, "fp": 0, "fn": 3, "tn": 17, "im": 1, "support": 10,
        "precision": pytest.approx(6 / 7), "recall": pytest.approx(6 / 10),
        "f1": pytest.approx(12 / 17),
    }  # fmt: skip


def test_no_respondents_gives_zeros_listed_as_undefined():
    levels = reduce_confusion(ConfusionMatrix(NPS, np.zeros((11, 11), int)), resolve_plan(NPS_PLAN))
    for lv in levels:
        assert lv.matrix.sum() == 0
        text = json.dumps(lv.to_dict(), allow_nan=False)
        assert "NaN" not in text
    m = levels[2].metrics
    assert m["accuracy"] == 0 and m["mcc"] == 0 and m["pt"] == 0
    assert {"accuracy", "tpr", "tnr", "ppv", "npv", "mcc", "pt", "f1"} <= set(m["undefined"])
    assert levels[1].metrics["undefined"]["precision"] == ["detractors", "passives", "promoters"]


def test_to_frame_has_im_row_and_column():
    lv = reduced(one_step("S"))
    frame = lv.to_frame()
    assert list(frame.index) == ["detractors", "passives", "promoters", "IM"]
    assert list(frame.columns) == list(frame.index)
    assert frame.loc["IM", "passives"] == 3 and frame.loc["passives", "IM"] == 3
    # rows incl. IM = actual counts: D 10, P 7, Pr 10
    assert frame.iloc[:3].sum(axis=1).tolist() == [10, 7, 10]
    assert frame.loc[:, ["detractors", "passives", "promoters"]].iloc[:3].sum().tolist() == [
        3 + 0 + 0,
        2 + 3 + 1,
        1 + 1 + 6,
    ]


def test_to_dict_keys_exact():
    lv = reduced(one_step("R"))
    assert set(lv.to_dict()) == {"name", "labels", "matrix", "im", "positive", "metrics"}


# --- plan errors --------------------------------------------------------------------------------


def _plan(groups, name="3x3+IM"):
    return parse_plan({"plan": [{"name": name, "groups": groups}]})


def test_unknown_member_names_step_and_group():
    plan = _plan([{"name": "detractors", "members": D}, {"name": "passives", "members": [7, 8, 11]},
                  {"name": "promoters", "members": PR}])  # fmt: skip
    with pytest.raises(PlanError) as err:
        resolve_plan(plan, NPS)
    assert str(err.value) == (
        "plan step '3x3+IM', group 'passives': member 11 is not a class of this level "
        "(classes: 0..10)"
    )


def test_missing_and_overlapping_classes():
    plan = _plan(
        [{"name": "a", "members": [0, 1, 2, 3, 4, 5, 6]}, {"name": "b", "members": [8, 9, 10]}]
    )
    with pytest.raises(PlanError, match=r"^plan step '3x3\+IM': class 7 is in no group$"):
        resolve_plan(plan, NPS)
    plan = _plan([{"name": "a", "members": [0, 1, 2, 3, 4, 5]}, {"name": "b", "members": [8, 9]}])
    with pytest.raises(PlanError, match=r"^plan step '3x3\+IM': classes 6, 7, 10 are in no group$"):
        resolve_plan(plan, NPS)
    plan = _plan(
        [
            {"name": "a", "members": [0, 1, 2, 3, 4, 5]},
            {"name": "b", "members": [5, 6, 7, 8, 9, 10]},
        ]
    )
    with pytest.raises(PlanError, match=r"^plan step '3x3\+IM': class 5 is in groups 'a' and 'b'$"):
        resolve_plan(plan, NPS)


def test_second_step_members_are_previous_groups():
    bad = NPS_PLAN.model_copy(deep=True).model_dump()
    bad["plan"][1]["groups"][1]["members"] = ["passives", "promotors"]
    with pytest.raises(PlanError, match="group 'passives_promoters': member 'promotors' is not"):
        resolve_plan(parse_plan(bad))


def test_rs_pair_outside_group_and_class_mismatch():
    plan = _plan([{"name": "a", "members": [0, 1, 2], "option": "RS", "tp_pairs": [[0, 5]]},
                  {"name": "b", "members": [3, 4, 5]}])  # fmt: skip
    with pytest.raises(PlanError, match=r"group 'a': tp_pairs entry \[0, 5\]: 5 is not a member"):
        resolve_plan(plan, range(6))
    with pytest.raises(PlanError, match="differ"):
        resolve_plan(NPS_PLAN, range(10))
    with pytest.raises(AnalysisError, match="differ"):
        reduce_confusion(ConfusionMatrix(range(5), np.eye(5)), resolve_plan(NPS_PLAN))


def test_csv_string_labels_match_plan_ints():
    cm = ConfusionMatrix(tuple(str(c) for c in NPS), C)
    levels = reduce_confusion(cm, resolve_plan(NPS_PLAN))
    assert levels[1].matrix.tolist() == [[7, 2, 1], [0, 6, 1], [0, 1, 9]]


# --- identities ---------------------------------------------------------------------------------


@st.composite
def plans_and_matrices(draw, max_steps=3):
    """A random K×K matrix and a random multi-step plan over it."""
    k = draw(st.integers(2, 7))
    real = draw(st.booleans())
    if real:
        c = np.array(draw(st.lists(st.floats(0, 5), min_size=k * k, max_size=k * k))).reshape(k, k)
    else:
        c = np.array(draw(st.lists(st.integers(0, 9), min_size=k * k, max_size=k * k))).reshape(
            k, k
        )
    labels = list(range(k))
    steps = []
    for s in range(draw(st.integers(1, max_steps))):
        if len(labels) < 2:
            break
        m = draw(st.integers(2, len(labels)))
        order = draw(st.permutations(labels))
        cuts = sorted(
            draw(st.sets(st.integers(1, len(labels) - 1), min_size=m - 1, max_size=m - 1))
        )
        parts = np.split(np.array(order, dtype=object), cuts)
        groups = []
        for a, part in enumerate(parts):
            option = draw(st.sampled_from(["R", "S", "RS"]))
            g = {"name": f"s{s}g{a}", "members": [v.item() if hasattr(v, "item") else v for v in part],
                 "option": option}  # fmt: skip
            if option == "RS":
                if draw(st.booleans()):
                    g["tp_rule"] = draw(
                        st.sampled_from(["predicted_ge_actual", "predicted_le_actual"])
                    )
                else:
                    mem = g["members"]
                    g["tp_pairs"] = draw(
                        st.lists(st.tuples(st.sampled_from(mem), st.sampled_from(mem)), max_size=4)
                    )
            groups.append(g)
        steps.append({"name": f"step{s}", "groups": groups})
        labels = [g["name"] for g in groups]
    return c, parse_plan({"classes": list(range(k)), "plan": steps})


def step_by_step(prev_matrix, prev_im, prev_labels, step):
    """Eqs. (17)–(20) written out from the previous level only (no masks)."""
    m = len(step.groups)
    owner = {}
    for a, g in enumerate(step.groups):
        for mem in g.members:
            owner[prev_labels.index(mem)] = a
    tp_pair = set()
    for g in step.groups:
        for x, y in g.tp_pairs:
            tp_pair.add((prev_labels.index(x), prev_labels.index(y)))
    out = np.zeros((m, m), dtype=prev_matrix.dtype)
    im = np.zeros(m, dtype=prev_matrix.dtype)
    for i in range(len(prev_labels)):
        im[owner[i]] += prev_im[i]  # IM carried forward
        for j in range(len(prev_labels)):
            a, b = owner[i], owner[j]
            v = prev_matrix[i, j]
            if a != b or i == j or (i, j) in tp_pair:
                out[a, b] += v  # off-diagonal; member TP; declared cross-member TP
            else:
                im[a] += v  # cross-member cell not in G_TP
    return out, im


def test_rs_rule_pairs_compare_previous_level_positions():
    # members listed out of order: the rule still compares label positions (0 < 1 < 2)
    plan = _plan([{"name": "a", "members": [2, 0, 1], "option": "RS", "tp_rule": "predicted_ge_actual"},
                  {"name": "b", "members": [3]}])  # fmt: skip
    g = resolve_plan(plan, range(4)).steps[0].groups[0]
    assert set(g.tp_pairs) == {(0, 1), (0, 2), (1, 2)}
    assert g.members == (2, 0, 1)


@settings(max_examples=150, deadline=None)
@given(plans_and_matrices())
def test_masks_equal_step_by_step_definition(case):
    c, plan = case
    rp = resolve_plan(plan)
    levels = reduce_confusion(ConfusionMatrix(rp.classes, c), rp)
    prev_m, prev_im, prev_labels = c, np.zeros(len(c), dtype=c.dtype), list(rp.classes)
    n = c.sum()
    for step, lv in zip(rp.steps, levels[1:], strict=True):
        exp_m, exp_im = step_by_step(prev_m, prev_im, prev_labels, step)
        np.testing.assert_allclose(lv.matrix, exp_m, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(lv.im, exp_im, rtol=1e-12, atol=1e-9)
        # totals preserved with IM; rows/columns incl. IM are the actual/predicted counts
        assert lv.matrix.sum() + lv.im.sum() == pytest.approx(n, rel=1e-12, abs=1e-9)
        g = step.membership
        np.testing.assert_allclose(lv.matrix.sum(1) + lv.im, c.sum(1) @ g, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(lv.matrix.sum(0) + lv.im, c.sum(0) @ g, rtol=1e-12, atol=1e-9)
        # TP + IM of a group = all of its within-group cells (eq. 8)
        within = np.array([c[np.ix_(g[:, a] == 1, g[:, a] == 1)].sum() for a in range(step.size)])
        np.testing.assert_allclose(np.diag(lv.matrix) + lv.im, within, rtol=1e-12, atol=1e-9)
        # masks: TP and IM disjoint and exactly the within-group cells
        same = step.group_of[:, None] == step.group_of[None, :]
        assert not np.any(step.tp_mask & step.im_mask)
        np.testing.assert_array_equal(step.tp_mask | step.im_mask, same)
        assert np.all(np.diag(step.tp_mask))
        prev_m, prev_im, prev_labels = lv.matrix, lv.im, list(step.labels)


@settings(max_examples=100, deadline=None)
@given(plans_and_matrices(max_steps=1))
def test_strict_keeps_accuracy_and_has_least_tp(case):
    c, plan = case
    rp = resolve_plan(plan)
    groups = [g.members for g in rp.steps[0].groups]
    tps = {}
    for option in ("S", "R", "RS"):
        extra = {"tp_rule": "predicted_ge_actual"} if option == "RS" else {}
        p = _plan([{"name": f"g{a}", "members": list(m), "option": option, **extra}
                   for a, m in enumerate(groups)])  # fmt: skip
        lv = reduce_confusion(ConfusionMatrix(rp.classes, c), resolve_plan(p, rp.classes))
        tps[option] = np.diag(lv[1].matrix)
        if option == "S":
            assert lv[1].metrics["accuracy"] == pytest.approx(lv[0].metrics["accuracy"], abs=1e-12)
    assert np.all(tps["S"] <= tps["R"] + 1e-9) and np.all(tps["S"] <= tps["RS"] + 1e-9)
    assert np.all(tps["RS"] <= tps["R"] + 1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(4, 9), st.data())
def test_r_then_r_and_s_then_s_equal_one_step_on_the_union(k, data):
    c = np.array(data.draw(st.lists(st.integers(0, 9), min_size=k * k, max_size=k * k))).reshape(
        k, k
    )
    order = data.draw(st.permutations(range(k)))
    a, b = sorted(data.draw(st.sets(st.integers(1, k - 1), min_size=2, max_size=2)))
    parts = [list(order[:a]), list(order[a:b]), list(order[b:])]
    for option in ("R", "S"):
        two = _plan(
            [{"name": f"g{i}", "members": p, "option": option} for i, p in enumerate(parts)]
        )
        two = parse_plan({"plan": [*two.plan, {"name": "u", "groups": [
            {"name": "x", "members": ["g0", "g1"], "option": option},
            {"name": "y", "members": ["g2"], "option": option}]}]})  # fmt: skip
        one = _plan([{"name": "x", "members": parts[0] + parts[1], "option": option},
                     {"name": "y", "members": parts[2], "option": option}], name="u")  # fmt: skip
        cm = ConfusionMatrix(tuple(range(k)), c)
        l2 = reduce_confusion(cm, resolve_plan(two, range(k)))[-1]
        l1 = reduce_confusion(cm, resolve_plan(one, range(k)))[-1]
        np.testing.assert_array_equal(l2.matrix, l1.matrix)
        np.testing.assert_array_equal(l2.im, l1.im)


@settings(max_examples=100, deadline=None)
@given(plans_and_matrices())
def test_two_group_level_mcc_is_pearson_of_group_indicators(case):
    c, plan = case
    rp = resolve_plan(plan)
    last = rp.steps[-1]
    if last.size != 2 or c.dtype.kind != "i":
        return
    level = reduce_confusion(ConfusionMatrix(rp.classes, c), rp)[-1]
    k = len(c)
    actual = np.repeat(np.repeat(np.arange(k), k), c.ravel())  # one entry per respondent
    predicted = np.repeat(np.tile(np.arange(k), k), c.ravel())
    pos = last.positive_index
    a = last.group_of[actual] == pos
    p = last.group_of[predicted] == pos
    if a.size and a.std() > 0 and p.std() > 0:
        assert level.metrics["mcc"] == pytest.approx(np.corrcoef(a, p)[0, 1], abs=1e-9)


def test_reduce_accepts_a_stack_of_fold_matrices():
    rp = resolve_plan(NPS_PLAN)
    folds = np.stack([C, 2 * C, np.zeros_like(C)])
    matrix, im = rp.steps[1].reduce(folds)
    assert matrix.shape == (3, 2, 2) and im.shape == (3, 2)
    assert matrix[1].tolist() == [[14, 6], [0, 30]] and im[1].tolist() == [0, 4]
    assert matrix[2].sum() == 0 and matrix.dtype.kind == "i"
