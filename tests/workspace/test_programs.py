"""``cx-app program create/add-wave/show/report`` on a SQLite workspace and on a real
PostgreSQL server: the same numbers as the library path (``train_model`` on the reference
survey, then ``track_waves`` on the same wave files), waves in wave order whatever the order
they were added in, the same file twice one wave, removal, reports with the tracker, and
``.cxproj`` export and import."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from types import SimpleNamespace

import openpyxl
import pandas as pd
import pytest
from pptx import Presentation
from sqlalchemy import func, select
from workspace_helpers import ATTRIBUTES, BACKENDS, new_database, telecom_mapping

from cx_app.cli import main
from cx_app.errors import WorkspaceError
from cx_app.estimate.tracker import track_waves
from cx_app.estimate.training import train_model
from cx_app.project import project_bytes, read_project
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import simulate_telecom_waves
from cx_app.workspace.programs import Workspace
from cx_app.workspace.tables import Estimate, Report
from cx_app.workspace.transfer import export_program, import_program

MAPPING = ["--target", "Likelihood to recommend (0-10)", "--scale", "0-10",
           "--attributes", ",".join(ATTRIBUTES), "--attribute-scale", "1-10",
           "--segments", "Operator,Region", "--id", "Respondent ID",
           "--missing-codes", "99,Don't know"]
TRAINING = ["--algorithm", "lr", "--folds", "5", "--calibration", "none", "--seed", "0"]
WAVE_ORDER = ["W01", "W02", "W03", "W10"]
SHOWN: dict[str, dict] = {}
"""``show --json`` of each backend's program, as made (the second compares with the first)."""


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def ok(*args: str) -> str:
    code, out, err = cli(*args)
    assert code == 0, err
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def program(request, tmp_path_factory, survey_files):
    """A program made through the CLI: created, then W10 and W01 added, then W02, W01 again
    and W03 (labelled)."""
    url = new_database(request.param, tmp_path_factory.mktemp("workspace"), request)
    db = ["--db", url]
    created = ok("program", "create", "telecom", str(survey_files["reference"]), *MAPPING,
                 *TRAINING, *db)
    first = ok("program", "add-wave", "telecom", str(survey_files["W10"]),
               str(survey_files["W01"]), *db)
    second = ok("program", "add-wave", "telecom", *(str(survey_files[w])
                                                    for w in ("W02", "W01", "W03")), *db)
    shown = json.loads(ok("program", "show", "telecom", "--json", *db))
    SHOWN[request.param] = shown
    return SimpleNamespace(url=url, db=db, created=created, added=first + second, shown=shown,
                           backend=request.param)


@pytest.fixture(scope="module")
def library(survey_files):
    """The library path on the same files: the model trained by ``train_model`` with the
    program's mapping and settings, and ``track_waves`` by each segment."""
    survey = load_survey(survey_files["reference"], schema=telecom_mapping())
    model = train_model(survey, "lr", calibration="none", folds=5, seed=0).model
    waves = [load_survey(survey_files[w], schema=model.schema, require_target=False,
                         scoring=True, require_attributes=False) for w in WAVE_ORDER]
    return {by: track_waves(model, waves, by=by) for by in ("operator", "region")}


def test_waves_in_wave_order_and_the_same_file_once(program):
    assert [w["label"] for w in program.shown["waves"]] == WAVE_ORDER  # W01 added after W10
    lines = program.added.splitlines()
    assert len(lines) == 5
    assert "telecom_W01.csv: wave W01, 180 respondents, added" in lines[1]
    assert "already in the program" in lines[3] and "W01" in lines[3]
    with Workspace.open(program.url) as ws:
        summary = {p.name: p for p in ws.list_programs()}["telecom"]
        assert summary.waves == 4
        assert summary.last_wave == "W03"  # the wave added last (the first page shows it)
        assert summary.last_change >= summary.created


def test_cli_numbers_are_the_library_path(program, library):
    for shown, tracked in zip(program.shown["waves"], library["operator"], strict=True):
        nps = tracked.estimate.estimated_nps
        assert shown["respondents"] == tracked.estimate.n == 180
        assert shown["estimated_nps"]["value"] == pytest.approx(nps.value, abs=1e-9)
        assert shown["estimated_nps"]["ci95"] == pytest.approx(list(nps.ci95), abs=1e-9)
        realized = tracked.estimate.realized_nps
        assert ("realized_nps" in shown) == (realized is not None)
        if realized is not None:
            assert shown["realized_nps"]["value"] == pytest.approx(realized.value, abs=1e-12)
        for by in ("operator", "region"):
            tracked_by = library[by][WAVE_ORDER.index(shown["label"])]
            expected = {s.label: s for s in tracked_by.segments}
            assert set(shown["segments"][by]) == set(expected)
            for value, figure in shown["segments"][by].items():
                seg = expected[value]
                assert figure["respondents"] == seg.respondents
                if seg.estimated_nps is None:
                    assert figure["estimated_nps"] is None
                    continue
                assert figure["estimated_nps"]["value"] == pytest.approx(
                    seg.estimated_nps.value, abs=1e-9)
                assert figure["estimated_nps"]["ci95"] == pytest.approx(
                    list(seg.estimated_nps.ci95), abs=1e-9)


def _numbers(shown: dict) -> list:
    return [(w["label"], w["respondents"], w["estimated_nps"]["value"],
             *w["estimated_nps"]["ci95"], w.get("realized_nps", {}).get("value"),
             sorted((by, v, f["respondents"], f["estimated_nps"] and f["estimated_nps"]["value"])
                    for by, values in w["segments"].items() for v, f in values.items()))
            for w in shown["waves"]]


def test_postgresql_gives_what_sqlite_gives(program):
    other = next((SHOWN[b] for b in BACKENDS if b != program.backend and b in SHOWN), None)
    if other is None:
        pytest.skip("the other backend's program is made in its own run of this module")
    for mine, theirs in zip(_numbers(program.shown), _numbers(other), strict=True):
        assert mine[:2] == theirs[:2] and mine[5] == theirs[5]
        assert mine[2:5] == pytest.approx(theirs[2:5], abs=1e-9)
        assert [m[:3] for m in mine[6]] == [t[:3] for t in theirs[6]]
        assert [m[3] for m in mine[6]] == pytest.approx([t[3] for t in theirs[6]], abs=1e-9)


def test_labelled_wave_realized_is_its_own_score(program, survey_files):
    w03 = next(w for w in program.shown["waves"] if w["label"] == "W03")
    scores = pd.read_csv(survey_files["W03"])["Likelihood to recommend (0-10)"]
    by_hand = 100 * ((scores >= 9).mean() - (scores <= 6).mean())
    assert w03["realized_nps"]["value"] == pytest.approx(by_hand, abs=1e-9)
    assert all("realized_nps" not in w for w in program.shown["waves"] if w["label"] != "W03")


def test_remove_a_wave_and_add_it_again(program, survey_files):
    ok("program", "remove-wave", "telecom", "W02", *program.db)
    after = json.loads(ok("program", "show", "telecom", "--json", *program.db))
    assert [w["label"] for w in after["waves"]] == ["W01", "W03", "W10"]
    with Workspace.open(program.url) as ws:  # its estimate went with it (foreign keys cascade)
        assert ws.database.read(lambda s: s.scalar(select(func.count(Estimate.id)))) == 3
    again = ok("program", "add-wave", "telecom", str(survey_files["W02"]), *program.db)
    assert "wave W02, 180 respondents, added" in again
    restored = json.loads(ok("program", "show", "telecom", "--json", *program.db))
    assert [w["label"] for w in restored["waves"]] == WAVE_ORDER
    assert restored["waves"][1]["estimated_nps"] == program.shown["waves"][1]["estimated_nps"]


def test_report_carries_the_tracker_of_every_wave(program, tmp_path):
    out = ok("program", "report", "telecom", "--out", str(tmp_path), *program.db)
    assert "report.xlsx" in out and "report.html" in out and "telecom.pptx" in out
    sheet = openpyxl.load_workbook(tmp_path / "report.xlsx")["Tracker"]
    rows = [tuple(c.value for c in row) for row in sheet.iter_rows()]
    header = next(i for i, r in enumerate(rows) if r[:3] == ("Wave", "Date", "Group"))
    overall = [r for r in rows[header + 1:] if r[2] == "All respondents"]
    assert [r[0] for r in overall] == WAVE_ORDER
    for row, wave in zip(overall, program.shown["waves"], strict=True):
        assert row[4] == pytest.approx(wave["estimated_nps"]["value"], abs=1e-9)
        assert row[5:7] == pytest.approx(tuple(wave["estimated_nps"]["ci95"]), abs=1e-9)
    segment_rows = [r for r in rows[header + 1:] if r[0] == "W01" and r[2] != "All respondents"]
    w01 = program.shown["waves"][0]["segments"]
    assert len(segment_rows) == len(w01["operator"]) + len(w01["region"])
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert all(label in html for label in WAVE_ORDER)
    deck = Presentation(tmp_path / "telecom.pptx")
    tracker = next(s for s in deck.slides if any(
        shape.has_table and shape.table.cell(0, 0).text == "Wave" for shape in s.shapes))
    table = next(shape.table for shape in tracker.shapes if shape.has_table)
    assert [row.cells[0].text for row in list(table.rows)[1:]] == WAVE_ORDER
    assert [row.cells[2].text for row in list(table.rows)[1:]] == \
        [f"{w['estimated_nps']['value']:.1f}" for w in program.shown["waves"]]
    wave_titles = [s.shapes.title.text.split(":")[0] for s in deck.slides]
    assert [t for t in wave_titles if t in WAVE_ORDER] == WAVE_ORDER
    with Workspace.open(program.url) as ws:
        made = ws.database.read(lambda s: s.scalars(select(Report)).all())
    assert sorted(r.kind for r in made) == ["html", "pptx", "xlsx"]
    assert {r.waves for r in made} == {4}


def test_export_and_import_give_the_same_program(program, tmp_path):
    with Workspace.open(program.url) as ws:
        exported = export_program(ws, "telecom", tmp_path / "telecom.cxproj")
        name = import_program(ws, tmp_path / "telecom.cxproj", name="telecom copy")
        original, copy = ws.show("telecom").to_dict(), ws.show(name).to_dict()
        # a project saved by the app has no program part: its estimates become waves
        # labelled from their files, without segment estimates
        project = read_project(exported)
        plain = {k: v for k, v in project.settings.items() if k != "program"}
        app_saved = project_bytes(dataclasses.replace(project, settings=plain))
        from_app = ws.show(import_program(ws, app_saved, name="from the app")).to_dict()
        listed = ok("program", "list", *program.db)
    assert copy["waves"] == original["waves"]
    assert copy["models"][0]["file_sha256"] == original["models"][0]["file_sha256"]
    assert [w["label"] for w in from_app["waves"]] == WAVE_ORDER
    assert [w["estimated_nps"] for w in from_app["waves"]] == \
        [w["estimated_nps"] for w in original["waves"]]
    assert all(w["segments"] == {} for w in from_app["waves"])
    assert "telecom: telecom_reference.csv" in listed and "4 wave(s)" in listed
    assert "from the app:" in listed and "telecom copy:" in listed


def test_mistakes_are_one_sentence(program, survey_files):
    code, _, err = cli("program", "show", "nope", *program.db)
    assert code == 2 and err.count("\n") == 1
    assert "no program named 'nope'" in err and "its programs are " in err and "telecom" in err
    code, _, err = cli("program", "create", "telecom", str(survey_files["reference"]), *MAPPING,
                       *TRAINING, *program.db)
    assert code == 2 and "already has a program named 'telecom'" in err
    code, _, err = cli("program", "add-wave", "telecom", str(survey_files["W01"]),
                       str(survey_files["W02"]), "--label", "March", *program.db)
    assert code == 2 and "a label names one wave" in err
    code, _, err = cli("program", "remove-wave", "telecom", "W99", *program.db)
    assert code == 2 and "has no wave labelled 'W99'" in err


def test_long_names_are_cut_to_what_the_tables_hold(program, survey_files):
    data = simulate_telecom_waves([6], respondents_per_operator=20, seed=2,
                                  include_target=False).to_csv(index=False).encode()
    name = "region north " * 30 + ".csv"  # 390 characters, no wave named in it
    with Workspace.open(program.url) as ws:
        added = ws.add_waves("telecom", [(data, name)])
        assert [(a.label, a.status) for a in added] == [(name[:-4][:200], "added")]
        assert next(w for w in ws.show("telecom").waves
                    if w.label == name[:-4][:200]).filename == name
        ws.remove_wave("telecom", name[:-4][:200])
        with pytest.raises(WorkspaceError, match="a program needs a name of 1 to 200 "
                                                 "characters"):
            ws.create_program("x" * 201, survey_files["reference"])


@pytest.mark.slow  # ~12 s alone, ~40 s on a loaded machine
def test_create_with_defaults_says_what_it_read_then_each_fold(survey_files, tmp_path):
    """No ``--algorithm`` and no mapping: the program trains logistic regression (the app's
    first default model) on the inferred layout, and before the training it prints the layout,
    the row counts and each excluded row with its reason, then a line per finished fold."""
    frame = pd.read_csv(survey_files["reference"])
    frame.loc[4, "Likelihood to recommend (0-10)"] = 12  # file row 6 (header on row 1)
    path = tmp_path / "reference_one_bad.csv"
    frame.to_csv(path, index=False)
    out = ok("program", "create", "defaults", str(path), "--folds", "2", "--calibration",
             "none", "--db", f"sqlite:///{tmp_path / 'ws.db'}")
    lines = out.splitlines()
    assert "  target: 'Likelihood to recommend (0-10)' (kind nps, scale 0-10; recommend " \
           "question: yes)" in lines
    assert "  respondent id: 'Respondent ID'" in lines
    assert "rows read: 600" in lines and "rows excluded: 1" in lines
    assert "    row 6, column 'Likelihood to recommend (0-10)': '12'" in lines
    folds = ["Logistic regression: fitting 2 folds",
             "  Logistic regression: fold 1/2 done", "  Logistic regression: fold 2/2 done"]
    start = lines.index(folds[0])
    assert lines[start:start + 3] == folds
    assert start > lines.index("rows excluded: 1")  # what it read comes before the training
    assert lines[-1].startswith("created program defaults in ")
    assert "model Logistic regression (fast settings), calibration none, trained on 599 " \
           "respondents" in lines[-1]


def test_create_says_which_calibration_each_round_of_folds_tries(capsys):
    """With ``--calibration auto`` the folds are fitted once per calibration, in the order
    ``compare_calibrations`` tries them: each round's title says which, in words."""
    from cx_app.cli.program import _calibration_progress
    from cx_app.estimate.calibration import CALIBRATION_METHODS

    progress = _calibration_progress("nb", "auto")
    for _ in CALIBRATION_METHODS:
        progress(0, 2, "nb: fitting 2 folds")
        progress(2, 2, "nb: fold 2/2 done")
    assert capsys.readouterr().out.splitlines()[::2] == [
        "Naive Bayes: fitting 2 folds (calibration 1 of 4: probabilities as trained)",
        "Naive Bayes: fitting 2 folds (calibration 2 of 4: probabilities recalibrated, "
        "temperature)",
        "Naive Bayes: fitting 2 folds (calibration 3 of 4: probabilities recalibrated, sigmoid)",
        "Naive Bayes: fitting 2 folds (calibration 4 of 4: probabilities recalibrated, "
        "isotonic)"]
    assert CALIBRATION_METHODS == ("none", "temperature", "sigmoid", "isotonic")


def test_show_says_the_realized_base_when_some_did_not_answer(program_file, survey_files,
                                                               tmp_path):
    """The realized NPS is over the respondents who answered the target: the text says their
    number when it is smaller than the wave's (a realized score over 170 of 180 is not
    'the 180 respondents' score')."""
    from workspace_helpers import copy_of

    frame = pd.read_csv(survey_files["W03"])
    target = "Likelihood to recommend (0-10)"
    frame.loc[frame.index[:10], target] = None
    path = tmp_path / "telecom_W03.csv"
    frame.to_csv(path, index=False)
    db = ["--db", copy_of(program_file, tmp_path)]
    ok("program", "add-wave", "telecom", str(path), *db)
    scores = frame[target].dropna()
    by_hand = 100 * ((scores >= 9).mean() - (scores <= 6).mean())
    line = next(s for s in ok("program", "show", "telecom", *db).splitlines()
                if s.startswith("W03:"))
    assert line.startswith(f"W03: {len(frame):,} respondents, estimated NPS ")
    assert f"; realized {by_hand:+.1f} ({len(scores):,} answered)  (telecom_W03.csv)" in line


def test_show_names_a_csat_programs_net_score(tmp_path):
    """A CSAT program's waves are estimated "net score" (top box − bottom box), never "NPS"."""
    from cx_app.survey.samples import sample_path

    path = str(sample_path("retail_csat"))
    db = ["--db", f"sqlite:///{tmp_path / 'csat.db'}"]
    ok("program", "create", "shop", path, *db)
    ok("program", "add-wave", "shop", path, *db)
    shown = ok("program", "show", "shop", *db)
    raw = pd.read_csv(path)
    wave = raw[raw.eq("2021-01").any(axis=1)]["Overall satisfaction (1-5)"].dropna()
    by_hand = 100 * ((wave >= 4).mean() - (wave <= 2).mean())
    (line,) = [s for s in shown.splitlines() if s.startswith("2021-01:")]
    assert line.startswith(f"2021-01: {len(wave)} respondents, estimated net score ")
    assert f"; realized {by_hand:+.1f}" in line and "NPS" not in shown
