"""Project files: evaluate → project → report round trip, and every kind of bad project file
refused with one sentence (nothing half-loaded)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pytest

from cx_app.archive_limits import megabytes
from cx_app.cli import main
from cx_app.project import ProjectFileError, project_bytes, read_project

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """``cx-app evaluate`` on 240 rows of the CSAT sample (lr + nb, 3 folds) with --project."""
    tmp = tmp_path_factory.mktemp("project")
    lines = (ROOT / "sample_surveys" / "retail_csat.csv").read_text(encoding="utf-8")
    survey = tmp / "small.csv"
    survey.write_text("\n".join(lines.splitlines()[:241]) + "\n", encoding="utf-8")
    project = tmp / "analysis.cxproj"
    assert main(["evaluate", str(survey), "--algorithms", "lr,nb", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(tmp / "ev"),
                 "--project", str(project)]) == 0
    return tmp, survey, project


def _cells(path: Path) -> dict:
    book = openpyxl.load_workbook(path)
    return {(ws.title, c.coordinate): c.value for ws in book for row in ws.iter_rows()
            for c in row if c.value is not None}


def test_evaluate_project_report_round_trip(evaluated, capsys):
    tmp, survey, project = evaluated
    out = tmp / "again"
    assert main(["report", "--project", str(project), "--out", str(out)]) == 0
    assert "report.xlsx" in capsys.readouterr().out
    first = (tmp / "ev" / "results.json").read_bytes()
    assert (out / "results.json").read_bytes() == first
    a, b = _cells(tmp / "ev" / "report.xlsx"), _cells(out / "report.xlsx")
    assert a.keys() == b.keys()
    about = {k for k, v in a.items() if k[0] == "About" and v == "Report created"}
    timing = {(sheet, "B" + coord[1:]) for sheet, coord in about}  # the creation time only
    assert len(timing) == 1
    assert {k: v for k, v in a.items() if k not in timing} == \
        {k: v for k, v in b.items() if k not in timing}


def test_project_holds_the_analysis_not_the_respondents(evaluated):
    tmp, survey, project = evaluated
    opened = read_project(project)
    results = json.loads((tmp / "ev" / "results.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(survey.read_bytes()).hexdigest()
    assert (opened.survey.sha256, opened.survey.filename) == (digest, "small.csv")
    assert opened.survey_bytes is None
    assert [m.model_id for m in opened.models] == ["lr", "nb"]
    lr = opened.models[0].cv
    assert lr.proba.shape == (results["dataset"]["rows_used"], len(results["dataset"]["classes"]))
    assert lr.folds == 3 and set(np.unique(lr.fold)) == {0, 1, 2}
    # the arrays give back the results' own numbers: accuracy at the original level
    accuracy = float(np.mean(lr.y_pred == lr.y_true))
    assert accuracy == pytest.approx(
        results["models"]["lr"]["levels"]["original"]["metrics"]["accuracy"])
    assert opened.provenance["inputs"] == {"small.csv": digest}
    assert opened.provenance["schema_sha256"] == results["provenance"]["schema_sha256"]
    with zipfile.ZipFile(project) as zf:
        names = set(zf.namelist())
        manifest = json.loads(zf.read("manifest.json"))
    assert names == {"manifest.json", *(m["name"] for m in manifest["members"])}
    assert "survey.data" not in names and "models/000.npz" in names


def test_the_survey_goes_in_only_when_asked(evaluated, tmp_path):
    tmp, survey, _ = evaluated
    project = tmp_path / "with.cxproj"
    assert main(["evaluate", str(survey), "--algorithms", "nb", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(tmp_path / "ev"),
                 "--project", str(project), "--include-survey"]) == 0
    assert read_project(project).survey_bytes == survey.read_bytes()


def _rezip(data: bytes, edit) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            content = edit(item.filename, zin.read(item.filename))
            if content is not None:
                zout.writestr(item.filename, content)
    return out.getvalue()


def _manifest_edit(change):
    def edit(name, content):
        if name != "manifest.json":
            return content
        manifest = json.loads(content)
        change(manifest)
        return json.dumps(manifest).encode()
    return edit


def test_bad_project_files_are_one_sentence(evaluated, tmp_path, capsys):
    _, _, project = evaluated
    good = project.read_bytes()
    cases = {
        "truncated": (good[: len(good) // 2], "is not a cx-app project file, or it is truncated"),
        "not a zip": (b"name,score\nx,1\n", "is not a cx-app project file, or it is truncated"),
        "foreign zip": (_rezip(good, lambda n, c: None if n == "manifest.json" else c),
                        "is a zip archive but not a cx-app project file (it has no manifest"),
        "other format": (_rezip(good, _manifest_edit(lambda m: m.update(format="x"))),
                         "is a zip archive with a manifest, but not a cx-app project file"),
        "newer": (_rezip(good, _manifest_edit(lambda m: m.update(format_version=2))),
                  "has project-file format version 2; this cx-app reads version 1: update"),
        "changed member": (_rezip(good, lambda n, c: c.replace(b"lr", b"nb")
                                  if n == "models/000.json" else c),
                           "is damaged: the content of models/000.json does not match the SHA"),
        "missing member": (_rezip(good, lambda n, c: None if n == "plan.json" else c),
                           "is damaged: the member plan.json is missing"),
        "extra member": (_rezip(good, lambda n, c: c) + b"", None),
    }
    smuggled = io.BytesIO(good)
    with zipfile.ZipFile(smuggled, "a") as zf:
        zf.writestr("evil.pkl", b"\x80\x04N.")
    cases["extra member"] = (smuggled.getvalue(),
                             "is damaged: it holds evil.pkl, which its manifest does not list")
    for case, (data, message) in cases.items():
        with pytest.raises(ProjectFileError, match="^x.cxproj ") as info:
            read_project(data, name="x.cxproj")
        assert message in str(info.value), case
        assert "\n" not in str(info.value)
        path = tmp_path / f"{case}.cxproj"
        path.write_bytes(data)
        assert main(["report", "--project", str(path), "--out", str(tmp_path / case)]) == 2
        assert message in capsys.readouterr().err, case
        assert not (tmp_path / case).exists()  # nothing written from a bad project


def test_a_model_array_that_does_not_fit_is_refused(evaluated):
    """A consistent manifest over inconsistent content (hashes recomputed): still refused."""
    _, _, project = evaluated
    opened = read_project(project)
    import dataclasses

    cv = opened.models[0].cv
    broken = dataclasses.replace(opened.models[0], cv=dataclasses.replace(cv, proba=cv.proba[:5]))
    data = project_bytes(dataclasses.replace(opened, models=(broken,)))
    with pytest.raises(ProjectFileError, match="x.cxproj is damaged: models/000: its arrays do "
                                               "not fit together"):
        read_project(data, name="x.cxproj")


def test_a_project_too_big_for_the_upload_limit_is_refused(evaluated, monkeypatch):
    _, _, project = evaluated
    monkeypatch.setenv("CX_APP_MAX_FILE_MB", "0.001")
    with pytest.raises(ProjectFileError, match="analysis.cxproj"):
        read_project(project)


def test_a_project_that_unpacks_beyond_the_limit_is_refused_unread(evaluated, monkeypatch):
    """The unzipped-size limit of uploads applies, from the sizes the archive declares (a
    zip bomb is refused before anything is inflated)."""
    _, _, project = evaluated
    with zipfile.ZipFile(project) as zf:
        total = sum(i.file_size for i in zf.infolist())
    monkeypatch.setenv("CX_APP_MAX_DECOMPRESSED_MB", str(total / 2**20 / 2))
    with pytest.raises(ProjectFileError, match=r"^analysis.cxproj would unpack to [\d.,]+ [KM]B, "
                                               r"more than the limit of [\d.,]+ [KM]B "
                                               r"\(CX_APP_MAX_DECOMPRESSED_MB\); it was refused "
                                               r"before unpacking\.$") as info:
        read_project(project)
    assert f"unpack to {megabytes(total)}," in str(info.value)
    monkeypatch.setenv("CX_APP_MAX_ZIP_ENTRIES", "3")
    monkeypatch.delenv("CX_APP_MAX_DECOMPRESSED_MB")
    with pytest.raises(ProjectFileError, match="more than the 3 an archive may hold"):
        read_project(project)
