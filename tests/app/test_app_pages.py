"""Every page of the Streamlit app through ``streamlit.testing.v1.AppTest`` on the bundled sample.

Expected numbers are computed in the test with the library (``load_survey``, ``nps_summary``,
``confusion_matrix`` + ``reduce_confusion``), never copied from the app's output. Models are
trained once per module (lr and nb, 3 folds) and shared by the page tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from cx_app.engine.confusion import confusion_matrix
from cx_app.engine.grouping import resolve_plan
from cx_app.engine.levels import reduce_confusion
from cx_app.estimate.model_choice import choose_from_crossvalidation
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import groups_for_schema, nps_summary
from cx_app.survey.nps_flags import segments_vs_rest
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 120  # generous: two busy cores


@pytest.fixture(scope="module")
def sample():
    return load_survey(sample_path("telecom_nps"),
                       schema=load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml"))


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture(scope="module")
def trained():
    """The app after training lr and nb with 3 folds on the Models page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    _ok(at)
    assert at.multiselect(key="algorithms").value == ["lr", "nb"]
    at.number_input(key="folds").set_value(3)
    at.button(key="train").click().run()
    _ok(at)
    return at


def test_data_page_shows_the_sample_and_its_quality_report(sample):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rows read"] == f"{sample.quality.rows_read:,}"
    assert metrics["Respondents (survey base)"] == f"{sample.quality.respondents:,}"
    assert metrics["Used by the models"] == f"{sample.quality.rows_used:,}"
    assert metrics["Unanswered attribute scores"] == f"{sum(sample.quality.gaps.values()):,}"
    analysis = at.session_state["analysis"]
    assert analysis.survey.source.sha256 == sample.source.sha256
    assert len(at.data_editor) == 1  # the editable column mapping
    mapping = at.data_editor[0].value
    assert mapping.loc[mapping["role"] == "target", "column"].item() == sample.schema.target.column
    # the gap policy in a sentence, never its select-box label ("Keep; models fill ...")
    gaps = [m.value for m in at.markdown if m.value.startswith("Unanswered attribute scores")]
    assert gaps == ["Unanswered attribute scores (n/a, blank, code): the respondents stay in the "
                    "models, and each model fills the gaps with its training median; the support "
                    "vector machine and ordinal logistic regression also add a 'was missing' "
                    "indicator. Per attribute:"]
    policy = next(s for s in at.selectbox if s.label.startswith("Unanswered attribute"))
    policy.set_value("impute_median").run()
    _ok(at)
    gaps = [m.value for m in at.markdown if m.value.startswith("Unanswered attribute scores")]
    assert gaps == ["Unanswered attribute scores (n/a, blank, code): the respondents stay in the "
                    "models, and each model fills the gaps with its training median. Per "
                    "attribute:"]


def test_data_page_reads_an_uploaded_csv_with_an_inferred_layout():
    path = sample_path("retail_csat")
    expected = load_survey(path)  # no schema: the library infers the layout
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload(path.name, path.read_bytes(), "text/csv")
    at.run()
    _ok(at)
    analysis = at.session_state["analysis"]
    assert analysis.survey.source.filename == path.name
    assert analysis.survey.quality.rows_used == expected.quality.rows_used
    assert analysis.survey.schema.target.column == expected.schema.target.column
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Respondents (survey base)"] == f"{expected.quality.respondents:,}"
    assert metrics["Used by the models"] == f"{expected.quality.rows_used:,}"
    assert any(d.label == "Download schema (YAML)" for d in at.download_button)


def test_a_messy_upload_gives_the_same_respondents_and_nps_as_the_cli(tmp_path, capsys):
    """One path: the app reads an uploaded messy export (title rows, cover sheet, n/a codes,
    a weight column) to the same respondents, model base and weighted NPS as load_survey and
    `cx-app nps`."""
    import json

    from cx_app.cli import main
    from cx_app.simulation.bank_export import simulate_bank_waves, write_bank_export

    path = write_bank_export(simulate_bank_waves(150, waves=2, seed=4), tmp_path / "bank.xlsx")
    expected = load_survey(path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload(path.name, path.read_bytes(),
                                             "application/vnd.ms-excel")
    at.run()
    _ok(at)
    survey = at.session_state["analysis"].survey
    assert list(survey.frame.index) == list(expected.frame.index)
    assert list(survey.model_frame.index) == list(expected.model_frame.index)
    at.switch_page("app_pages/nps.py").run()
    _ok(at)
    capsys.readouterr()
    assert main(["nps", str(path), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["overall"]
    assert cli["weighted"] and cli["n"] == expected.quality.respondents
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["NPS"] == f"{cli['value']:+.1f}"
    # the cover sheet: its title is a single cell, not a column (the CLI's sentence)
    at.switch_page("app_pages/data.py").run()
    next(s for s in at.selectbox if s.label == "Sheet").set_value("Notes").run()
    assert [e.value for e in at.error] == [
        "bank.xlsx: could not infer a layout from sheet 'Notes': its header row (row 1) holds a "
        "single cell, 'Bank NPS tracker', not a row of column headers, and no column under it "
        "holds scores on an integer scale (a target and at least one attribute are needed); "
        "give the mapping (--target COL --scale MIN-MAX --attributes A,B,C)"]


def test_an_unsure_layout_asks_for_the_target_instead_of_guessing():
    # "Value score" is no function of "Overall score" (such a column would be left out as
    # derived from the target: cx_app.survey.leaks)
    rows = ["Overall score,Price,Service,Value score"] + [
        f"{i % 11},{1 + i % 5},{1 + (i * 3) % 5},{(i * 7 + i // 11) % 11}" for i in range(60)]
    data = ("\n".join(rows) + "\n").encode()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload("two_scores.csv", data, "text/csv")
    at.run()
    _ok(at)
    assert any("Which column is the overall question" in w.value for w in at.warning)
    assert at.session_state["analysis"].survey.source.filename != "two_scores.csv"  # waits
    question = next(s for s in at.selectbox if s.label == "Target question")
    assert question.value is None
    question.set_value("Value score").run()
    _ok(at)
    survey = at.session_state["analysis"].survey
    assert survey.source.filename == "two_scores.csv"
    assert survey.schema.target.column == "Value score"
    assert "Overall score" in [a.column for a in survey.schema.attributes]


def test_nps_page_shows_the_library_nps(sample):
    expected = nps_summary(sample.scores, groups=groups_for_schema(sample.schema))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/nps.py").run()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["NPS"] == f"{expected.value:+.1f}"
    assert metrics["Promoters"] == f"{100 * expected.shares['promoters']:.1f}%"
    texts = [t.value for t in at.text]
    assert (f"NPS {expected.value:+.1f} (95% interval {expected.ci95[0]:+.1f} to "
            f"{expected.ci95[1]:+.1f}) on {expected.n:,} respondents") in texts
    assert len(at.get("vega_lite_chart")) >= 4  # segment, trend, distribution, profiles
    # the segment table carries each segment against the rest, as the library computes it
    segment = next(s for s in sample.schema.segments if s.role not in ("wave", "date"))
    flags = segments_vs_rest(sample.respondents, sample.schema.target.name, segment.name,
                             groups=groups_for_schema(sample.schema))
    shown = next(df.value for df in at.dataframe if "vs rest" in df.value.columns)
    assert shown["vs rest"].to_numpy() == pytest.approx(flags["difference"].to_numpy())
    assert shown["flag"].tolist() == flags["flag"].tolist()
    assert any(m in shown["flag"].tolist() for m in ("significantly above the rest",
                                                    "significantly below the rest"))


def test_models_page_trains_and_ranks_every_level(trained, sample):
    analysis = trained.session_state["analysis"]
    assert list(analysis.models) == ["lr", "nb"]
    assert analysis.trainings == 2
    cv = analysis.models["lr"].cv
    assert cv.folds == 3 and np.array_equal(cv.y_true, sample.y)
    boards = [df.value for df in trained.dataframe if "Accuracy" in df.value.columns]
    assert len(boards) == 3  # original, 3x3+IM, 2x2+IM
    cm = confusion_matrix(cv.y_true, cv.y_pred, labels=sample.classes)
    accuracy = np.trace(cm.counts) / cm.counts.sum()
    lr_row = boards[0].set_index("model").loc["Logistic regression"]  # shown in words
    assert lr_row["Accuracy"] == pytest.approx(100 * accuracy)


def test_grouping_change_recomputes_without_retraining(trained, sample):
    at = trained
    at.switch_page("app_pages/confusion.py").run()
    _ok(at)
    analysis = at.session_state["analysis"]
    cv_before = analysis.models["lr"].cv
    trainings = analysis.trainings
    before = analysis.levels("lr")[2].matrix.copy()
    assert len(at.get("vega_lite_chart")) == 3  # 11x11, 3x3+IM, 2x2+IM

    # move score 6 from the detractors to the passives (step 1, groups 0 and 1)
    members = [w.key for w in at.multiselect if w.key.startswith("members::0::")]
    at.multiselect(key=members[0]).set_value([str(c) for c in range(6)])
    at.multiselect(key=members[1]).set_value(["6", "7", "8"])
    at.run()
    _ok(at)

    analysis = at.session_state["analysis"]
    assert analysis.trainings == trainings
    assert analysis.models["lr"].cv is cv_before
    after = analysis.levels("lr")[2]
    assert not np.array_equal(after.matrix, before)
    spec = analysis.plan
    assert spec.plan[0].groups[1].members == (6, 7, 8)
    expected = reduce_confusion(
        confusion_matrix(cv_before.y_true, cv_before.y_pred, labels=sample.classes),
        resolve_plan(spec, sample.classes))[2]
    assert np.array_equal(after.matrix, expected.matrix)
    assert np.array_equal(after.im, expected.im)
    # the strict 2x2 step: detractors {0..5} actual, predicted in the positive group
    y, p = cv_before.y_true, cv_before.y_pred
    assert after.matrix[0, 1] == int(np.sum((y <= 5) & (p >= 6)))

    # an invalid grouping (6 in no group) shows a message, keeps the last valid plan
    at.multiselect(key=members[1]).set_value(["7", "8"])
    at.run()
    assert not at.exception
    assert any("not valid" in e.value for e in at.error)
    assert at.session_state["analysis"].plan == spec

    at.button(key="reset_plan").click().run()
    _ok(at)
    assert at.session_state["analysis"].plan == sample.schema.plan_spec


def test_compare_drivers_new_wave_and_report_pages(trained):
    at = trained
    at.switch_page("app_pages/compare.py").run()
    _ok(at)
    assert any(t.value.startswith("Macro-average AUC: Logistic regression") for t in at.text)
    analysis = at.session_state["analysis"]
    auc = analysis.evaluation("lr").roc["2x2+IM"].auc
    table = next(df.value for df in at.dataframe if "random_auc" in df.value.columns)
    assert table.set_index("model").loc["Logistic regression", "auc"] == pytest.approx(auc)

    at.switch_page("app_pages/drivers.py").run()
    _ok(at)
    assert at.markdown[-1].value.startswith("The attributes together explain")

    at.switch_page("app_pages/new_wave.py").run()
    _ok(at)
    # two models: the one whose held-out net score errs least is preselected, and why
    choice = choose_from_crossvalidation({m: model.cv for m, model in analysis.models.items()},
                                         groups_for_schema(analysis.survey.schema))
    assert at.selectbox(key="nw_model").value == choice.chosen
    assert any(c.value.startswith("Preselected: estimated with") for c in at.caption)
    at.button(key="nw_fit").click().run()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Respondents"] == "1,200"
    at.button(key="nw_bundled_1").click().run()  # its labelled twin: realized beside it
    _ok(at)
    twin = next(o for o in at.selectbox(key="nw_detail").options
                if o.endswith("telecom_nps_wave7_labeled.xlsx"))
    at.selectbox(key="nw_detail").set_value(twin).run()
    _ok(at)
    tracker = next(df.value for df in at.dataframe if "realized" in df.value.columns)
    assert len(tracker) == 1  # the twins are one wave: the estimate with the realized beside
    assert tracker["realized"].iloc[0] == pytest.approx(round(nps_summary(load_survey(
        sample_path("telecom_nps_wave7_labeled"), schema=load_schema(
            ROOT / "survey_schemas" / "telecom_nps.yaml")).scores).value, 2))
    labeled = load_survey(sample_path("telecom_nps_wave7_labeled"),
                          schema=load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml"))
    realized = nps_summary(labeled.scores)
    assert any(t.value.startswith(f"Realized NPS {realized.value:+.1f}") for t in at.text)
    assert any(d.label == "Download all predictions (CSV)" for d in at.download_button)
    assert at.session_state["analysis"].trainings == 2  # the final fit is not a CV run

    at.switch_page("app_pages/report.py").run()
    _ok(at)
    at.button(key="build_reports").click().run()
    _ok(at)
    labels = {d.label for d in at.download_button}
    assert {"Excel report (.xlsx)", "HTML report", "Results (JSON)"} <= labels


def test_editing_the_mapping_changes_the_schema_in_use(sample):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    editor = at.data_editor[0]
    row = editor.value.index[editor.value["column"] == "Roaming"][0]
    at.session_state[editor.key] = {"edited_rows": {int(row): {"role": "ignore"}},
                                    "added_rows": [], "deleted_rows": []}
    at.run()
    _ok(at)
    schema = at.session_state["analysis"].survey.schema
    assert schema.attribute_names == tuple(n for n in sample.schema.attribute_names
                                           if n != "roaming")
    assert schema.plan == sample.schema.plan  # same target scale: the plan is kept
    assert any(d.label == "Download schema (YAML)" for d in at.download_button)


def test_glossary_page_explains_every_term():
    from cx_app.reports.definitions import GLOSSARY

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/glossary.py").run()
    _ok(at)
    shown = " ".join(m.value for m in at.markdown)
    for term in ("ALP", "Intragroup mismatch (IM)", "Relaxed / Strict / Hybrid", "δ / φ",
                 "Corrected t-test"):
        assert any(term in key for key in GLOSSARY) and term in shown
    assert all(f"**{term}** — {meaning}" in shown for term, meaning in GLOSSARY.items())


def test_a_downloaded_schema_uploads_back_to_the_same_layout(tmp_path):
    """The mapping's YAML download, uploaded again, gives the same schema and respondents."""
    path = sample_path("retail_csat")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload(path.name, path.read_bytes(), "text/csv")
    at.run()
    _ok(at)
    inferred = at.session_state["analysis"].survey
    edited = inferred.schema.model_copy(update={"missing_attributes": "exclude"})
    at.file_uploader(key="schema_upload").upload("mine.yaml", edited.to_yaml().encode(),
                                                 "application/x-yaml")
    at.run()
    _ok(at)
    survey = at.session_state["analysis"].survey
    assert survey.schema == edited
    assert list(survey.frame.index) == list(inferred.frame.index)
    at.file_uploader(key="schema_upload").upload("broken.yaml", b"target: [", "text/plain")
    at.run()
    assert not at.exception
    assert any("broken.yaml: not valid YAML/JSON" in e.value for e in at.error)
