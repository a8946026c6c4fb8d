"""Two gaps of platform exports (issue 34): a numbered "Not applicable" in a Qualtrics numeric
CSV, and personal data in a wave file added to a program."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import nps_summary
from cx_app.survey.quality import OUT_OF_SCALE
from cx_app.survey.schema import schema_from_mapping

sys.path.insert(0, str(Path(__file__).parent))
import platform_exports as exports  # noqa: E402

ITEMS = [f"Q2_{k + 1}" for k in range(len(exports.ITEMS))]


@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    truth = exports.answers()
    path = exports.qualtrics_csv_numbered_na(truth, tmp_path_factory.mktemp("na") / "q.csv")
    return truth, path


def test_a_numbered_not_applicable_is_out_of_the_scale_and_said(numbered, capsys):
    truth, path = numbered
    survey = load_survey(path)
    assert [a.column for a in survey.schema.attributes] == ITEMS
    assert all((a.scale.min, a.scale.max) == (1, 5) for a in survey.schema.attributes)
    valid = truth[truth["Q1"].notna()]
    with_na = valid[(valid[ITEMS] == 6).any(axis=1)]
    out = [e for e in survey.quality.excluded if e.reason == OUT_OF_SCALE]
    # each respondent with a 6 listed once (first reason), on its file row (3 header rows)
    assert sorted(e.row for e in out) == [int(i) + 4 for i in with_na.index]
    assert survey.quality.rows_used == len(valid) - len(with_na)
    n, nps = exports.nps_truth(truth)  # the NPS keeps them
    assert survey.quality.respondents == n
    assert nps_summary(survey.scores).value == pytest.approx(nps, abs=1e-9)
    said = [note for note in survey.quality.notes if note.startswith("matrix ")]
    assert len(said) == 1 and "answers 1–6" in said[0] and "'Q2_1', 'Q2_2'" in said[0]
    assert main(["validate", str(path), "--json"]) == 0
    assert said[0] in json.loads(capsys.readouterr().out)["notes"]


def test_the_mapping_declares_the_code_a_gap(numbered):
    truth, path = numbered
    schema = schema_from_mapping(target="Q1", scale=(0, 10), attributes=ITEMS,
                                 attribute_scale="1-5", respondent_id="ResponseId",
                                 missing_codes=[6])
    survey = load_survey(path, schema=schema)
    assert not [e for e in survey.quality.excluded if e.scope == "model"]
    valid = truth["Q1"].notna().to_numpy()
    for item, attribute in zip(ITEMS, survey.schema.attributes, strict=True):
        expected = truth[item].where(truth[item].between(1, 5)).to_numpy(dtype=float)[valid]
        np.testing.assert_array_equal(survey.frame[attribute.name].to_numpy(dtype=float),
                                      expected)


def test_personal_data_of_a_wave_file_is_dropped_and_never_stored(tmp_path):
    from cx_app.workspace.programs import Workspace

    rng = np.random.default_rng(3)
    n = 80
    items = rng.integers(1, 6, size=(n, 3))
    survey = pd.DataFrame(items, columns=["Speed", "Staff", "Fees"])
    survey.insert(0, "Recommend (0-10)", np.clip(items.sum(axis=1) - 3 + rng.integers(
        -1, 2, n), 0, 10))
    survey.to_csv(tmp_path / "survey.csv", index=False)  # no personal data at all
    wave = survey.drop(columns="Recommend (0-10)").assign(
        Email=[f"someone{i}@example.org" for i in range(n)],
        **{"IP Address": [f"192.168.{i}.44" for i in range(n)],
           "First Name": [f"Firstname{i}" for i in range(n)]})
    wave.to_csv(tmp_path / "wave.csv", index=False)
    db = tmp_path / "w.db"
    with Workspace.open(f"sqlite:///{db}") as ws:
        ws.create_program("p", tmp_path / "survey.csv", folds=3, keep_survey=True)
        added = ws.add_waves("p", [tmp_path / "wave.csv"])
        assert [(a.status, a.respondents) for a in added] == [("added", n)]
        read = load_survey(tmp_path / "wave.csv", schema=ws.program_model("p").schema,
                           require_target=False, scoring=True)
        assert [c for c, _ in read.source.left_out] == ["Email", "IP Address", "First Name"]
    stored = db.read_bytes()
    assert b"someone1@example.org" not in stored and b"192.168.1.44" not in stored
    assert b"Firstname1" not in stored
    assert (tmp_path / "survey.csv").read_bytes()[:120] in stored  # kept: it held none
