"""The messy bank-tracker generator: what it writes, and that its oracle is the true model."""

from __future__ import annotations

import numpy as np
import pandas as pd
from openpyxl import load_workbook

from cx_app.simulation.bank_export import (
    BANK_ATTRIBUTES,
    DROPPED_IN_LAST_WAVE,
    TARGET_COLUMN,
    TITLE_ROWS,
    bank_true_probabilities,
    simulate_bank_waves,
    write_bank_export,
)

COLUMNS = {a.name: a.column for a in BANK_ATTRIBUTES}


def test_waves_are_deterministic_and_independent_of_each_other():
    a = simulate_bank_waves(300, waves=2, seed=3)
    b = simulate_bank_waves(300, waves=3, seed=3, drop_in_last_wave=False)
    pd.testing.assert_frame_equal(a["2026-Q1"], b["2026-Q1"])
    assert not a["2026-Q1"].equals(simulate_bank_waves(300, waves=1, seed=4)["2026-Q1"])


def test_not_applicable_patterns_are_as_documented():
    frame = pd.concat(simulate_bank_waves(2000, waves=2, drop_in_last_wave=False).values())
    mortgage = frame[COLUMNS["mortgage_advice"]]
    assert (mortgage == 99).mean() > 0.5  # n/a on more than half of the respondents
    app = frame[COLUMNS["mobile_app"]]
    assert (app == "N/A").mean() > 0.05 and (app == "Don't know").mean() > 0.005
    phone = frame[COLUMNS["phone_effort"]]
    assert phone.isna().mean() > 0.25  # routing blanks
    answered = pd.to_numeric(phone, errors="coerce").dropna()
    assert set(answered.unique()) <= {-2, -1, 0, 1, 2} and (answered == -1).any()
    target = pd.to_numeric(frame[TARGET_COLUMN], errors="coerce")
    assert 0 < target.isna().mean() < 0.03  # a few invalid target answers


def test_the_last_wave_lacks_the_dropped_attribute():
    waves = simulate_bank_waves(100, waves=3)
    assert COLUMNS[DROPPED_IN_LAST_WAVE] in waves["2026-Q2"]
    assert COLUMNS[DROPPED_IN_LAST_WAVE] not in waves["2026-Q3"]


def test_the_oracle_probabilities_match_the_simulated_scores():
    frame = pd.concat(simulate_bank_waves(4000, waves=2, drop_in_last_wave=False).values())
    target = pd.to_numeric(frame[TARGET_COLUMN], errors="coerce")
    valid = target.notna().to_numpy()
    proba = bank_true_probabilities(frame[valid])
    assert np.allclose(proba.sum(axis=1), 1.0)
    observed = np.bincount(target[valid].astype(int), minlength=11) / valid.sum()
    # 8,000 draws: each share's standard error is below 0.005
    assert np.abs(proba.mean(axis=0) - observed).max() < 0.02
    # and the oracle separates: its likeliest class is right far more often than the base rate
    hit = (proba.argmax(axis=1) == target[valid].to_numpy().astype(int)).mean()
    assert hit > observed.max() + 0.05


def test_the_export_has_a_cover_sheet_and_title_rows(tmp_path):
    waves = simulate_bank_waves(20, waves=1)
    path = write_bank_export(waves, tmp_path / "bank.xlsx")
    book = load_workbook(path, read_only=True)
    assert book.sheetnames == ["Notes", "Data"]
    rows = list(book["Data"].iter_rows(values_only=True))
    assert [r[0] for r in rows[: len(TITLE_ROWS)]] == list(TITLE_ROWS)
    header = rows[len(TITLE_ROWS) + 1]
    assert list(header) == list(waves["2026-Q1"].columns)
    assert len(rows) == len(TITLE_ROWS) + 2 + 20


def test_inference_reads_the_messy_bank_export(tmp_path):
    """The cover sheet is skipped, the recommend question is the NPS target (not a "brand"
    segment because its header names the bank), each attribute keeps its own scale, −1 stays
    an answer on the −2..2 effort question, and 99 / "N/A" / "Don't know" are the codes."""
    from cx_app.survey.importing import load_survey
    from cx_app.survey.schema import Scale

    waves = simulate_bank_waves(300)
    path = write_bank_export(waves, tmp_path / "bank.xlsx")
    survey = load_survey(path)
    schema = survey.schema
    assert survey.source.sheet == "Data"
    assert any("skipped 'Notes'" in note for note in survey.quality.notes)
    assert schema.target.column == TARGET_COLUMN and schema.target.kind == "nps"
    expected = {a.column: Scale(min=a.scale[0], max=a.scale[1]) for a in BANK_ATTRIBUTES}
    assert {a.column: a.scale for a in schema.attributes} == expected
    assert set(schema.missing_codes) == {99, "N/A", "Don't know"}
    frame = pd.concat(list(waves.values()))
    valid = pd.to_numeric(frame[TARGET_COLUMN], errors="coerce").notna().sum()
    assert survey.quality.rows_read == len(frame)
    assert survey.quality.counts_by_reason() == {"missing target": len(frame) - valid}
