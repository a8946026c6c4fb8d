"""``cx-app estimate --audit SAMPLE``: the audited net score beside the label-free one, in JSON
and in words; the audit of a tracker is refused in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cx_app.cli import main
from cx_app.simulation.waves import simulate_telecom_waves

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "survey_schemas" / "telecom_nps.yaml")
TARGET = "Likelihood to recommend (0-10)"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit_cli")
    simulate_telecom_waves([1, 2], respondents_per_operator=120, seed=4).to_csv(
        d / "train.csv", index=False)
    labelled = simulate_telecom_waves([7], respondents_per_operator=100, seed=4)
    labelled.drop(columns=[TARGET]).to_csv(d / "wave.csv", index=False)
    labelled.sample(80, random_state=3).to_csv(d / "audit.csv", index=False)
    partial = labelled.copy()
    partial.loc[partial.index[80:], TARGET] = None
    partial.to_csv(d / "partial.csv", index=False)
    assert main(["train", str(d / "train.csv"), "--schema", SCHEMA, "--algorithm", "lr",
                 "--folds", "3", "--out", str(d / "m.skops")]) == 0
    return d


def test_estimate_audit_json_beside_the_estimate(files, capsys):
    capsys.readouterr()
    assert main(["estimate", "--model", str(files / "m.skops"), str(files / "wave.csv"),
                 "--audit", str(files / "audit.csv"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    audited = doc["audited_nps"]
    assert audited["n"] == 80 and len(audited["ci95"]) == 2
    assert audited["ci95"][0] <= audited["value"] <= audited["ci95"][1]
    assert audited["label_free"] == pytest.approx(doc["estimated_nps"]["value"], abs=1e-9)
    assert isinstance(doc["shift_detected"], bool)
    assert doc["shift_detected"] == doc["audit"]["shift_test"]["detected"]
    assert doc["audit"]["matched_by"] == "respondent id" and doc["audit"]["excluded"] == []
    for key in ("accuracy", "group_accuracy", "f1_macro"):
        fig = doc["audit"][key]
        assert 0.0 <= fig["ci95"][0] <= fig["value"] <= fig["ci95"][1] <= 1.0


def test_the_wave_file_itself_with_some_answers_and_words(files, capsys):
    capsys.readouterr()
    assert main(["estimate", "--model", str(files / "m.skops"), str(files / "partial.csv"),
                 "--audit", str(files / "partial.csv")]) == 0
    out = capsys.readouterr().out
    assert "audited NPS" in out and "from 80 audited answers" in out
    assert "audited accuracy" in out and "label-free estimate" in out


def test_audit_of_several_waves_is_refused(files, capsys):
    capsys.readouterr()
    code = main(["estimate", "--model", str(files / "m.skops"), str(files / "wave.csv"),
                 str(files / "wave.csv"), "--audit", str(files / "audit.csv")])
    assert code != 0
    assert "--audit goes with one wave" in capsys.readouterr().err
