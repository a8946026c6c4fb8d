"""Issue 12's acceptance on a realistic messy export (the bank tracker generator): title rows
above the header, a cover sheet, 99 = not applicable on more than half of one attribute,
"N/A" and "Don't know" texts, routing blanks on a signed −2..2 attribute, attributes on 1–10,
1–5 and −2..2, a later wave without one attribute, and a weight column.

Every expected figure is computed by hand from the rows as generated (before they were written
to the workbook), never by the code under test.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.estimate.new_wave import estimate_wave, training_median
from cx_app.estimate.training import train_model
from cx_app.models.drivers import driver_importance
from cx_app.simulation.bank_export import (
    BANK_ATTRIBUTES,
    DROPPED_IN_LAST_WAVE,
    TARGET_COLUMN,
    WEIGHT_COLUMN,
    simulate_bank_waves,
    write_bank_export,
)
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import groups_for_schema, nps_summary
from cx_app.survey.schema import save_schema

N_PER_WAVE = 400


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """(training file: waves 1–2, wave-3 file lacking online banking, the rows as generated)."""
    waves = simulate_bank_waves(N_PER_WAVE, waves=3, seed=12)
    labels = list(waves)
    folder = tmp_path_factory.mktemp("bank")
    training = pd.concat([waves[labels[0]], waves[labels[1]]], ignore_index=True)
    train_path = write_bank_export(training, folder / "bank_tracker.xlsx")
    wave_path = write_bank_export(waves[labels[2]], folder / "bank_wave3.xlsx")
    return train_path, wave_path, training, waves[labels[2]]


def valid_targets(rows: pd.DataFrame) -> pd.Series:
    """The recommend answers that are scores 0..10, by hand (blanks and "Don't know" are not)."""
    values = pd.to_numeric(rows[TARGET_COLUMN], errors="coerce")
    return values[values.between(0, 10)].astype(int)


def hand_nps(scores: pd.Series, weights: pd.Series | None = None) -> float:
    w = pd.Series(1.0, index=scores.index) if weights is None else weights.loc[scores.index]
    promoters = w[scores >= 9].sum() / w.sum()
    detractors = w[scores <= 6].sum() / w.sum()
    return 100 * (promoters - detractors)


def answered(rows: pd.DataFrame, column: str, scale: tuple[int, int]) -> pd.Series:
    """An attribute's answers that are scores on its scale (99, "N/A", "Don't know" and blanks
    are not), by hand."""
    values = pd.to_numeric(rows[column], errors="coerce")
    return values[values.between(*scale)]


def test_the_fixture_is_as_messy_as_promised(export):
    _, _, training, wave = export
    mortgage = next(a for a in BANK_ATTRIBUTES if a.name == "mortgage_advice")
    assert (training[mortgage.column] == 99).mean() > 0.5
    app = next(a for a in BANK_ATTRIBUTES if a.name == "mobile_app")
    assert {"N/A", "Don't know"} <= set(training[app.column].dropna().astype(str))
    effort = next(a for a in BANK_ATTRIBUTES if a.scale == (-2, 2))
    assert training[effort.column].isna().mean() > 0.2 and (training[effort.column] == -1).any()
    online = next(a for a in BANK_ATTRIBUTES if a.name == DROPPED_IN_LAST_WAVE)
    assert online.column not in wave.columns
    assert training[WEIGHT_COLUMN].std() > 0


def test_nps_is_a_hand_count_over_every_valid_answer_weighted_and_not(export):
    path, _, training, _ = export
    survey = load_survey(path)  # what a new user gets: no schema, the layout inferred
    scores = valid_targets(training)
    # everyone with a valid answer, whatever their attribute gaps (most have one)
    assert survey.quality.respondents == len(scores) == len(survey.scores)
    assert int(survey.frame[list(survey.attribute_names)].isna().any(axis=1).sum()) > 0.5 * len(
        scores)
    assert survey.quality.rows_used == len(scores)  # and every one is in the models too
    weights = training[WEIGHT_COLUMN].astype(float)
    weighted = nps_summary(survey.scores, weights=survey.weights)
    assert weighted.value == pytest.approx(hand_nps(scores, weights), abs=1e-9)
    n_eff = weights[scores.index].sum() ** 2 / (weights[scores.index] ** 2).sum()
    assert weighted.n_effective == pytest.approx(n_eff, rel=1e-12)
    assert nps_summary(survey.scores).value == pytest.approx(hand_nps(scores), abs=1e-9)
    # cx-app nps says the same (weighted: the file has a weight column)
    assert main(["nps", str(path), "--json"]) == 0


def test_cli_nps_json_matches_the_hand_count(export, capsys):
    path, _, training, _ = export
    assert main(["nps", str(path), "--json", "--by", "Wave"]) == 0
    doc = json.loads(capsys.readouterr().out)
    scores = valid_targets(training)
    weights = training[WEIGHT_COLUMN].astype(float)
    assert doc["weight"] == WEIGHT_COLUMN and doc["respondents"] == len(scores)
    assert doc["overall"]["value"] == pytest.approx(hand_nps(scores, weights), abs=1e-9)
    waves = training.loc[scores.index, "Wave"]
    for result in doc["by"][0]["results"]:  # no wave vanishes for an attribute gap
        part = scores[waves == result["label"]]
        assert result["n"] == len(part)
        assert result["value"] == pytest.approx(hand_nps(part, weights), abs=1e-9)


def test_flags_schema_and_inference_resolve_the_same_respondents(export, tmp_path, capsys):
    path, _, training, _ = export
    inferred = load_survey(path)
    schema_file = save_schema(inferred.schema, tmp_path / "bank.yaml")
    by_schema = load_survey(path, schema=inferred.schema)
    columns = [a.column for a in BANK_ATTRIBUTES]
    # a header holding a comma is quoted, as in a CSV line
    flags = ["--target", TARGET_COLUMN, "--scale", "0-10", "--attributes", ",".join(
        f'"{c}"' if "," in c else c for c in columns), "--weight", WEIGHT_COLUMN]
    flags += ["--attribute-scale", "1-10"]
    flags += [f"--attribute-scale={a.column}={a.scale[0]}..{a.scale[1]}"
              for a in BANK_ATTRIBUTES if a.scale != (1, 10)]
    outputs = {}
    for name, args in (("inferred", []), ("schema", ["--schema", str(schema_file)]),
                       ("flags", flags)):
        assert main(["validate", str(path), "--json", *args]) == 0, name
        doc = json.loads(capsys.readouterr().out)
        assert main(["nps", str(path), "--json", *args]) == 0, name
        outputs[name] = (doc["respondents"], doc["rows_used"], doc["excluded"],
                         json.loads(capsys.readouterr().out)["overall"]["value"])
    assert outputs["inferred"] == outputs["schema"] == outputs["flags"]
    assert list(by_schema.frame.index) == list(inferred.frame.index)
    np.testing.assert_array_equal(by_schema.X.to_numpy(), inferred.X.to_numpy())
    # a policy flag that contradicts the schema is an error, not ignored
    assert main(["validate", str(path), "--schema", str(schema_file), "--missing-policy",
                 "exclude"]) == 2
    assert "conflicts with the schema" in capsys.readouterr().err
    # with an inferred layout the flag applies: the respondents with a gap leave the models only
    assert main(["validate", str(path), "--json", "--missing-policy", "exclude"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["respondents"] == outputs["inferred"][0] > doc["rows_used"]


def test_driver_performance_is_the_answered_only_mean(export):
    path, _, training, _ = export
    survey = load_survey(path)
    result = driver_importance(survey.X, survey.y, survey.classes, ordinal=False)
    table = result.importance_performance.set_index("attribute")
    for spec, bank in zip(survey.schema.attributes, BANK_ATTRIBUTES, strict=True):
        rows = training.loc[survey.model_frame.index - survey.model_frame.index[0]]
        mine = answered(rows, bank.column, bank.scale)
        assert table.loc[spec.name, "performance"] == pytest.approx(mine.mean(), rel=1e-12)
        assert table.loc[spec.name, "base"] == len(mine)
        assert table.loc[spec.name, "na_share"] == pytest.approx(1 - len(mine) / len(rows))
    # every true driver weight is positive: each attribute's direction is +1
    assert (table["direction"] == 1).all()


def test_the_wave_is_estimated_over_every_respondent_with_training_statistics(export):
    path, wave_path, training, wave_rows = export
    survey = load_survey(path)
    model = train_model(survey, "lr", calibration="none", folds=3).model
    wave = load_survey(wave_path, schema=model.schema, require_target=False,
                       require_attributes=False, scoring=True)
    estimate = estimate_wave(model, wave)
    assert estimate.n == len(wave_rows)  # nobody lost: gaps, n/a, a dropped question
    # the gap step holds the training data's answered medians, computed here by hand
    gaps = model.estimator.named_steps["gaps"]
    first_row = survey.model_frame.index[0]
    rows = training.loc[survey.model_frame.index - first_row]
    expected = [answered(rows, b.column, b.scale).median() for b in BANK_ATTRIBUTES]
    np.testing.assert_array_equal(gaps.statistics_, expected)
    online = model.attribute_names[[b.name for b in BANK_ATTRIBUTES].index(DROPPED_IN_LAST_WAVE)]
    median = training_median(model.attribute_distributions[online])
    assert median == expected[[b.name for b in BANK_ATTRIBUTES].index(DROPPED_IN_LAST_WAVE)]
    shown = next(a.display for a in model.schema.attributes if a.name == online)
    named = [w for w in estimate.warnings if shown in w]  # warnings name it by its label
    assert len(named) == 1 and f"({median:g})" in named[0]  # named once, with its filler
    # drift: answered scores only and the n/a shares of the same design: no alarm
    drift = {a.name: a for a in estimate.drift.attributes}
    assert not drift[online].present
    for name, item in drift.items():
        if item.present:
            assert item.level == "stable", name
            assert not item.na_share_changed, name
            assert item.na_share_current == pytest.approx(
                wave.X[name].isna().mean(), abs=1e-12)
    # the labelled wave's realized NPS is over its valid answers, weighted
    scores = valid_targets(wave_rows)
    assert estimate.realized_nps.n == len(scores)
    assert estimate.realized_nps.value == pytest.approx(
        hand_nps(scores, wave_rows[WEIGHT_COLUMN].astype(float)), abs=1e-9)


def test_bad_weights_and_targets_are_one_sentence_before_any_fit(export, tmp_path):
    from cx_app.errors import SchemaError

    _, _, training, _ = export
    for bad, what in ((-1.5, "negative"), (None, "blank"), ("heavy", "not a number")):
        rows = training.head(60).copy()
        rows[WEIGHT_COLUMN] = rows[WEIGHT_COLUMN].astype(object)
        rows.loc[rows.index[7], WEIGHT_COLUMN] = bad
        path = write_bank_export(rows, tmp_path / f"weights_{what}.xlsx")
        with pytest.raises(SchemaError) as info:
            load_survey(path)
        message = str(info.value)
        assert message.startswith(f"{path.name}, sheet 'Data': the weight column 'Weight' has 1 "
                                  f"{what} weight(s) (row 12") and "\n" not in message
    rows = training.head(40).copy()
    rows[TARGET_COLUMN] = "Don't know"
    path = write_bank_export(rows, tmp_path / "no_target.xlsx")
    schema = load_survey(write_bank_export(training.head(80), tmp_path / "ok.xlsx")).schema
    with pytest.raises(SchemaError, match=r"has no valid answer on its scale 0-10 in any of the "
                                          r"40 rows \(missing target: 40\)"):
        load_survey(path, schema=schema)


def test_a_plan_that_does_not_cover_the_scale_is_refused_before_fitting(export, monkeypatch):
    from cx_app.errors import CxAppError
    from cx_app.models import analysis

    path, _, _, _ = export
    survey = load_survey(path)
    plan = survey.schema.plan[0].model_dump()
    plan["groups"] = [g for g in plan["groups"] if g["name"] != "promoters"]
    broken = survey.schema.model_dump(mode="json")
    broken["plan"] = [plan]
    fits = []
    monkeypatch.setattr(analysis, "cross_validate_model", lambda *a, **k: fits.append(a))
    with pytest.raises(CxAppError) as info:
        from cx_app.survey.schema import parse_schema

        schema = parse_schema(broken, source="broken plan")
        analysis.evaluate_survey(load_survey(path, schema=schema), ["nb"], folds=3)
    assert fits == [] and "\n" not in str(info.value)
    assert groups_for_schema  # the check the evaluation runs first


@pytest.mark.slow  # about 12 s: evaluate, train and estimate on one export
def test_evaluate_train_and_estimate_use_the_same_respondents(export, tmp_path, capsys):
    """One path: `evaluate`, `train` and `estimate` resolve the messy files to the respondents
    and NPS counted by hand (the NPS over every valid answer, weighted; every respondent of
    the new wave estimated)."""
    path, wave_path, training, wave_rows = export
    scores = valid_targets(training)
    expected = hand_nps(scores, training[WEIGHT_COLUMN].astype(float))
    assert main(["evaluate", str(path), "--algorithms", "nb", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(tmp_path / "ev")]) == 0
    results = json.loads((tmp_path / "ev" / "results.json").read_text())
    dataset = results["dataset"]
    assert (dataset["respondents"], dataset["rows_used"]) == (len(scores), len(scores))
    assert dataset["nps"]["value"] == pytest.approx(expected, abs=1e-9)
    assert dataset["nps"]["weighted"] and dataset["missing_policy"] == "impute_indicator"
    model = tmp_path / "nb.skops"
    assert main(["train", str(path), "--algorithm", "nb", "--calibration", "none",
                 "--folds", "3", "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["estimate", str(wave_path), "--model", str(model), "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["n"] == len(wave_rows)
    wave_scores = valid_targets(wave_rows)
    assert estimate["realized_nps"]["n"] == len(wave_scores)
    assert estimate["realized_nps"]["value"] == pytest.approx(
        hand_nps(wave_scores, wave_rows[WEIGHT_COLUMN].astype(float)), abs=1e-9)


def test_the_cover_sheets_title_is_not_called_a_column(export, capsys):
    """The "Notes" cover sheet starts with the title "Bank NPS tracker": asked to read that
    sheet, the sentence names the file, the sheet and the row, and says the title is a single
    cell, not a row of column headers (it used to list it as the sheet's only column)."""
    from cx_app.errors import SchemaError

    path = export[0]
    expected = (f"{path.name}: could not infer a layout from sheet 'Notes': its header row "
                "(row 1) holds a single cell, 'Bank NPS tracker', not a row of column headers, "
                "and no column under it holds scores on an integer scale (a target and at "
                "least one attribute are needed); give the mapping (--target COL --scale "
                "MIN-MAX --attributes A,B,C)")
    with pytest.raises(SchemaError) as info:
        load_survey(path, sheet="Notes")
    assert str(info.value) == expected
    capsys.readouterr()
    assert main(["validate", str(path), "--sheet", "Notes"]) == 2
    assert capsys.readouterr().err == f"error: {expected}\n"
