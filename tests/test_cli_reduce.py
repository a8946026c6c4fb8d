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


@pytest.fixture
def files(tmp_path):
    # same respondents as the hand-reduced matrix of test_grouping (N = 27)
    cells = {(0, 0): 2, (0, 3): 1, (1, 9): 1, (2, 6): 1, (3, 3): 1, (5, 7): 1, (6, 4): 2,
             (6, 8): 1, (7, 7): 3, (7, 8): 1, (8, 7): 2, (8, 10): 1, (9, 9): 2, (9, 10): 1,
             (10, 8): 1, (10, 9): 2, (10, 10): 4}  # fmt: skip
    pairs = [(a, p) for (a, p), n in cells.items() for _ in range(n)]
    actual = pd.Series([a for a, _ in pairs], name="actual")
    predicted = pd.Series([p for _, p in pairs], name="predicted")
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
    assert "== 2x2+IM: 2×2+IM, positive group 'passives_promoters' ==" in text
    assert "IM" in text and "mcc" in text and "f1_of_macro_pr" in text


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
    with pytest.raises(AnalysisError, match="differ from the predicted labels"):
        bad.write_text("row_0,0,1\n0,1,1\n2,0,2\n", encoding="utf-8")
        read_matrix_csv(bad)
    small = tmp_path / "small.csv"
    small.write_text("row_0,0,1\n0,1,1\n1,0,2\n", encoding="utf-8")
    assert main(["reduce", str(small), "--plan", str(plan)]) == 2
    assert "differ" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text(NPS_PLAN_YAML.replace("[7,8]", "[7,8,11]"), encoding="utf-8")
    assert main(["reduce", str(matrix), "--plan", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "plan step '3x3+IM', group 'passives': member 11 is not a class of this level" in err


def test_plan_without_classes_uses_matrix_labels_and_states_default_positive(tmp_path, capsys):
    m = tmp_path / "m.csv"
    m.write_text("actual,1,2,3\n1,4,1,0\n2,1,3,1\n3,0,2,5\n", encoding="utf-8")
    p = tmp_path / "p.yaml"
    p.write_text(
        "plan:\n  - name: two\n    groups:\n      - {name: low, members: ['1'], option: S}\n"
        "      - {name: high, members: [2, 3], option: S}\n",
        encoding="utf-8",
    )
    assert main(["reduce", str(m), "--plan", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    two = out["levels"][1]
    # high strict: TP 3 + 5, IM 1 + 2; low: TP 4; FN(high) = 1 + 0, FP(high) = 1 + 0
    assert two["matrix"] == [[4, 1], [1, 8]] and two["im"] == [0, 3]
    assert two["positive"] == "high"
    assert out["notes"] == [
        "plan step 'two' names no positive group: the second group, 'high', is taken as positive"
    ]
