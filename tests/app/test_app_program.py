"""The app runs on the workspace (issue 27, point 2): every model is stored as it is made, and a
reload, a second tab or a restarted server (a new session opening the address) reopens the same
program with the same models and plan; a label edit keeps the models; a mapping the models do
not fit asks first and keeps the old models in the program.

Each test drives the app through ``AppTest`` with the entry script on every run (as a server),
on a workspace database of its own (``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_harness import entry_script_every_run  # noqa: F401  (a fixture)
from streamlit.testing.v1 import AppTest
from test_app_mapping import _edit
from test_app_pages import _ok

from cx_app.engine.plan import PlanSpec
from cx_app.workspace.analyses import AnalysisStore
from cx_app.workspace.programs import Workspace

pytestmark = pytest.mark.slow  # AppTest journeys of a program: reload, labels, mappings, removals (~45 s)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240
PROGRAM = "telecom_nps"  # the sample's file name without its extension


def _train(at: AppTest, algorithm: str = "nb", seed: int = 17) -> None:
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value([algorithm])
    at.number_input(key="folds").set_value(3)
    at.number_input(key="seed").set_value(seed)
    at.button(key="train").click().run()
    _ok(at)


def _reopen(name: str = PROGRAM) -> AppTest:
    """A new session opening the address of the program (a reload, another tab, a browser
    after the server restarted)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["program"] = name
    return at.run()


def test_a_reload_reopens_the_program_with_its_models_and_plan(entry_script_every_run):  # noqa: F811
    first = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(first)
    assert first.query_params["program"] == PROGRAM  # the address names the program
    before = first.session_state["analysis"]
    plan = before.plan.model_dump(mode="json")
    plan["plan"] = plan["plan"][:1]  # a plan of the analyst's own: kept too
    before.set_plan(PlanSpec.model_validate(plan))
    first.run()

    reopened = _reopen()
    _ok(reopened)
    after = reopened.session_state["analysis"]
    assert after is not before and list(after.models) == ["nb seed=17"]
    assert after.trainings == 0 and after.plan == before.plan
    for name in ("y_true", "y_pred", "proba", "fold"):
        np.testing.assert_array_equal(getattr(after.models["nb seed=17"].cv, name),
                                      getattr(before.models["nb seed=17"].cv, name))
    np.testing.assert_array_equal(after.models["nb seed=17"].permutation.per_fold,
                                  before.models["nb seed=17"].permutation.per_fold)
    for page in ("data", "models", "confusion", "compare", "drivers", "report"):
        reopened.switch_page(f"app_pages/{page}.py").run()
        _ok(reopened)
        assert reopened.query_params["program"] == PROGRAM
    assert reopened.session_state["analysis"].trainings == 0  # nothing retrained anywhere


def test_a_label_edit_keeps_the_models_and_is_kept(entry_script_every_run):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at, seed=19)  # a recipe of its own: the process-wide store would hand it over
    analysis = at.session_state["analysis"]
    at.switch_page("app_pages/data.py").run()
    _edit(at, "Network - data", label="Mobile data quality")
    _ok(at)
    assert at.session_state["analysis"] is analysis and list(analysis.models) == ["nb seed=19"]
    assert analysis.trainings == 1
    labels = {a.column: a.label for a in analysis.survey.schema.attributes}
    assert labels["Network - data"] == "Mobile data quality"
    reopened = _reopen()  # the program keeps the new label with its model
    _ok(reopened)
    survey = reopened.session_state["analysis"].survey
    assert {a.column: a.label for a in survey.schema.attributes}["Network - data"] == \
        "Mobile data quality"
    assert list(reopened.session_state["analysis"].models) == ["nb seed=19"]


def test_a_mapping_the_models_do_not_fit_asks_first_and_keeps_them(entry_script_every_run):  # noqa: F811,E501
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at)
    analysis = at.session_state["analysis"]
    at.switch_page("app_pages/data.py").run()
    _edit(at, "Roaming", role="ignore")
    assert not at.exception
    assert any("changes what the models see (attributes left out: Roaming)" in w.value
               and "1 trained model(s) do not apply" in w.value for w in at.warning)
    assert at.session_state["analysis"] is analysis  # nothing happened yet

    at.button(key="mapping_undo").click().run()  # undo: the mapping and models as they were
    _ok(at)
    assert at.session_state["analysis"] is analysis
    table = at.data_editor[0].value
    assert table.loc[table["column"] == "Roaming", "role"].item() == "attribute"

    _edit(at, "Roaming", role="ignore")
    at.button(key="mapping_confirm").click().run()
    _ok(at)
    fresh = at.session_state["analysis"]
    assert "roaming" not in fresh.survey.schema.attribute_names and not fresh.models
    with Workspace.open() as workspace:  # the old model stays in the program
        program = AnalysisStore(workspace).reopen(PROGRAM)
    assert program.other_models == 1 and not program.models

    _edit(at, "Roaming", role="attribute")  # back to the first mapping: its model is back
    _ok(at)
    back = at.session_state["analysis"]
    assert list(back.models) == ["nb seed=17"] and back.trainings == 0
    assert any("are here again (nothing retrained)" in s.value for s in at.success)


def test_an_address_naming_no_program_says_so_and_opens_the_sample(entry_script_every_run):  # noqa: F811,E501
    at = _reopen("no such program")
    assert not at.exception
    assert any("cannot be opened: no program named 'no such program'" in w.value
               for w in at.warning)
    assert at.session_state["analysis"].survey.source.filename == "telecom_nps.xlsx"


def test_a_removed_model_does_not_come_back(entry_script_every_run):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at, "nb", 17)
    _train(at, "lr", 17)
    assert list(at.session_state["analysis"].models) == ["nb seed=17", "lr seed=17"]
    at.multiselect(key="remove_models").set_value(["nb seed=17"]).run()
    at.button(key="remove").click().run()
    _ok(at)
    assert list(_reopen().session_state["analysis"].models) == ["lr seed=17"]


def test_a_deleted_program_leaves_the_session_and_the_address(entry_script_every_run):  # noqa: F811,E501
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at, "nb", 17)
    assert at.query_params["program"] == PROGRAM
    at.switch_page("app_pages/project.py").run()
    at.checkbox(key="program_delete_sure").check().run()
    at.button(key="program_delete").click().run()
    _ok(at)
    assert "program" not in at.query_params and at.session_state["program"] is None
    assert "training_done" not in at.session_state  # the finished training left with it
    assert not at.session_state["analysis"].models  # the sample again, no model
    with Workspace.open() as workspace:
        assert PROGRAM not in [p.name for p in workspace.list_programs()]


def test_the_cli_shows_the_numbers_the_app_shows_and_adds_to_its_program(
        entry_script_every_run, tmp_path, capsys):  # noqa: F811
    """The app and ``cx-app program`` work on one workspace: the CLI's ``show --json`` gives
    the app's tracker numbers, and a wave the CLI adds is in the app's tracker after a reload."""
    import json

    import pandas as pd

    from cx_app.cli import main
    from cx_app.survey.samples import simulate_telecom_waves

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at, "lr", 23)
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    uploader = at.file_uploader(key="nw_wave_files")
    paths = {}
    for k in (8, 9, 10):
        frame = simulate_telecom_waves([k], respondents_per_operator=50, seed=4,
                                       include_target=False)
        paths[k] = tmp_path / f"wave{k}.csv"
        frame.to_csv(paths[k], index=False)
    for k in (9, 8):
        uploader.upload(paths[k].name, paths[k].read_bytes(), "text/csv")
    at.run()
    at.selectbox(key="nw_by").set_value("operator").run()
    _ok(at)
    shown = next(df.value for df in at.dataframe if "series" in df.value.columns)

    capsys.readouterr()
    assert main(["program", "show", PROGRAM, "--model", "lr seed=23", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = []
    for wave in document["waves"]:
        rows.append((wave["label"], "All respondents", wave["estimated_nps"]["value"],
                     *wave["estimated_nps"]["ci95"]))
        for value, figure in wave["segments"]["operator"].items():
            est = figure["estimated_nps"]
            rows.append((wave["label"], value, est["value"], *est["ci95"]))
    cli = pd.DataFrame(rows, columns=["wave", "series", "nps", "ci_low", "ci_high"])
    both = shown.merge(cli, on=["wave", "series"], suffixes=("", "_cli"), validate="1:1")
    assert len(both) == len(shown) == len(cli)  # every wave and operator, nothing else
    for column in ("nps", "ci_low", "ci_high"):
        np.testing.assert_allclose(both[column], both[f"{column}_cli"].round(2), atol=1e-9)

    assert main(["program", "add-wave", PROGRAM, str(paths[10])]) == 0  # monthly automation
    reopened = _reopen()
    reopened.switch_page("app_pages/new_wave.py").run()
    _ok(reopened)
    tracker = next(df.value for df in reopened.dataframe if "series" in df.value.columns)
    assert list(tracker["wave"].unique()) == [*document_labels(document), "2021-10"]

    # and the monthly report of the app's program, from the CLI: every wave in each file
    assert main(["program", "report", PROGRAM, "--out", str(tmp_path / "out")]) == 0
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert all(label in html for label in ["2021-08", "2021-09", "2021-10"])
    assert (tmp_path / "out" / "report.xlsx").stat().st_size > 0


def document_labels(document: dict) -> list[str]:
    return [wave["label"] for wave in document["waves"]]


def test_the_analyst_labels_a_wave_and_removes_one(tmp_path):
    """A wave labelled by the analyst sorts by the date in its label; removing a wave takes
    it (and its estimates) out of the program."""
    from cx_app.survey.samples import simulate_telecom_waves

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _train(at, "nb", 29)
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    frame = simulate_telecom_waves([8], respondents_per_operator=40, seed=6,
                                   include_target=False).drop(columns=["Wave"])
    at.text_input(key="nw_label").set_value("2020-01")  # before the sample's wave 7 (2021-07)
    at.file_uploader(key="nw_wave_files").upload("march.csv", frame.to_csv(index=False).encode(),
                                                 "text/csv")
    at.run()
    _ok(at)
    tracker = next(df.value for df in at.dataframe if "series" in df.value.columns)
    assert list(tracker["wave"]) == ["2020-01", "2021-07"]  # by date, not upload order

    remove = at.selectbox(key="nw_remove")
    remove.set_value(next(o for o in remove.options if o.startswith("2020-01"))).run()
    at.button(key="nw_remove_go").click().run()
    _ok(at)
    tracker = next(df.value for df in at.dataframe if "series" in df.value.columns)
    assert list(tracker["wave"]) == ["2021-07"]
    with Workspace.open() as workspace:
        assert [w.label for w in workspace.show(PROGRAM, model="nb seed=29").waves] == [
            "2021-07"]
