"""`cx-app train` and `cx-app estimate` end to end on small simulated waves."""

from __future__ import annotations

import json
import math
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.simulation.waves import simulate_telecom_waves

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "survey_schemas" / "telecom_nps.yaml")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("alp_cli")
    simulate_telecom_waves([1, 2], respondents_per_operator=120, seed=4).to_csv(
        d / "train.csv", index=False)
    simulate_telecom_waves([7], respondents_per_operator=70, seed=4).to_csv(
        d / "labelled.csv", index=False)
    simulate_telecom_waves([7], respondents_per_operator=70, seed=4,
                           include_target=False).to_csv(d / "unlabelled.csv", index=False)
    return d


@pytest.fixture(scope="module")
def model_file(files):
    out = files / "m.skops"
    assert main(["train", str(files / "train.csv"), "--schema", SCHEMA, "--algorithm", "lr",
                 "--folds", "3", "--out", str(out)]) == 0
    return out


def test_train_prints_the_gap_of_every_calibration(files, model_file, capsys):
    out = files / "m2.skops"
    assert main(["train", str(files / "train.csv"), "--schema", SCHEMA, "--algorithm", "nb",
                 "--folds", "3", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    methods = [r["method"] for r in doc["calibration"]["reports"]]
    assert methods == ["none", "temperature", "sigmoid", "isotonic"]
    best = min(doc["calibration"]["reports"], key=lambda r: r["score"])
    assert doc["calibration"]["chosen"] == best["method"]
    assert out.exists()


def test_estimate_json_on_unlabelled_and_labelled_waves(files, model_file, capsys):
    preds = files / "pred.csv"
    assert main(["estimate", "--model", str(model_file), str(files / "unlabelled.csv"),
                 "--json", "--predictions", str(preds)]) == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("n", "alp_matrix", "estimated", "levels", "estimated_class_counts",
                "estimated_nps", "drift", "warnings"):
        assert key in doc
    assert "realized" not in doc
    assert set(doc["estimated"]) == {"accuracy", "precision_macro", "recall_macro", "f1_macro"}
    a = np.array(doc["alp_matrix"])
    assert a.sum() == pytest.approx(doc["n"]) and doc["n"] == 210
    table = pd.read_csv(preds, encoding="utf-8-sig")
    assert len(table) == 210 and {"respondent_id", "sheet_row", "predicted", "group"} <= set(table)
    probs = table[[f"p_{c}" for c in range(11)]]
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(a.sum(axis=1), probs.sum(axis=0), atol=1e-6)
    low, high = doc["estimated_nps"]["ci95"]
    assert low < doc["estimated_nps"]["value"] < high

    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--json"]) == 0
    labelled = json.loads(capsys.readouterr().out)
    assert labelled["alp_matrix"] == doc["alp_matrix"]  # same attributes, same estimate
    assert "realized" in labelled and "realized_nps" in labelled


def test_estimate_text_and_pickle_refusal(files, model_file, capsys):
    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv")]) == 0
    text = capsys.readouterr().out
    assert "estimated NPS" in text and "realized  NPS" in text
    # the parts of the interval's SE are all named, and add up (in quadrature) to its width
    said = re.search(r"95% interval \[(-?[\d.]+), (-?[\d.]+)\] \(answers SE ([\d.]+), model SE "
                     r"([\d.]+), training survey SE ([\d.]+)\)", text)
    assert said is not None, text
    low, high, *parts = map(float, said.groups())
    assert float(parts[2]) > 0
    assert (high - low) / 2 == pytest.approx(1.959964 * math.hypot(*parts), abs=0.25)
    bad = files / "bad.skops"
    bad.write_bytes(pickle.dumps({"a": 1}))
    assert main(["estimate", "--model", str(bad), str(files / "unlabelled.csv")]) == 2
    assert "pickle/joblib file" in capsys.readouterr().err


def test_train_report_gaps_and_full_training_check(files, capsys):
    out = files / "gaps.skops"
    args = ["train", str(files / "train.csv"), "--schema", SCHEMA, "--algorithm", "lr",
            "--calibration", "none", "--folds", "3", "--out", str(out), "--report-gaps"]
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["alp_vs_cm"]) == {"training", "heldout"}
    for side in ("training", "heldout"):
        acc = doc["alp_vs_cm"][side]["3x3+IM"]["f1_macro"]
        assert acc["gap"] == pytest.approx(acc["alp"] - acc["cm"])
    assert len(doc["learning_curve"]) == 10
    check = doc["full_training_check"]
    assert check["heldout_cm"] == pytest.approx(doc["cv"]["original"]["accuracy"])
    assert doc["alp_gap"]["net_calibration_error"] is not None
    from cx_app.estimate.model_file import load_model

    assert load_model(out).cv.to_dict()["full_training_check"] == check  # the app can show it too
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "trained on 100% and validated with ALP" in text
    assert f"resubstitution accuracy {check['full_train_cm']:.3f}" in text
    assert "training folds | heldout folds" in text and "learning curve" in text
    assert text.count("%  ") >= 10  # one line per training share


def test_knn_is_warned_about_in_train_and_estimate(files, capsys):
    out = files / "knn.skops"
    assert main(["train", str(files / "train.csv"), "--schema", SCHEMA, "--algorithm", "knn",
                 "--calibration", "none", "--folds", "3", "--out", str(out)]) == 0
    assert "coarse probabilities" in capsys.readouterr().err
    assert main(["estimate", "--model", str(out), str(files / "unlabelled.csv"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any("coarse probabilities" in w for w in doc["warnings"])


def test_estimate_with_a_schema(files, model_file, capsys):
    base = ["estimate", "--model", str(model_file), str(files / "unlabelled.csv"), "--json"]
    assert main(base) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(base + ["--schema", SCHEMA]) == 0
    assert json.loads(capsys.readouterr().out)["alp_matrix"] == plain["alp_matrix"]
    other = str(ROOT / "survey_schemas" / "csat_5.yaml")
    assert main(base + ["--schema", other]) == 2
    assert "differs from the model's 0-10" in capsys.readouterr().err


def test_predictions_csv_is_formula_safe(files, model_file, capsys):
    frame = pd.read_csv(files / "unlabelled.csv")
    frame.loc[0, "Respondent ID"] = "=HYPERLINK(\"http://x\")"
    wave = files / "formula.csv"
    frame.to_csv(wave, index=False)
    preds = files / "formula_pred.csv"
    assert main(["estimate", "--model", str(model_file), str(wave), "--predictions",
                 str(preds)]) == 0
    capsys.readouterr()
    first = pd.read_csv(preds, encoding="utf-8-sig").respondent_id.iloc[0]
    assert not first.startswith("=") and first.endswith("=HYPERLINK(\"http://x\")")


def test_estimate_json_has_metric_intervals_and_alerts(files, model_file, capsys):
    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["estimated_ci95"]) == set(doc["estimated"])
    for metric, (low, high) in doc["estimated_ci95"].items():
        assert 0 <= low < doc["estimated"][metric] < high <= 1
    for row in doc["metric_comparison"]:
        assert row["ci_low"] <= row["estimated"] <= row["ci_high"]
    detail = doc["metric_intervals"]["levels"]["original"]["accuracy"]
    assert detail["se"] == pytest.approx(np.hypot(detail["se_outcome"], detail["se_model"]))
    alerts = {a["metric"]: a for a in doc["alerts"]}
    assert set(alerts) == {"accuracy", "net_score"}
    acc = alerts["accuracy"]
    assert acc["value"] == doc["estimated"]["accuracy"]
    assert acc["alert"] == (not acc["lower"] <= acc["value"] <= acc["upper"])

    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--json", "--alert-accuracy", "0.99", "--alert-nps", ",-50"]) == 0
    fixed = {a["metric"]: a for a in json.loads(capsys.readouterr().out)["alerts"]}
    assert fixed["accuracy"]["alert"] and fixed["accuracy"]["direction"] == "below"
    assert fixed["accuracy"]["source"] == "analyst" and fixed["accuracy"]["lower"] == 0.99
    assert fixed["net_score"]["alert"] and fixed["net_score"]["direction"] == "above"

    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--alert-accuracy", "0.99"]) == 0
    text = capsys.readouterr().out
    assert "ALERT: estimated accuracy" in text and "is below 0.990 (analyst)" in text
    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--alert-accuracy", "high"]) != 0
    assert "--alert-accuracy" in capsys.readouterr().err


def test_tracker_json_has_alerts_per_wave_and_segment(files, model_file, capsys):
    assert main(["estimate", "--model", str(model_file), str(files / "labelled.csv"),
                 "--by", "Operator", "--json", "--alert-accuracy", "0.99"]) == 0
    wave = json.loads(capsys.readouterr().out)["waves"][0]
    assert wave["alerts"][0]["alert"] and wave["alerts"][0]["metric"] == "accuracy"
    for segment in wave["by"].values():
        if segment["estimated_nps"] is not None:
            assert segment["alerts"][0]["source"] == "analyst"
            assert segment["alerts"][0]["alert"]  # no segment reaches 0.99
