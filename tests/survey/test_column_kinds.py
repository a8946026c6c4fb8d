"""Columns that are neither scores nor segments, as platforms write them: a checkbox question's
joined choices, dates written as text (day first or month first), a second identifier.

Every expected value is computed here from the frame the file was written from.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cx_app.survey.importing import load_survey
from cx_app.survey.inference import infer_schema

CHOICES = ("Chat", "Email", "Phone", "App")


def _frame(n: int = 300, seed: int = 4) -> tuple[pd.DataFrame, pd.DatetimeIndex]:
    """The export and each respondent's answer time."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(1, 6, (n, 3))
    answered = pd.Timestamp("2026-10-01") + pd.to_timedelta(rng.integers(0, 40 * 86400, n),
                                                             unit="s")
    return pd.DataFrame({
        "Response ID": np.arange(1, n + 1),
        "Network ID": [f"{v:09x}" for v in rng.integers(0, 16**9, n)],
        "Store ID": rng.choice([f"S{i:02d}" for i in range(20)], n),
        "Submitted at": answered.strftime("%d/%m/%Y %H:%M"),
        "Recommend": np.clip(np.round(scores.mean(axis=1) * 2 + rng.normal(0, 1.5, n)), 0, 10)
        .astype(int),
        "Speed": scores[:, 0], "Quality": scores[:, 1], "Price": scores[:, 2],
        "Channels used": [", ".join(sorted(rng.choice(CHOICES, rng.integers(1, 4),
                                                      replace=False))) for _ in range(n)],
        "City": rng.choice(["Boston", "Washington, DC", "Chicago"], n),
    }), answered


def test_checkbox_answers_dates_and_a_second_id_are_named_for_what_they_are(tmp_path):
    frame, answered = _frame()
    path = tmp_path / "export.csv"
    frame.to_csv(path, index=False)
    schema = infer_schema(pd.read_csv(path, dtype=str))
    roles = {s.column: s.role for s in schema.segments}
    # the joined choices ("Chat, Email") would make each combination a group
    assert "Channels used" not in roles
    assert "several answers per respondent" in schema.description
    assert "'Channels used'" in schema.description
    # a timestamp written as text is the answer date (before: "free text")
    assert roles["Submitted at"] == "date"
    assert "free text" not in schema.description
    # a device or network id is an identifier, not an answer; 20 stores stay a segment
    assert "identifiers, not answers (never a segment): 'Network ID'" in schema.description
    assert "Network ID" not in roles and roles["Store ID"] == "other"
    assert schema.respondent_id is not None and schema.respondent_id.column == "Response ID"
    # a comma inside one answer ("Washington, DC") does not make a checkbox question
    assert roles["City"] == "region"
    assert {a.column for a in schema.attributes} == {"Speed", "Quality", "Price"}

    data = load_survey(path)
    column = next(s.name for s in data.schema.segments if s.column == "Submitted at")
    # day first, as written: 05/10 is 5 October, not 10 May
    read = pd.to_datetime(data.frame[column]).dt.strftime("%Y-%m-%d %H:%M").tolist()
    assert read == answered.strftime("%Y-%m-%d %H:%M").tolist()


def test_dates_in_a_month_column_stay_the_wave():
    frame, _ = _frame(n=120)
    frame["Month"] = np.where(np.arange(120) < 60, "2026-09-01", "2026-10-01")
    roles = {s.column: s.role for s in infer_schema(frame.astype(str)).segments}
    assert roles["Month"] == "wave" and roles["Submitted at"] == "date"


def test_month_first_dates_stay_month_first_and_iso_dates_as_written(tmp_path):
    frame, answered = _frame(n=100, seed=6)
    frame["Submitted at"] = answered.strftime("%m/%d/%Y")
    frame["Created"] = answered.strftime("%Y-%m-%d")
    path = tmp_path / "us.csv"
    frame.to_csv(path, index=False)
    data = load_survey(path)
    by_column = {s.column: s.name for s in data.schema.segments}
    for header in ("Submitted at", "Created"):
        read = pd.to_datetime(data.frame[by_column[header]]).dt.strftime("%Y-%m-%d").tolist()
        assert read == answered.strftime("%Y-%m-%d").tolist(), header


def test_attributes_named_with_a_role_word_are_attributes_and_a_question_names_no_wave():
    rng = np.random.default_rng(8)
    n = 200
    frame = pd.DataFrame({
        "Recommend": rng.integers(0, 11, n),
        # CX attributes whose names hold "time", "company" or "bank": once segments (a date,
        # a brand), so the model never saw them
        "Waiting time": rng.integers(1, 6, n), "Delivery time": rng.integers(1, 6, n),
        "Company reputation": rng.integers(1, 6, n), "Bank staff": rng.integers(1, 6, n),
        "Month": rng.choice(["2026-09", "2026-10"], n), "Bank": rng.choice(["A", "B"], n),
        "Time": rng.choice(["morning", "evening"], n),
        # SurveyMonkey's checkbox column: once the wave ("month"), which splits the file
        "Which channels have you used in the last month? – Phone":
            rng.choice(["Phone", None], n),
    })
    schema = infer_schema(frame)
    assert [a.column for a in schema.attributes] == [
        "Waiting time", "Delivery time", "Company reputation", "Bank staff"]
    assert {s.column: s.role for s in schema.segments} == {
        "Month": "wave", "Bank": "brand", "Time": "other",  # words, not times
        "Which channels have you used in the last month? – Phone": "other"}


def test_dates_that_read_both_ways_are_read_month_first_and_said(tmp_path):
    """No day above 12 in the whole column: nothing tells the order. It is read month first (as
    pandas does) and the import says so, with one of the file's own dates read out."""
    frame, answered = _frame(n=100, seed=6)
    rng = np.random.default_rng(2)
    days = pd.to_datetime({"year": 2026, "month": rng.integers(1, 13, 100),
                           "day": rng.integers(1, 13, 100)})
    frame["Submitted at"] = days.dt.strftime("%d/%m/%Y")  # written day first
    frame.loc[0, "Submitted at"] = "03/04/2026"
    path = tmp_path / "eu.csv"
    frame.to_csv(path, index=False)
    data = load_survey(path)
    name = next(s.name for s in data.schema.segments if s.column == "Submitted at")
    read = pd.to_datetime(data.frame[name]).dt.strftime("%Y-%m-%d").tolist()
    assert read == pd.to_datetime(frame["Submitted at"], format="%m/%d/%Y").dt.strftime(
        "%Y-%m-%d").tolist()
    assert (f"{name}: no day is above 12, so its dates read month first or day first; read "
            "month first (03/04/2026 = 4 March 2026); write them as YYYY-MM-DD if the day comes "
            "first") in data.quality.notes
    # a column whose order is known says nothing of it
    unambiguous, _ = _frame(n=100, seed=6)
    unambiguous.to_csv(tmp_path / "known.csv", index=False)
    assert not any("read month first or day first" in n for n in load_survey(
        tmp_path / "known.csv").quality.notes)
