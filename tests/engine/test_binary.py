"""2×2 and 2×2+IM metrics: hand values, PyCM / scikit-learn oracles, identities (33)–(36)."""

from __future__ import annotations

import math

import numpy as np
import pycm  # test dependency: a missing oracle must fail, not skip
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from cx_app.engine.binary import BINARY_KEYS, binary_metrics


def test_hand_values_with_im():
    # TP 15, FN 0, IMP 2, FP 3, TN 7, IMN 1: P_actual 17, P_pred 20, N_actual 11, N_pred 8, n 28
    m = binary_metrics(tp=15, fn=0, fp=3, tn=7, imp=2, imn=1)
    assert (m["p_actual"], m["p_pred"], m["n_actual"], m["n_pred"], m["n"]) == (17, 20, 11, 8, 28)
    assert m["accuracy"] == pytest.approx(22 / 28, abs=1e-15)
    assert m["tpr"] == pytest.approx(15 / 17, abs=1e-15)
    assert m["tnr"] == pytest.approx(7 / 11, abs=1e-15)
    assert m["ppv"] == pytest.approx(15 / 20, abs=1e-15)
    assert m["npv"] == pytest.approx(7 / 8, abs=1e-15)  # eq. 27 with IMN, not IMP
    assert m["fpr"] == pytest.approx(3 / 11, abs=1e-15)
    assert m["for"] == pytest.approx(0 / 8, abs=1e-15)
    assert m["nimr"] == pytest.approx(1 / 11, abs=1e-15)
    assert m["npimr"] == pytest.approx(1 / 8, abs=1e-15)
    assert m["f1"] == pytest.approx(2 * 15 / (17 + 20), abs=1e-15)
    assert m["ts"] == pytest.approx(15 / (15 + 0 + 3 + 2), abs=1e-15)
    # MCC of the group-level 2×2 [[TP+IMP, FN], [FP, TN+IMN]] = [[17, 0], [3, 8]]
    assert m["mcc"] == pytest.approx((17 * 8 - 0 * 3) / math.sqrt(20 * 17 * 8 * 11), abs=1e-15)
    # the paper's eq. (28) would give (2·1 + 17·7 − 0)/…, a different number: make sure we differ
    eq28 = (2 * 1 + 17 * 7 - 0) / math.sqrt(17 * 20 * 8 * 11)
    assert m["mcc"] != pytest.approx(eq28, abs=1e-6)
    assert m["bm"] == pytest.approx(15 / 17 - 3 / 11, abs=1e-15)
    assert m["mk"] == pytest.approx(15 / 20 - 0, abs=1e-15)
    assert m["delta"] == pytest.approx(15 / 17 - 3 / 11, abs=1e-15)
    assert m["phi"] == pytest.approx(15 / 17 + 3 / 11 - 1, abs=1e-15)
    tpr, tnr = 15 / 17, 7 / 11
    assert m["pt"] == pytest.approx(
        (math.sqrt(tpr * (1 - tnr)) + tnr - 1) / (tpr + tnr - 1), abs=1e-15
    )
    assert m["undefined"] == []
    assert set(BINARY_KEYS) | {"undefined"} == set(m)


def test_all_issue_keys_present_lowercase():
    keys = ["tp", "fn", "fp", "tn", "imp", "imn", "accuracy", "tpr", "tnr", "ppv", "npv", "fnr", "fpr", "fdr", "for", "f1", "fm", "ba", "mcc", "pt", "bm", "mk", "ts", "pimr", "nimr", "ppimr", "npimr", "delta", "phi"]  # fmt: skip
    m = binary_metrics(tp=1, fn=1, fp=1, tn=1)
    assert all(k in m for k in keys)


def test_undefined_are_zero_and_listed():
    # nothing predicted positive and no actual negatives
    m = binary_metrics(tp=0, fn=5, fp=0, tn=0)
    assert m["ppv"] == 0 and m["tnr"] == 0 and m["mcc"] == 0
    assert {"ppv", "fdr", "ppimr", "tnr", "fpr", "nimr", "mcc", "fm", "ba", "bm", "mk", "pt",
            "delta", "phi"} <= set(m["undefined"])  # fmt: skip
    assert "tpr" not in m["undefined"] and "f1" not in m["undefined"]
    assert m["f1"] == 0.0  # 2·0/(5+0): defined, as scikit-learn
    assert m["undefined"] == sorted(m["undefined"])
    # PT undefined when TPR + TNR = 1 (a random classifier)
    assert "pt" in binary_metrics(tp=1, fn=1, fp=1, tn=1)["undefined"]


def test_real_valued_and_bad_input():
    m = binary_metrics(tp=0.5, fn=0.25, fp=0.25, tn=1.0)
    assert m["tpr"] == pytest.approx(0.5 / 0.75, abs=1e-15)
    with pytest.raises(ValueError, match="fn must be a finite count"):
        binary_metrics(tp=1, fn=-1, fp=0, tn=0)
    with pytest.raises(TypeError):
        binary_metrics(1, 2, 3, 4)  # keyword-only: orders differ between papers
    assert binary_metrics(tp=np.int64(3), fn=np.int64(1), fp=0, tn=2)["tp"] == 3


counts = st.integers(0, 40)


@settings(max_examples=200, deadline=None)
@given(counts, counts, counts, counts)
def test_plain_2x2_agrees_with_sklearn_and_pycm(tp, fn, fp, tn):
    assume(tp + fn > 0 and fp + tn > 0 and tp + fp > 0 and tn + fn > 0)
    m = binary_metrics(tp=tp, fn=fn, fp=fp, tn=tn)
    y = np.array([1] * tp + [1] * fn + [0] * fp + [0] * tn)
    p = np.array([1] * tp + [0] * fn + [1] * fp + [0] * tn)
    assert m["mcc"] == pytest.approx(skm.matthews_corrcoef(y, p), abs=1e-9)
    assert m["ba"] == pytest.approx(skm.balanced_accuracy_score(y, p), abs=1e-9)
    assert m["f1"] == pytest.approx(skm.f1_score(y, p, zero_division=0), abs=1e-9)
    assert m["accuracy"] == pytest.approx(skm.accuracy_score(y, p), abs=1e-9)
    assert m["tpr"] == pytest.approx(skm.recall_score(y, p), abs=1e-9)
    assert m["ppv"] == pytest.approx(skm.precision_score(y, p), abs=1e-9)
    assert m["tnr"] == pytest.approx(skm.recall_score(y, p, pos_label=0), abs=1e-9)
    assert m["npv"] == pytest.approx(skm.precision_score(y, p, pos_label=0), abs=1e-9)
    assert m["ts"] == pytest.approx(skm.jaccard_score(y, p), abs=1e-9)
    o = pycm.ConfusionMatrix(matrix={1: {1: tp, 0: fn}, 0: {1: fp, 0: tn}})
    names = {
        "tpr": "TPR", "tnr": "TNR", "ppv": "PPV", "npv": "NPV", "fnr": "FNR", "fpr": "FPR",
        "fdr": "FDR", "for": "FOR", "f1": "F1", "mcc": "MCC", "bm": "BM", "mk": "MK",
        "fm": "G",  # PyCM's G-measure = √(PPV·TPR) = Fowlkes–Mallows
        "ts": "J",  # PyCM's Jaccard index TP/(TP+FP+FN) = threat score / CSI
        "ba": "AUC",  # PyCM's per-class AUC of a crisp 2×2 = (TPR+TNR)/2
        "accuracy": "ACC", "tp": "TP", "fn": "FN", "fp": "FP", "tn": "TN",
    }  # fmt: skip
    for ours, theirs in names.items():
        value = o.class_stat[theirs][1]
        if value != "None":
            assert m[ours] == pytest.approx(value, abs=1e-9), ours
    # prevalence threshold, second form: (√(TPR·FPR) − FPR)/(TPR − FPR)
    if m["tpr"] != m["fpr"]:
        expected = (math.sqrt(m["tpr"] * m["fpr"]) - m["fpr"]) / (m["tpr"] - m["fpr"])
        assert m["pt"] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts, counts, counts, counts, counts, counts)
def test_rate_identities_and_mcc_is_pearson(tp, fn, fp, tn, imp, imn):
    m = binary_metrics(tp=tp, fn=fn, fp=fp, tn=tn, imp=imp, imn=imn)
    if m["p_actual"]:
        assert m["tpr"] + m["pimr"] + m["fnr"] == pytest.approx(1, abs=1e-12)  # (33)
    if m["n_actual"]:
        assert m["tnr"] + m["nimr"] + m["fpr"] == pytest.approx(1, abs=1e-12)  # (34)
    if m["p_pred"]:
        assert m["ppv"] + m["ppimr"] + m["fdr"] == pytest.approx(1, abs=1e-12)  # (35)
    if m["n_pred"]:
        assert m["npv"] + m["npimr"] + m["for"] == pytest.approx(1, abs=1e-12)  # (36)
    # Appendix A: MCC = Pearson correlation of actual-positive and predicted-positive indicators
    actual = np.repeat([1, 1, 1, 0, 0, 0], [tp, fn, imp, fp, tn, imn])
    predicted = np.repeat([1, 0, 1, 1, 0, 0], [tp, fn, imp, fp, tn, imn])
    if len(actual) and actual.std() > 0 and predicted.std() > 0:
        assert m["mcc"] == pytest.approx(np.corrcoef(actual, predicted)[0, 1], abs=1e-9)
        assert "mcc" not in m["undefined"]
    else:
        assert m["mcc"] == 0 and "mcc" in m["undefined"]
    if "delta" not in m["undefined"]:
        assert abs(m["delta"]) + abs(m["phi"]) <= 1 + 1e-12  # the δ/φ rhombus
