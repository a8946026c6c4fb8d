"""``cx-app nps``: text and JSON output against hand computations and the sample files."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.survey.samples import SAMPLE_DIR, sample_path

SCHEMAS = SAMPLE_DIR.parent / "survey_schemas"

# Two waves: 2021-01 has 3 promoters, 1 passive, 1 detractor; 2021-02 has 4, 2, 1.
SMALL = """ID,Wave,NPS,Price,Network
1,2021-01,10,5,6
2,2021-01,10,7,8
3,2021-01,9,9,9
4,2021-01,8,2,3
5,2021-01,0,1,1
6,2021-02,10,8,8
7,2021-02,9,8,7
8,2021-02,9,6,7
9,2021-02,9,9,9
10,2021-02,7,5,5
11,2021-02,7,5,4
12,2021-02,3,2,2
"""
MAPPING = ["--target", "NPS", "--scale", "0-10", "--attributes", "Price,Network",
           "--segments", "Wave", "--id", "ID"]


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text(SMALL, encoding="utf-8")
    return str(path)


def run_json(capsys, *argv) -> dict:
    assert main(["nps", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_waves_and_their_change_by_hand(small, capsys):
    doc = run_json(capsys, small, *MAPPING, "--by", "Wave")
    w1, w2 = doc["by"][0]["results"]
    # 2021-01: NPS = 100·(3 − 1)/5 = 40; n' = 8, p_P = 3.75/8, p_D = 1.75/8, centre 0.25,
    # Var = (0.6875 − 0.0625)/8 = 0.078125, SE = 27.9508 points, CI 25 ± 54.782.
    assert (w1["label"], w1["n"], w1["value"]) == ("2021-01", 5, 40.0)
    assert w1["se"] == pytest.approx(100 * math.sqrt(0.078125))
    assert w1["ci95"] == pytest.approx([-29.782, 79.782], abs=1e-3)
    # 2021-02: NPS = 100·(4 − 1)/7 = 42.857; n' = 10, centre 0.3, Var = (0.65 − 0.09)/10 = 0.056.
    assert w2["value"] == pytest.approx(300 / 7)
    assert w2["se"] == pytest.approx(100 * math.sqrt(0.056))
    (change,) = doc["by"][0]["changes"]
    # Δ = 42.857 − 40 = 2.857; SE = √(781.25 + 560) = 36.6231; z = 0.0780; p = 0.9378.
    assert change["delta"] == pytest.approx(300 / 7 - 40)
    assert change["se"] == pytest.approx(math.sqrt(781.25 + 560.0))
    assert change["z"] == pytest.approx(0.0780, abs=1e-4)
    assert change["p"] == pytest.approx(0.9378, abs=1e-4)
    assert doc["overall"]["value"] == pytest.approx(100 * (7 - 2) / 12)
    assert doc["groups"]["positive"] == {"name": "promoters", "scores": [9, 10]}
    assert doc["groups"]["negative"]["scores"] == [0, 1, 2, 3, 4, 5, 6]


def test_text_output_shows_segments_intervals_and_changes(small, capsys):
    assert main(["nps", small, *MAPPING, "--by", "wave"]) == 0
    out = capsys.readouterr().out
    assert "12 respondents" in out
    assert "NPS = % promoters (9–10) − % detractors (0–6)" in out
    lines: dict[str, str] = {}
    for line in out.splitlines():
        if line.strip():
            lines.setdefault(line.split()[0], line)  # the wave rows come before the changes
    assert "+40.0" in lines["2021-01"] and "[-29.8, +79.8]" in lines["2021-01"]
    assert "+42.9" in lines["2021-02"] and "[-16.4, +76.4]" in lines["2021-02"]
    assert "Changes between consecutive 'Wave' values" in out
    change_line = next(line for line in out.splitlines() if line.startswith("2021-01 2021-02"))
    assert "+2.9" in change_line and "0.938" in change_line


def test_sample_by_operator_matches_an_independent_count(capsys):
    doc = run_json(capsys, str(sample_path("telecom_nps")), "--schema",
                   str(SCHEMAS / "telecom_nps.yaml"), "--by", "Operator", "--by", "wave")
    raw = pd.read_excel(sample_path("telecom_nps"), engine="calamine")
    y = raw["Likelihood to recommend (0-10)"]
    assert doc["overall"]["n"] == len(raw)
    assert doc["overall"]["value"] == pytest.approx(100 * ((y >= 9).mean() - (y <= 6).mean()))
    operators = {r["label"]: r for r in doc["by"][0]["results"]}
    assert sorted(operators) == ["Operator A", "Operator B", "Operator C"]
    for name, part in raw.groupby("Operator"):
        scores = part["Likelihood to recommend (0-10)"]
        expected = 100 * ((scores >= 9).mean() - (scores <= 6).mean())
        assert operators[name]["value"] == pytest.approx(expected)
    assert doc["by"][0]["changes"] == []  # operators are not waves
    waves = doc["by"][1]
    assert waves["role"] == "wave" and len(waves["changes"]) == 5
    values = [r["value"] for r in waves["results"]]
    assert [c["delta"] for c in waves["changes"]] == pytest.approx(np.diff(values).tolist())


def test_csat_sample_reports_top_box_and_net_score(capsys):
    doc = run_json(capsys, str(sample_path("retail_csat")), "--schema",
                   str(SCHEMAS / "csat_5.yaml"), "--by", "Store")
    raw = pd.read_csv(sample_path("retail_csat"))
    y = raw["Overall satisfaction (1-5)"]
    top = (y >= 4).mean()
    assert doc["kind"] == "csat"
    assert doc["overall"]["csat"]["top_box"] == pytest.approx(top)
    low, high = doc["overall"]["csat"]["top_box_ci95"]
    assert low < top < high and high - low < 0.06
    assert doc["overall"]["value"] == pytest.approx(100 * (top - (y <= 2).mean()))
    assert doc["groups"]["neutral"] == {"name": "neutral", "scores": [3]}
    assert len(doc["by"][0]["results"]) == 5


def test_unknown_segment_is_a_clear_error(small, capsys):
    assert main(["nps", small, *MAPPING, "--by", "Region"]) == 2
    err = capsys.readouterr().err
    assert "--by 'Region' is not a segment" in err and "wave ('Wave')" in err


def test_compare_two_segment_values_by_hand(small, capsys):
    # Reverse order of the hand-computed wave change: Δ = 40 − 42.857 = −2.857, same SE.
    doc = run_json(capsys, small, *MAPPING, "--by", "Wave", "--compare", "2021-02", "2021-01")
    (pair,) = doc["by"][0]["comparisons"]
    assert (pair["a_label"], pair["b_label"]) == ("2021-02", "2021-01")
    assert pair["delta"] == pytest.approx(40 - 300 / 7)
    assert pair["se"] == pytest.approx(math.sqrt(781.25 + 560.0))
    assert pair["ci95"] == pytest.approx([pair["delta"] - 1.959964 * pair["se"],
                                          pair["delta"] + 1.959964 * pair["se"]], abs=1e-4)
    assert pair["p"] == pytest.approx(0.9378, abs=1e-4)
    assert main(["nps", small, *MAPPING, "--by", "wave", "--compare", "2021-01", "2021-02"]) == 0
    out = capsys.readouterr().out
    assert "Compared 'Wave' values (change = to − from; two-sided z test)" in out
    assert "2021-01 2021-02   +2.9" in out


def test_compare_needs_two_values_of_a_by_segment(small, capsys):
    assert main(["nps", small, *MAPPING, "--compare", "2021-01", "2021-02"]) == 2
    assert "--compare needs a segment to compare within: add --by COL" in capsys.readouterr().err
    assert main(["nps", small, *MAPPING, "--by", "Wave", "--compare", "2021-01", "2021-03"]) == 2
    assert capsys.readouterr().err == (
        "error: --compare '2021-01' '2021-03': not two values of one --by segment "
        "(Wave: 2021-01, 2021-02)\n")


def test_a_seven_point_csat_names_its_top_box_by_size(tmp_path, capsys):
    # Satisfied is 5–7 on a 1–7 scale: a top-3-box (4 of 7 here), never called the top-2-box
    # (6–7: 2 of 7), which CX teams quote as a different figure.
    rows = ["Overall satisfaction (1-7),Price (1-5),Speed (1-5)"]
    rows += [f"{y},{1 + i % 5},{1 + (i * 3) % 5}" for i, y in enumerate([1, 2, 4, 5, 6, 7, 7])]
    path = tmp_path / "csat7.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["nps", str(path)]) == 0
    out = capsys.readouterr().out
    assert "top-3-box (5–7) with a Wilson interval" in out and "top-2-box" not in out
    header, line = (ln.split() for ln in out.splitlines()[-2:])
    assert header[header.index("top-3-box") - 1] == "satisfied"
    assert line[header.index("top-3-box") + 1] == f"{100 * 4 / 7:.1f}%"
