"""Save project / Open project through AppTest: a second browser session opens the first one's
project file and gets every model back (same arrays, final model, plan, last estimate) without
a single training; every page renders; a damaged or foreign file is one clear sentence and
leaves the session's analysis as it was."""

# ruff: noqa: F811  (pytest fixtures imported from test_app_pages are parameters here)
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from cx_app.app.project import open_analysis, save_analysis
from cx_app.app.session import Analysis
from cx_app.engine.plan import PlanSpec
from cx_app.project import ProjectFileError, read_project
from cx_app.provenance import without_wall_clock

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240
SEED = 13  # a recipe no other test module trains
PAGES = ["data", "nps", "models", "confusion", "compare", "drivers", "new_wave", "report",
         "project"]




@pytest.fixture(scope="module")
def saved():
    """Session 1: train lr and nb (3 folds), change the plan, fit lr on all respondents (the
    New wave page then estimates the bundled wave), build the report, save the project."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["lr", "nb"])
    at.number_input(key="folds").set_value(3)
    at.number_input(key="seed").set_value(SEED)
    at.button(key="train").click().run()
    _ok(at)
    analysis = at.session_state["analysis"]
    plan = analysis.plan.model_dump(mode="json")
    plan["plan"] = plan["plan"][:1]  # only the first reduction step: a plan of the user's own
    analysis.set_plan(PlanSpec.model_validate(plan))
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    assert analysis.finals and at.session_state["last_wave_estimate"] is not None
    at.switch_page("app_pages/report.py").run()
    at.button(key="build_reports").click().run()
    _ok(at)
    at.switch_page("app_pages/project.py").run()
    at.button(key="project_prepare").click().run()
    _ok(at)
    assert any(d.label.startswith("Save project") for d in at.download_button)
    return at, at.session_state["project_file"]


@pytest.mark.slow  # trains, saves and opens a whole project (~28 s)
def test_open_project_restores_every_page_without_training(saved):
    first, data = saved
    before = first.session_state["analysis"]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/project.py").run()
    at.file_uploader(key="project_upload").upload("telecom.cxproj", data, "application/zip")
    at.run()
    _ok(at)
    assert any("Opened telecom.cxproj: 2 model(s)" in s.value for s in at.success)
    after = at.session_state["analysis"]
    assert list(after.models) == list(before.models) and after.trainings == 0
    assert after.plan == before.plan and len(after.plan.plan) == 1
    for model_id, model in before.models.items():
        restored = after.models[model_id]
        np.testing.assert_array_equal(restored.cv.proba, model.cv.proba)
        np.testing.assert_array_equal(restored.cv.fold, model.cv.fold)
        np.testing.assert_array_equal(restored.permutation.per_fold, model.permutation.per_fold)
    (final_key, final), = before.finals.items()
    # the project's model file is the very file the New wave page offers for download
    import hashlib

    final_id = next(m for m in before.models if f"{before.models[m].key}:final" == final_key)
    assert read_project(data).final_model_sha256() == [
        hashlib.sha256(before.final_model_bytes(final_id)).hexdigest()]
    np.testing.assert_array_equal(after.finals[final_key].predict_proba(before.survey.X),
                                  final.predict_proba(before.survey.X))
    estimate = at.session_state["last_wave_estimate"]
    assert estimate.to_dict() == first.session_state["last_wave_estimate"].to_dict()

    for page in PAGES:  # every page renders from the restored analysis
        at.switch_page(f"app_pages/{page}.py").run()
        _ok(at)
    assert at.session_state["analysis"] is after  # the Data page kept it (same data key)
    assert after.trainings == 0 and after.models.keys() == before.models.keys()

    at.switch_page("app_pages/report.py").run()
    at.button(key="build_reports").click().run()
    _ok(at)
    def built(a):  # the report files each session built (with its program's tracker)
        return next(value for key, value in a._memo.items() if key[0] == "reports")

    shown = json.loads(built(after)["json"])
    original = json.loads(built(before)["json"])
    assert {"xlsx", "html", "pptx"} <= set(built(after))  # the program's waves: a deck too
    assert without_wall_clock(shown) == without_wall_clock(original)


def test_a_damaged_or_foreign_project_is_one_sentence_and_changes_nothing(saved):
    _, data = saved
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/project.py").run()
    analysis = at.session_state["analysis"]
    foreign = io.BytesIO()
    with zipfile.ZipFile(foreign, "w") as zf:
        zf.writestr("word/document.xml", "<w/>")
    cases = {"cut.cxproj": (data[:-100], "is not a cx-app project file, or it is truncated"),
             "word.cxproj": (foreign.getvalue(), "is a zip archive but not a cx-app project")}
    for name, (content, message) in cases.items():
        at.file_uploader(key="project_upload").upload(name, content, "application/zip")
        at.run()
        assert not at.exception
        assert [e.value for e in at.error] and message in at.error[0].value
        assert at.error[0].value.startswith(name)
        assert at.session_state["analysis"] is analysis


def test_a_project_without_its_survey_asks_for_it(tmp_path):
    """A project of an uploaded survey, saved without the survey: opening it without that
    file names the file; with it (the session's uploads), the models come back."""
    from cx_app.survey.importing import load_survey
    from cx_app.survey.samples import sample_path

    path = sample_path("retail_csat")
    raw = path.read_bytes()
    lines = raw.decode("utf-8").splitlines()[:241]
    small = ("\n".join(lines) + "\n").encode("utf-8")
    survey = load_survey(small, filename="small.csv")
    from cx_app.app.store import ResultStore

    analysis = Analysis(survey=survey, plan=survey.schema.plan_spec, data_key=survey.data_key)
    analysis.train({"nb": {}}, folds=3, seed=0, calibration="none", store=ResultStore())
    data = save_analysis(analysis)
    assert read_project(data).survey_bytes is None
    with pytest.raises(ProjectFileError, match=r"^p.cxproj does not include its survey: load "
                                               r"small.csv \(SHA-256 [0-9a-f]{12}…\) on the Data"):
        open_analysis(data, name="p.cxproj", survey_files={"other.csv": raw})
    opened = open_analysis(data, name="p.cxproj", survey_files={"renamed.csv": small})
    restored = opened.analysis.models["nb"].cv
    np.testing.assert_array_equal(restored.y_pred, analysis.models["nb"].cv.y_pred)
    assert opened.analysis.data_key == analysis.data_key
    # with the survey inside, nothing else is needed
    inside = open_analysis(save_analysis(analysis, include_survey=small), name="q.cxproj")
    assert inside.survey_bytes == small and list(inside.analysis.models) == ["nb"]


def test_the_report_refuses_an_estimate_of_another_survey():
    """The Report page's last estimate may come from an uploaded model of another survey: the
    report is then refused in one sentence naming both sides."""
    from report_fixtures import make_new_wave

    from cx_app.app.store import ResultStore, survey_key
    from cx_app.estimate.document import WaveEstimateDocument
    from cx_app.models.results import ResultsError
    from cx_app.survey.importing import load_survey
    from cx_app.survey.samples import sample_path

    lines = sample_path("retail_csat").read_text(encoding="utf-8").splitlines()[:241]
    survey = load_survey(("\n".join(lines) + "\n").encode(), filename="small.csv")
    analysis = Analysis(survey=survey, plan=survey.schema.plan_spec, data_key=survey_key(
        survey.source.sha256, None, survey.schema.to_yaml(), "small.csv"))
    analysis.train({"nb": {}}, folds=3, seed=0, calibration="none", store=ResultStore())
    foreign = WaveEstimateDocument.from_dict(make_new_wave())
    with pytest.raises(ResultsError, match=r"^the new-wave estimate was made with a model "
                                           r"trained on wave =1.xlsx \(SHA-256 abababababab…\), "
                                           r"but this analysis' results are of small.csv"):
        analysis.report_files(["nb"], foreign, build=True)
    assert analysis.report_files(["nb"], None, build=True)["xlsx"][:2] == b"PK"
