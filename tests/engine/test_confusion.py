"""Confusion matrix and multiclass metrics: a hand-worked example, oracles, conventions."""

from __future__ import annotations

import json
from fractions import Fraction as F

import numpy as np
import pycm  # test dependency: a missing oracle must fail, not skip
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn import metrics as skm

from cx_app.engine.confusion import ConfusionMatrix, confusion_matrix, multiclass_metrics
from cx_app.errors import AnalysisError

ANIMALS = ("dog", "cat", "snake")
# confusion-matrix-basics.txt: rows actual, columns predicted.
ANIMAL_COUNTS = np.array([[6, 2, 0], [1, 6, 0], [1, 1, 8]])


def test_animals_by_hand():
    m = multiclass_metrics(ConfusionMatrix(ANIMALS, ANIMAL_COUNTS))
    # N = 25; column sums 8, 9, 8; row sums 8, 7, 10.
    assert m.tp.tolist() == [6, 6, 8]
    assert m.fp.tolist() == [2, 3, 0]  # column − diagonal
    assert m.fn.tolist() == [2, 1, 2]  # row − diagonal
    assert m.tn.tolist() == [15, 15, 15]  # 25 − 6 − 2 − 2, 25 − 6 − 3 − 1, 25 − 8 − 0 − 2
    assert m.support.tolist() == [8, 7, 10]
    p = [F(6, 8), F(6, 9), F(8, 8)]
    r = [F(6, 8), F(6, 7), F(8, 10)]
    f1 = [F(12, 16), F(12, 16), F(16, 18)]  # 2TP / (row + column)
    assert m.precision.tolist() == pytest.approx([float(x) for x in p], abs=1e-15)
    assert m.recall.tolist() == pytest.approx([float(x) for x in r], abs=1e-15)
    assert m.f1.tolist() == pytest.approx([float(x) for x in f1], abs=1e-15)
    assert m.accuracy == pytest.approx(20 / 25, abs=1e-15)
    pm, rm = F(29, 36), F(337, 420)  # (3/4 + 2/3 + 1)/3, (3/4 + 6/7 + 4/5)/3
    assert m.precision_macro == pytest.approx(float(pm), abs=1e-15)
    assert m.recall_macro == pytest.approx(float(rm), abs=1e-15)
    assert m.f1_macro == pytest.approx(float(F(43, 54)), abs=1e-15)  # (3/4 + 3/4 + 8/9)/3
    assert m.f1_of_macro_pr == pytest.approx(float(2 * pm * rm / (pm + rm)), abs=1e-15)
    assert m.f1_macro != pytest.approx(m.f1_of_macro_pr, abs=1e-6)  # really two numbers
    assert m.precision_micro == m.recall_micro == m.accuracy
    assert m.undefined == {"precision": (), "recall": (), "f1": (), "overall": ()}


def test_confusion_matrix_from_labels_keeps_absent_classes():
    cm = confusion_matrix([0, 1, 1, 10], [1, 1, 0, 10], labels=range(11))
    assert cm.counts.shape == (11, 11)
    assert cm.counts.sum() == 4
    assert cm.counts[0, 1] == 1 and cm.counts[1, 1] == 1 and cm.counts[1, 0] == 1
    assert cm.counts[10, 10] == 1
    assert cm.counts.dtype.kind == "i"


def test_confusion_matrix_matches_sklearn_with_weights():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, 300)
    p = rng.integers(0, 5, 300)
    w = rng.random(300)
    cm = confusion_matrix(y, p, labels=[0, 1, 2, 3, 4, 5], sample_weight=w)
    expected = skm.confusion_matrix(y, p, labels=[0, 1, 2, 3, 4, 5], sample_weight=w)
    np.testing.assert_allclose(cm.counts, expected, rtol=0, atol=1e-12)


def test_string_labels_match_int_values_by_str():
    cm = confusion_matrix(["0", "1", "2"], [0, 2, 2], labels=[0, 1, 2])
    assert cm.counts.tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 1]]


def test_value_not_in_labels_is_a_clear_error():
    with pytest.raises(
        AnalysisError, match=r"actual classes \(y_true\): 11 \(2×\) not among the classes 0\.\.10"
    ):
        confusion_matrix([11, 11, 3], [1, 2, 3], labels=range(11))


def test_counts_are_checked_and_read_only():
    with pytest.raises(ValueError, match="square"):
        ConfusionMatrix((0, 1), np.ones((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        ConfusionMatrix((0, 1), [[1, -1], [0, 1]])
    with pytest.raises(ValueError, match="unique"):
        ConfusionMatrix((0, 0), [[1, 1], [0, 1]])
    cm = ConfusionMatrix((0, 1), [[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        cm.counts[0, 0] = 5


def test_real_valued_counts_are_not_rounded():
    c = np.array([[0.4, 0.6], [0.25, 1.75]])
    m = multiclass_metrics(ConfusionMatrix(("a", "b"), c))
    assert m.accuracy == pytest.approx(2.15 / 3.0, abs=1e-15)
    assert m.precision[0] == pytest.approx(0.4 / 0.65, abs=1e-15)
    assert m.recall[1] == pytest.approx(1.75 / 2.0, abs=1e-15)


def test_absent_class_is_zero_and_listed():
    # class 2 never occurs (neither actual nor predicted); class 1 is never predicted.
    c = np.array([[3, 0, 0], [2, 0, 0], [0, 0, 0]])
    m = multiclass_metrics(c, labels=("a", "b", "c"))
    assert m.precision.tolist() == [0.6, 0.0, 0.0]
    assert m.recall.tolist() == [1.0, 0.0, 0.0]
    assert m.undefined["precision"] == ("b", "c")
    assert m.undefined["recall"] == ("c",)
    assert m.undefined["f1"] == ("c",)
    # macro means over all three classes, as scikit-learn with labels= and zero_division=0
    y = [0, 0, 0, 1, 1]
    p = [0, 0, 0, 0, 0]
    sk = skm.precision_recall_fscore_support(
        y, p, labels=[0, 1, 2], average="macro", zero_division=0
    )
    assert (m.precision_macro, m.recall_macro, m.f1_macro) == pytest.approx(sk[:3], abs=1e-12)


def test_to_dict_is_json_and_plain():
    m = multiclass_metrics(ConfusionMatrix(ANIMALS, ANIMAL_COUNTS)).to_dict()
    text = json.dumps(m)
    assert set(m) == {
        "accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr",
        "precision_micro", "recall_micro", "per_class", "undefined",
    }  # fmt: skip
    assert json.loads(text)["per_class"]["cat"]["fp"] == 3
    assert type(m["per_class"]["dog"]["tp"]) is int


def test_reduced_level_metrics_use_im():
    # 2 groups, TP on the diagonal, IM = [2, 3]: recall = TP/(TP+FN+IM), precision = TP/(TP+FP+IM)
    r = np.array([[5, 1], [4, 6]])
    m = multiclass_metrics(r, im=[2, 3], labels=("x", "y"))
    assert m.recall.tolist() == pytest.approx([5 / 8, 6 / 13], abs=1e-15)
    assert m.precision.tolist() == pytest.approx([5 / 11, 6 / 10], abs=1e-15)
    assert m.accuracy == pytest.approx(11 / 21, abs=1e-15)
    assert m.tn.tolist() == [6 + 3, 5 + 2]  # N − TP − FP − FN − own IM
    assert m.support.tolist() == [8, 13]


# --- oracles ------------------------------------------------------------------------------------

matrices = (
    st.integers(2, 6)
    .flatmap(lambda k: arrays(np.int64, (k, k), elements=st.integers(0, 12)))
    .filter(lambda c: c.sum() > 0)
)


def _expand(c):
    k = c.shape[0]
    y = np.repeat(np.repeat(np.arange(k), k), c.ravel())
    p = np.repeat(np.tile(np.arange(k), k), c.ravel())
    return y, p


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_multiclass_metrics_agree_with_sklearn(c):
    k = c.shape[0]
    y, p = _expand(c)
    labels = list(range(k))
    m = multiclass_metrics(c)
    np.testing.assert_array_equal(confusion_matrix(y, p, labels=labels).counts, c)
    for avg in (None, "macro", "micro"):
        sp, sr, sf, ss = skm.precision_recall_fscore_support(
            y, p, labels=labels, average=avg, zero_division=0
        )
        if avg is None:
            np.testing.assert_array_equal(m.support, ss)
            np.testing.assert_allclose(m.precision, sp, atol=1e-9, rtol=0)
            np.testing.assert_allclose(m.recall, sr, atol=1e-9, rtol=0)
            np.testing.assert_allclose(m.f1, sf, atol=1e-9, rtol=0)
        elif avg == "macro":
            assert (m.precision_macro, m.recall_macro, m.f1_macro) == pytest.approx(
                (sp, sr, sf), abs=1e-9
            )
        else:
            assert (m.precision_micro, m.recall_micro) == pytest.approx((sp, sr), abs=1e-9)
    assert m.accuracy == pytest.approx(skm.accuracy_score(y, p), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(matrices)
def test_multiclass_metrics_agree_with_pycm(c):
    k = c.shape[0]
    oracle = pycm.ConfusionMatrix(matrix={i: {j: int(c[i, j]) for j in range(k)} for i in range(k)})
    m = multiclass_metrics(c)
    for i in range(k):
        for ours, theirs in (
            (m.tp[i], oracle.TP[i]), (m.fp[i], oracle.FP[i]),
            (m.fn[i], oracle.FN[i]), (m.tn[i], oracle.TN[i]),
        ):  # fmt: skip
            assert ours == theirs
        for ours, name in ((m.precision[i], "PPV"), (m.recall[i], "TPR"), (m.f1[i], "F1")):
            theirs = getattr(oracle, name)[i]
            if theirs != "None":
                assert ours == pytest.approx(theirs, abs=1e-9)
    assert m.accuracy == pytest.approx(oracle.Overall_ACC, abs=1e-9)
    if all(v != "None" for v in oracle.PPV.values()):
        assert m.precision_macro == pytest.approx(oracle.PPV_Macro, abs=1e-9)
    if all(v != "None" for v in oracle.TPR.values()):
        assert m.recall_macro == pytest.approx(oracle.TPR_Macro, abs=1e-9)
    if all(v != "None" for v in oracle.F1.values()):
        assert m.f1_macro == pytest.approx(oracle.F1_Macro, abs=1e-9)
    assert m.precision_micro == pytest.approx(oracle.PPV_Micro, abs=1e-9)
    assert m.recall_micro == pytest.approx(oracle.TPR_Micro, abs=1e-9)
    assert [m.support[i] for i in range(k)] == [oracle.P[i] for i in range(k)]


@settings(max_examples=100, deadline=None)
@given(matrices, st.floats(0.01, 100))
def test_scaling_counts_keeps_every_ratio(c, scale):
    # Real-valued matrices: metrics are ratios, so scaling all counts changes nothing.
    a = multiclass_metrics(c).to_dict()
    b = multiclass_metrics(c * scale).to_dict()
    for key in ("accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr"):
        assert a[key] == pytest.approx(b[key], abs=1e-12)
    assert a["undefined"] == b["undefined"]


real_matrices = (
    st.integers(2, 6)
    .flatmap(
        lambda k: arrays(
            float, (k, k), elements=st.one_of(st.just(0.0), st.floats(0.125, 50, width=32))
        )
    )
    .filter(lambda c: c.sum() > 0)
)


@settings(max_examples=100, deadline=None)
@given(real_matrices)
def test_real_valued_metrics_agree_with_sklearn_weights(c):
    # An ALP matrix is real-valued: scikit-learn sees it as one weighted sample per cell.
    k = c.shape[0]
    y = np.repeat(np.arange(k), k)
    p = np.tile(np.arange(k), k)
    w = c.ravel()
    labels = list(range(k))
    m = multiclass_metrics(c)
    np.testing.assert_allclose(
        confusion_matrix(y, p, labels=labels, sample_weight=w).counts, c, rtol=0, atol=0
    )
    sp, sr, sf, ss = skm.precision_recall_fscore_support(
        y, p, labels=labels, sample_weight=w, zero_division=0
    )
    np.testing.assert_allclose(m.precision, sp, atol=1e-9, rtol=0)
    np.testing.assert_allclose(m.recall, sr, atol=1e-9, rtol=0)
    np.testing.assert_allclose(m.f1, sf, atol=1e-9, rtol=0)
    np.testing.assert_allclose(m.support, c.sum(axis=1), atol=1e-9, rtol=0)
    sp, sr, sf, _ = skm.precision_recall_fscore_support(
        y, p, labels=labels, sample_weight=w, average="macro", zero_division=0
    )
    assert (m.precision_macro, m.recall_macro, m.f1_macro) == pytest.approx((sp, sr, sf), abs=1e-9)
    assert m.accuracy == pytest.approx(skm.accuracy_score(y, p, sample_weight=w), abs=1e-9)
    assert m.recall_micro == pytest.approx(
        skm.recall_score(y, p, labels=labels, sample_weight=w, average="micro"), abs=1e-9
    )
    json.dumps(multiclass_metrics(c).to_dict(), allow_nan=False)
