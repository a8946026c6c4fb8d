"""App behaviour beyond the page smoke tests (``streamlit.testing.v1.AppTest``, bundled sample):

- training keeps no fold model in the session or the shared store, but the permutation
  importance computed from them (Drivers and Report pages use it);
- a second session training the same recipe on the same bytes is told nothing about the first;
  the same session is told "already trained in this session";
- the Report's results.json is the library's ``results_document`` of the cached evaluations;
- the New wave page shows the model's held-out calibration gap and reads an uploaded .skops
  file from its bytes;
- a broken workbook upload gives a clear message, no traceback.

Expected values come from the library, computed here.
"""

# ruff: noqa: F811  (pytest fixtures imported from test_app_pages are parameters here)
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok, sample  # noqa: F401  (the sample survey fixture)

from cx_app.estimate.alp import alp_gap
from cx_app.estimate.model_file import model_bytes
from cx_app.models.analysis import results_document
from cx_app.models.crossval import cross_validate_model
from cx_app.models.drivers import permutation_importance_cv
from cx_app.models.names import model_display_name
from cx_app.survey.nps import groups_for_schema

pytestmark = pytest.mark.slow  # the whole app workflow in AppTest (~31 s)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 180
SEED = 7  # a recipe no other test module trains: the process-wide store starts without it
LR = f"lr seed={SEED}"  # the model id the Models page gives it


def _train(at: AppTest, algorithms: list[str], folds: int = 3) -> AppTest:
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(algorithms)
    at.number_input(key="folds").set_value(folds)
    at.number_input(key="seed").set_value(SEED)
    at.button(key="train").click().run()
    _ok(at)
    return at


@pytest.fixture(scope="module")
def trained():
    return _train(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), ["lr"])


def test_training_keeps_the_permutation_importance_not_the_fold_models(trained, sample):
    model = trained.session_state["analysis"].models[LR]
    assert model.cv.models is None  # no fold model held by the session (or the store)
    cv = cross_validate_model(sample.X, sample.y, sample.classes, "lr", folds=3, seed=SEED,
                              keep_models=True)
    expected = permutation_importance_cv(cv, sample.X)  # the library default, as the CLI
    assert np.allclose(model.permutation.per_fold, expected.per_fold)

    trained.switch_page("app_pages/drivers.py").run()
    trained.selectbox(key="driver_source").set_value(
        f"Permutation importance: {model_display_name(LR)}").run()  # Logistic regression (seed 7)
    _ok(trained)
    table = next(df.value for df in trained.dataframe if "importance" in df.value.columns)
    labels = {a.name: a.display for a in sample.schema.attributes}
    shown = table.set_index("attribute")["importance"]
    assert shown.is_monotonic_decreasing  # most important first, as the chart's bars
    for name, value in expected.to_frame()["mean"].items():
        assert shown[labels[name]] == pytest.approx(value, abs=5e-4)  # shown to 3 decimals


def test_the_models_page_shows_the_held_out_calibration_gap(trained, sample):
    trained.switch_page("app_pages/models.py").run()
    _ok(trained)
    cv = trained.session_state["analysis"].models[LR].cv
    gap = alp_gap(cv.y_true, cv.proba, sample.classes, groups=groups_for_schema(sample.schema))
    recipes = next(df.value for df in trained.dataframe if "class-share gap" in df.value.columns)
    row = recipes.set_index("model").loc[model_display_name(LR)]  # shown in words
    assert row["estimated − real accuracy (ALP)"] == pytest.approx(100 * gap.accuracy_gap)
    assert row["Net score gap (points)"] == pytest.approx(gap.net_gap)


def test_the_cache_never_says_another_session_trained_the_same_recipe(trained):
    again = _train(trained, ["lr"])  # the same session, the same recipe
    messages = " ".join(m.value for m in again.markdown)
    assert "already trained in this session" in messages
    assert again.session_state["analysis"].trainings == 1

    other = _train(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), ["lr"])
    messages = " ".join(m.value for m in other.markdown)
    assert f"{model_display_name(LR)}: cross-validated in" in messages
    assert "already" not in messages and "reused" not in messages and "cache" not in messages
    assert other.session_state["analysis"].trainings == 0  # it was the store's copy


def test_the_report_json_is_the_library_results_document(trained, sample):
    at = trained
    at.switch_page("app_pages/report.py").run()
    at.button(key="build_reports").click().run()
    _ok(at)
    assert any(d.label == "Results (JSON)" for d in at.download_button)
    analysis = at.session_state["analysis"]
    files = analysis.peek(("reports", (analysis.models[LR].key,), analysis.plan_key, None, None))
    shown = json.loads(files["json"])
    expected = results_document(sample, {LR: analysis.evaluation(LR)},
                                analysis.resolved_plan(), calibration="none").to_dict()
    assert shown["models"][LR]["levels"] == expected["models"][LR]["levels"]
    assert shown["dataset"]["nps"] == expected["dataset"]["nps"]
    assert shown["calibration"] == "none"
    assert shown["drivers"]["permutation_model"] == LR
    assert shown["drivers"]["permutation"]["lr"]["per_fold"] == [
        list(r) for r in analysis.models[LR].permutation.to_dict()["per_fold"]]


def test_new_wave_shows_the_gap_and_reads_an_uploaded_model_from_its_bytes(trained, monkeypatch):
    import cx_app.estimate.training as training

    def no_cross_validation(*args, **kwargs):
        raise AssertionError("the final fit re-ran a cross-validation")

    # "Fit on all respondents" re-uses the model's cross-validation: one fit, no CV
    monkeypatch.setattr(training, "compare_calibrations", no_cross_validation)
    at = trained
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    assert at.session_state["analysis"].finals
    monkeypatch.undo()
    labels = {m.label for m in at.metric}
    assert {"Held-out accuracy", "Estimated from probabilities (ALP)", "Class-share gap"} <= labels
    final = next(iter(at.session_state["analysis"].finals.values()))
    held = {m.label: m.value for m in at.metric}["Held-out accuracy"]
    assert held == f"{100 * final.cv.alp_gap.accuracy_cm:.1f}%"
    estimated = {m.label: m.value for m in at.metric}["Estimated NPS"]
    # the alerts on the estimated accuracy and net score, and every metric's interval
    texts = [c.value for c in at.caption] + [w.value for w in at.warning]
    assert any("estimated accuracy" in t for t in texts)
    assert any("estimated net score" in t for t in texts)
    table = next(df.value for df in at.dataframe if "estimated (ALP)" in df.value.columns)
    assert (table["ci_low"] <= table["estimated (ALP)"]).all()
    assert (table["estimated (ALP)"] <= table["ci_high"]).all()

    at.radio(key="nw_model_source").set_value("Saved model file (.skops)").run()
    at.file_uploader(key="nw_model_file").upload("lr.skops", model_bytes(final),
                                                 "application/octet-stream")
    at.run()
    _ok(at)
    assert {m.label: m.value for m in at.metric}["Estimated NPS"] == estimated

    at.file_uploader(key="nw_model_file").upload("broken.skops", b"not a model",
                                                 "application/octet-stream")
    at.run()
    assert not at.exception
    assert any("broken.skops" in e.value and "not a cx-app model file" in e.value
               for e in at.error)


def test_a_broken_workbook_upload_is_a_clear_message():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    rng = np.random.default_rng(5)
    at.file_uploader(key="uploader").upload("broken.xlsx", rng.bytes(4096),
                                            "application/octet-stream")
    at.run()
    assert not at.exception
    assert at.error and all("Traceback" not in e.value for e in at.error)
    assert any("broken.xlsx" in e.value for e in at.error)


def test_new_wave_tracks_two_uploaded_waves_by_segment(trained):
    """Two unlabeled waves uploaded at once: both are estimated (the upload is what gets
    selected), the tracker shows one row per wave and per operator, each from the library."""
    from cx_app.estimate.tracker import track_waves, tracker_frame
    from cx_app.survey.importing import load_survey
    from cx_app.survey.samples import simulate_telecom_waves

    at = trained
    at.switch_page("app_pages/new_wave.py").run()
    at.radio(key="nw_model_source").set_value("Trained in this analysis").run()
    if any(b.key == "nw_fit" for b in at.button):  # not yet fitted on all respondents
        at.button(key="nw_fit").click().run()
    _ok(at)
    files = {}
    for k in (8, 9):
        frame = simulate_telecom_waves([k], respondents_per_operator=60, seed=3,
                                       include_target=False)
        files[f"wave{k}.csv"] = frame.to_csv(index=False).encode()
    uploader = at.file_uploader(key="nw_wave_files")
    for name, data in reversed(files.items()):  # uploaded out of order
        uploader.upload(name, data, "text/csv")
    at.run()
    _ok(at)
    at.selectbox(key="nw_by").set_value("operator").run()
    _ok(at)
    model = next(iter(at.session_state["analysis"].finals.values()))
    surveys = [load_survey(data, schema=model.schema, filename=name, require_target=False,
                           require_attributes=False, scoring=True)
               for name, data in files.items()]
    expected = tracker_frame(track_waves(model, surveys, by="operator"))
    shown = next(df.value for df in at.dataframe if "series" in df.value.columns)
    # the program's waves in wave order (the sample's wave 7 was added by itself first), each
    # labelled by the file's wave column: wave 8 is 2021-08
    shown = shown[shown["wave"].isin(["2021-08", "2021-09"])]
    assert list(shown["wave"].unique()) == ["2021-08", "2021-09"] and len(shown) == 2 * 4
    shown = shown.drop(columns=["change", "p", "p_holm", "flag"]).reset_index(drop=True)
    expected = expected.drop(columns=["change", "p", "p_holm", "flag"])
    np.testing.assert_allclose(shown["nps"].to_numpy(float),
                               expected["nps"].round(2).to_numpy(float))
    assert set(shown["series"]) == {"All respondents", "Operator A", "Operator B", "Operator C"}
    assert list(shown["alert"]) == list(expected["alert"])  # the alerts column, per series
