"""``cx-app reduce``: crosstab CSVs in, levels out (JSON and text), clear errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.cli.reduce import read_matrix_csv
from cx_app.errors import AnalysisError

NPS_PLAN_YAML = """\
classes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
plan:
  - name: "3x3+IM"
    groups:
      - {name: detractors, members: [0,1,2,3,4,5,6], option: R}
      - {name: passives,   members: [7,8],           option: R}
      - {name: promoters,  members: [9,10],          option: R}
  - name: "2x2+IM"
    positive: passives_promoters
    groups:
      - {name: detractors,         members: [detractors],          option: S}
      - {name: passives_promoters, members: [passives, promoters], option: S}
"""


def _crosstab_pairs():
    """The respondents of the hand-reduced matrix of test_grouping (N = 27)."""
    cells = {(0, 0): 2, (0, 3): 1, (1, 9): 1, (2, 6): 1, (3, 3): 1, (5, 7): 1, (6, 4): 2,
             (6, 8): 1, (7, 7): 3, (7, 8): 1, (8, 7): 2, (8, 10): 1, (9, 9): 2, (9, 10): 1,
             (10, 8): 1, (10, 9): 2, (10, 10): 4}  # fmt: skip
    pairs = [(a, p) for (a, p), n in cells.items() for _ in range(n)]
    actual = pd.Series([a for a, _ in pairs], name="actual")
    predicted = pd.Series([p for _, p in pairs], name="predicted")
    return actual, predicted


@pytest.fixture
def files(tmp_path):
    actual, predicted = _crosstab_pairs()
    table = pd.crosstab(actual, predicted)  # classes 1, 2, 5 never predicted: columns missing
    table = table.reindex(index=range(11), columns=range(11), fill_value=0)
    matrix = tmp_path / "matrix.csv"
    table.to_csv(matrix)
    plan = tmp_path / "plan.yaml"
    plan.write_text(NPS_PLAN_YAML, encoding="utf-8")
    return matrix, plan


def test_json_output_by_hand(files, capsys):
    matrix, plan = files
    assert main(["reduce", str(matrix), "--plan", str(plan), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    levels = out["levels"]
    assert [lv["name"] for lv in levels] == ["original", "3x3+IM", "2x2+IM"]
    assert levels[0]["labels"] == list(range(11))  # ints kept as ints
    assert levels[0]["im"] is None and levels[0]["positive"] is None
    assert levels[1]["matrix"] == [[7, 2, 1], [0, 6, 1], [0, 1, 9]]
    assert levels[1]["im"] == [0, 0, 0]
    assert levels[2]["matrix"] == [[7, 3], [0, 15]] and levels[2]["im"] == [0, 2]
    assert levels[2]["positive"] == "passives_promoters"
    m1 = levels[1]["metrics"]
    for key in ("accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr",
                "precision_micro", "recall_micro", "per_class"):  # fmt: skip
        assert key in m1
    assert m1["per_class"]["passives"] == {
        "tp": 6, "fp": 3, "fn": 1, "tn": 17, "precision": pytest.approx(6 / 9),
        "recall": pytest.approx(6 / 7), "f1": pytest.approx(12 / 16), "support": 7, "im": 0,
    }  # fmt: skip
    m2 = levels[2]["metrics"]
    assert (m2["tp"], m2["fn"], m2["imp"], m2["fp"], m2["tn"], m2["imn"]) == (15, 0, 2, 3, 7, 0)
    assert out["notes"] == []


def test_text_output(files, capsys):
    matrix, plan = files
    assert main(["reduce", str(matrix), "--plan", str(plan)]) == 0
    text = capsys.readouterr().out
    assert "== 2x2+IM: 2×2+IM, positive group 'passives and promoters' ==" in text
    assert "IM" in text and "Matthews correlation (MCC)  " in text
    assert "F1 of macro precision and recall 0.8310" in text
    assert "NaN" not in text and "<NA>" not in text  # the IM corner is left empty


def test_reads_old_crosstab_layout_and_real_values(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("col_0,a,b\nrow_0,,\nb,0.5,1.25\na,2,0\n", encoding="utf-8")
    cm = read_matrix_csv(path)
    assert cm.labels == ("b", "a")
    # columns reordered to the rows' order: actual b: predicted b 1.25, predicted a 0.5
    np.testing.assert_array_equal(cm.counts, [[1.25, 0.5], [0, 2]])
    assert cm.counts.dtype.kind == "f"


def test_errors_are_one_sentence_exit_2(files, tmp_path, capsys):
    matrix, plan = files
    bad = tmp_path / "bad.csv"
    bad.write_text("row_0,0,1\n0,1,x\n1,0,2\n", encoding="utf-8")
    assert main(["reduce", str(bad), "--plan", str(plan)]) == 2
    assert "bad.csv: actual 0, predicted 1: 'x' is not a number" in capsys.readouterr().err
    bad.write_text("row_0,0,1\n0,1,1\n12,0,2\n", encoding="utf-8")
    assert main(["reduce", str(bad), "--plan", str(plan)]) == 2
    assert capsys.readouterr().err == (
        "error: bad.csv: first column (actual): 12 not among the plan's classes (0..10)\n"
    )
    bad.write_text("row_0,0,1,0\n0,1,1,1\n1,0,2,2\n", encoding="utf-8")
    with pytest.raises(AnalysisError, match=r"first row \(predicted\): label 0 is repeated"):
        read_matrix_csv(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text(NPS_PLAN_YAML.replace("[7,8]", "[7,8,11]"), encoding="utf-8")
    assert main(["reduce", str(matrix), "--plan", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "plan step '3x3+IM', group 'passives': member 11 is not a class of this level" in err


TWO_CLASS_PLAN = (
    "plan:\n  - name: b\n    positive: one\n    groups:\n"
    "      - {name: zero, members: [0]}\n      - {name: one, members: [1]}\n"
)


def _reduce_json(tmp_path, capsys, matrix_csv: str, plan_yaml: str, name: str = "m.csv") -> dict:
    """Write the two files, run ``cx-app reduce --json`` and parse its output (NaN refused)."""
    matrix = tmp_path / name
    matrix.write_text(matrix_csv, encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan_yaml, encoding="utf-8")
    assert main(["reduce", str(matrix), "--plan", str(plan), "--json"]) == 0

    def no_constants(constant):
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(capsys.readouterr().out, parse_constant=no_constants)


@pytest.mark.parametrize("dtype", ["int", "float"])
def test_plain_crosstab_with_absent_classes(tmp_path, capsys, dtype):
    # What pandas.crosstab(...).to_csv() really writes: no row for class 4 (never actual), no
    # columns for 1, 2, 5 (never predicted); float-typed scores are written as "7.0".
    actual, predicted = _crosstab_pairs()
    path = tmp_path / "crosstab.csv"
    pd.crosstab(actual.astype(dtype), predicted.astype(dtype)).to_csv(path)
    written = pd.read_csv(path, index_col=0)
    assert len(written.index) == 10 and len(written.columns) == 8  # classes left out
    plan = tmp_path / "plan.yaml"
    plan.write_text(NPS_PLAN_YAML, encoding="utf-8")
    assert main(["reduce", str(path), "--plan", str(plan), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    original = out["levels"][0]
    assert original["labels"] == list(range(11))
    assert original["matrix"][4] == [0] * 11 and [r[1] for r in original["matrix"]] == [0] * 11
    assert original["matrix"][6][4] == 2 and original["matrix"][10][8] == 1
    assert out["levels"][1]["matrix"] == [[7, 2, 1], [0, 6, 1], [0, 1, 9]]
    assert out["levels"][2]["matrix"] == [[7, 3], [0, 15]] and out["levels"][2]["im"] == [0, 2]
    assert out["notes"] == [
        "crosstab.csv: no row for class 4 (never actual): counted as 0",
        "crosstab.csv: no column for class 1, 2, 5 (never predicted): counted as 0",
    ]
    # without the plan's classes, the labels of the first row and column together
    cm = read_matrix_csv(path)
    assert cm.labels == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert cm.counts[4].sum() == 0 and cm.counts[:, 1].sum() == 0 and cm.counts.sum() == 27


def test_weighted_crosstab_empty_cells_and_margins(tmp_path, capsys):
    actual = pd.Series([0, 1, 1], name="actual")
    predicted = pd.Series([0, 0, 1], name="predicted")
    weight = pd.Series([0.5, 1.5, 2.0])
    # no (actual 0, predicted 1) pair: pandas writes NaN as an empty cell
    text = pd.crosstab(actual, predicted, values=weight, aggfunc="sum").to_csv()
    assert text.splitlines()[1] == "0,0.5,"
    out = _reduce_json(tmp_path, capsys, text, "classes: [0, 1]\n" + TWO_CLASS_PLAN, "w.csv")
    assert out["levels"][0]["matrix"] == [[0.5, 0.0], [1.5, 2.0]]
    m = out["levels"][1]["metrics"]
    assert (m["tp"], m["fn"], m["fp"], m["tn"]) == (2.0, 1.5, 0.0, 0.5)
    assert m["tpr"] == pytest.approx(2 / 3.5, abs=1e-15)
    assert out["notes"] == ["w.csv: 1 empty cell read as 0"]
    pd.crosstab(actual, predicted, margins=True).to_csv(tmp_path / "w.csv")
    assert main(["reduce", str(tmp_path / "w.csv"), "--plan", str(tmp_path / "plan.yaml")]) == 2
    assert "look like crosstab margins" in capsys.readouterr().err


def test_json_has_no_nan_even_when_everything_is_undefined(tmp_path, capsys):
    # no respondent at all: every ratio undefined, reported as 0 and listed, never NaN
    out = _reduce_json(tmp_path, capsys, "actual,0,1\n0,0,0\n1,0,0\n", TWO_CLASS_PLAN)
    m = out["levels"][1]["metrics"]
    assert m["mcc"] == 0 and m["accuracy"] == 0 and "mcc" in m["undefined"]
    assert "accuracy" in m["undefined"] and "tpr" in m["undefined"]
    assert out["levels"][0]["metrics"]["undefined"]["overall"] == [
        "accuracy", "precision_micro", "recall_micro", "f1_of_macro_pr"
    ]  # fmt: skip


def test_plan_without_classes_uses_matrix_labels_and_states_default_positive(tmp_path, capsys):
    plan = (
        "plan:\n  - name: two\n    groups:\n      - {name: low, members: ['1'], option: S}\n"
        "      - {name: high, members: [2, 3], option: S}\n"
    )
    out = _reduce_json(tmp_path, capsys, "actual,1,2,3\n1,4,1,0\n2,1,3,1\n3,0,2,5\n", plan)
    two = out["levels"][1]
    # high strict: TP 3 + 5, IM 1 + 2; low: TP 4; FN(high) = 1 + 0, FP(high) = 1 + 0
    assert two["matrix"] == [[4, 1], [1, 8]] and two["im"] == [0, 3]
    assert two["positive"] == "high"
    assert out["notes"] == [
        "plan step 'two' names no positive group: the second group, 'high', is taken as positive"
    ]
