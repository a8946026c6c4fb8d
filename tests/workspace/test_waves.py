"""Waves as an analyst names them: labels from the analyst, the wave column or the file name,
dates from the label or the date column, wave order (never upload order), and a file whose
wave column holds several waves: one wave each, content-addressed by file and wave."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from workspace_helpers import copy_of

from cx_app.errors import WorkspaceError
from cx_app.project import read_project
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import simulate_telecom_waves
from cx_app.survey.schema import load_schema
from cx_app.workspace.labels import label_from_text, wave_label, wave_order_key
from cx_app.workspace.programs import Workspace
from cx_app.workspace.transfer import export_program

ROOT = Path(__file__).resolve().parents[2]
TELECOM = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")  # wave and date columns


def _wave(tmp_path, waves, name, *, drop=()):
    frame = simulate_telecom_waves(waves, respondents_per_operator=20, seed=4).drop(
        columns=list(drop))
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path, frame


def _read(path):
    return load_survey(path, schema=TELECOM, require_target=False, scoring=True,
                       require_attributes=False)


@pytest.mark.parametrize(("text", "label", "date"), [
    ("bank_nps_2026-03.xlsx", "2026-03", dt.date(2026, 3, 1)),
    ("bank_nps_2026_03_15.csv", "2026-03-15", dt.date(2026, 3, 15)),
    ("export 202611.xlsx", "2026-11", dt.date(2026, 11, 1)),
    ("NPS Q4 2025.xlsx", "2025-Q4", dt.date(2025, 10, 1)),
    ("bank-wave-12.csv", "W12", None),
    ("bank_W3.xlsx", "W03", None),
    ("survey_1250_2026-13.csv", None, None),  # month 13: not a date; 1250 not a year
])
def test_wave_names_in_texts(text, label, date):
    found = label_from_text(text)
    assert (found is None) if label is None else (found == (label, date))


def test_label_from_the_wave_column_and_date_from_it(tmp_path):
    path, _ = _wave(tmp_path, [5], "whatever_W09.csv")
    named = wave_label(_read(path), filename=path.name)
    assert (named.label, named.date, named.origin) == ("2021-05", dt.date(2021, 5, 1),
                                                       "wave column")


def test_label_from_the_file_name_and_date_from_the_date_column(tmp_path):
    path, frame = _wave(tmp_path, [7], "bank_W07.csv", drop=["Wave"])
    named = wave_label(_read(path), filename=path.name)
    earliest = min(dt.date.fromisoformat(str(d)[:10]) for d in frame["Interview date"])
    assert (named.label, named.date, named.origin) == ("W07", earliest, "file name")


def test_a_given_label_wins(tmp_path):
    path, _ = _wave(tmp_path, [5], "x.csv")
    named = wave_label(_read(path), filename=path.name, given=" March 2021 ")
    assert (named.label, named.origin) == ("March 2021", "given")
    assert wave_label(_read(path), filename=path.name, given="2021-03-31").date == \
        dt.date(2021, 3, 31)


def test_a_month_written_in_words_dates_its_wave_and_orders_it(tmp_path):
    # "April 2026" was undated and sorted as text, before "March 2026": the tracker's
    # "since the previous wave" compared April with March
    path, frame = _wave(tmp_path, [5], "x.csv")
    frame.assign(Wave="March 2026").to_csv(path, index=False)
    named = wave_label(_read(path), filename=path.name)
    assert (named.label, named.date, named.origin) == ("March 2026", dt.date(2026, 3, 1),
                                                       "wave column")
    waves = [("May 2026", dt.date(2026, 5, 1)), ("April 2026", dt.date(2026, 4, 1)),
             ("March 2026", dt.date(2026, 3, 1))]
    assert [w for w, _ in sorted(waves, key=lambda w: wave_order_key(*w))] == [
        "March 2026", "April 2026", "May 2026"]


def test_wave_order_is_date_then_natural_label():
    waves = [("W10", None), ("W2", None), ("2021-05", dt.date(2021, 5, 1)), ("W01", None),
             ("b", dt.date(2021, 3, 1)), ("a", dt.date(2021, 3, 1))]
    ordered = sorted(waves, key=lambda w: wave_order_key(*w))
    assert [w[0] for w in ordered] == ["a", "b", "2021-05", "W01", "W2", "W10"]


@pytest.fixture(scope="module")
def telecom_program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("program")
    reference, _ = _wave(folder, [1, 2], "reference.csv")
    ws = Workspace.open(f"sqlite:///{folder / 'w.db'}")
    ws.create_program("telecom", reference, schema=TELECOM, algorithm="lr", folds=3,
                      calibration="none", keep_survey=True)
    yield ws, folder
    ws.close()


def test_a_file_of_several_waves_gives_one_wave_each(telecom_program):
    ws, folder = telecom_program
    path, frame = _wave(folder, [4, 3], "two_months.csv")
    added = ws.add_waves("telecom", [path])
    assert [(a.label, a.part, a.status, a.respondents) for a in added] == [
        ("2021-03", "2021-03", "added", 60), ("2021-04", "2021-04", "added", 60)]
    assert [a.status for a in ws.add_waves("telecom", [path])] == ["already", "already"]
    later, _ = _wave(folder, [2], "february.csv")  # added last, sorted first
    ws.add_waves("telecom", [later])
    view = ws.show("telecom")
    assert [(w.label, w.date) for w in view.waves] == [
        ("2021-02", dt.date(2021, 2, 1)), ("2021-03", dt.date(2021, 3, 1)),
        ("2021-04", dt.date(2021, 4, 1))]
    assert all(set(w.segments) == {"operator", "region"} for w in view.waves)
    assert sum(w.respondents for w in view.waves) == len(frame) + 60
    with pytest.raises(WorkspaceError, match="holds 2 waves in its wave column, which label "
                                             "them: leave out the label"):
        other, _ = _wave(folder, [5, 6], "two_more.csv")
        ws.add_waves("telecom", [other], label="May")
    assert ws.remove_wave("telecom", "2021-03") == 1
    assert [w.label for w in ws.show("telecom").waves] == ["2021-02", "2021-04"]


def test_the_survey_itself_is_kept_only_when_allowed(telecom_program, program_file, tmp_path):
    ws, folder = telecom_program
    assert ws.show("telecom").survey_included is True
    exported = read_project(export_program(ws, "telecom"))
    assert exported.survey_bytes == (folder / "reference.csv").read_bytes()
    with Workspace.open(copy_of(program_file, tmp_path)) as default:  # made without keep_survey
        assert default.show("telecom").survey_included is False
        assert read_project(export_program(default, "telecom")).survey_bytes is None
