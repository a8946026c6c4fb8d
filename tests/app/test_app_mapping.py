"""Mapping that keeps work (issue 13): the segment role without a kind, the column mapping
kept per file, and trained models and choices kept across file and page switches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 120
SAMPLE = "Bundled sample: telecom NPS survey (waves 1–6)"


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _edit(at: AppTest, column: str, **cells) -> None:
    editor = at.data_editor[0]
    row = int(editor.value.index[editor.value["column"] == column][0])
    at.session_state[editor.key] = {"edited_rows": {row: cells}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()


def _pick_file(at: AppTest, label: str) -> None:
    at.selectbox(key="survey_file").set_value(label).run()


def test_a_segment_without_a_kind_just_works():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _edit(at, "Roaming", role="segment")  # the kind cell is left empty
    _ok(at)
    survey = at.session_state["analysis"].survey
    assert ("roaming", "other") in [(s.name, s.role) for s in survey.schema.segments]
    assert "roaming" not in survey.schema.attribute_names
    assert survey.frame["roaming"].notna().sum() > 0  # read as a segment column
    at.switch_page("app_pages/nps.py").run()
    _ok(at)


def test_mapping_and_models_survive_switching_files_and_back():
    csv = sample_path("retail_csat")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _edit(at, "Roaming", role="ignore")
    _ok(at)
    edited = at.session_state["analysis"]
    assert "roaming" not in edited.survey.schema.attribute_names

    # train lr (2 folds) on the edited sample; the algorithm choice is kept too
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["lr"])
    at.number_input(key="folds").set_value(2)
    at.button(key="train").click().run()
    _ok(at)
    assert list(at.session_state["analysis"].models) == ["lr"]
    trainings = at.session_state["analysis"].trainings

    # another file, with its own mapping edit
    at.switch_page("app_pages/data.py").run()
    at.file_uploader(key="uploader").upload(csv.name, csv.read_bytes(), "text/csv")
    at.run()
    _ok(at)
    other = at.session_state["analysis"]
    assert other.survey.source.filename == csv.name and not other.models
    expected = load_survey(csv)
    kept_attribute = expected.schema.attributes[0].column
    _edit(at, kept_attribute, role="ignore")
    _ok(at)
    assert len(at.session_state["analysis"].survey.schema.attributes) == len(
        expected.schema.attributes) - 1

    # back to the sample: its edited mapping (the ignored row still listed) and its model,
    # brought back from the workspace program: the same out-of-fold arrays, nothing retrained
    _pick_file(at, SAMPLE)
    _ok(at)
    back = at.session_state["analysis"]
    assert back.data_key == edited.data_key and list(back.models) == ["lr"]
    assert back.trainings == 0 and trainings == 1
    assert np.array_equal(back.models["lr"].cv.proba, edited.models["lr"].cv.proba)
    table = at.data_editor[0].value
    assert table.loc[table["column"] == "Roaming", "role"].item() == "ignore"
    assert any("are here again (nothing retrained)" in s.value for s in at.success)

    # and to the CSV again: its own edit is still there
    _pick_file(at, csv.name)
    _ok(at)
    table = at.data_editor[0].value
    assert table.loc[table["column"] == kept_attribute, "role"].item() == "ignore"

    # the Models page still has the choices made there
    at.switch_page("app_pages/models.py").run()
    _ok(at)
    assert at.multiselect(key="algorithms").value == ["lr"]
    assert at.number_input(key="folds").value == 2


def test_new_wave_choices_survive_a_page_switch():
    from cx_app.survey.samples import simulate_telecom_waves

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["nb"])
    at.number_input(key="folds").set_value(2)
    at.button(key="train").click().run()
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    uploader = at.file_uploader(key="nw_wave_files")
    names = []
    for k in (9, 8):  # uploaded out of order
        frame = simulate_telecom_waves([k], respondents_per_operator=40, seed=5,
                                       include_target=False)
        names.append(f"wave{k}.csv")
        uploader.upload(names[-1], frame.to_csv(index=False).encode(), "text/csv")
    at.run()
    at.selectbox(key="nw_by").set_value("operator").run()
    _ok(at)

    at.switch_page("app_pages/data.py").run()
    at.switch_page("app_pages/new_wave.py").run()
    _ok(at)
    assert at.selectbox(key="nw_by").value == "operator"  # as left
    tracker = next(df.value for df in at.dataframe if "series" in df.value.columns)
    # both waves of the program in wave order (labelled by the files' wave column: wave 8 is
    # 2021-08; the sample's own wave 7 was added by itself first), whatever the upload order;
    # all respondents and the 3 operators each
    assert list(tracker["wave"].unique()) == ["2021-07", "2021-08", "2021-09"]
    assert len(tracker[tracker["wave"] != "2021-07"]) == 2 * 4
