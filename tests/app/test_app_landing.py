"""Landing (issue 37, point 8): the app started on a workspace that holds a program shows it
on the first page without a click (with its last wave and an "Open" button that reopens it);
the bundled sample comes only on an empty workspace or when the analyst asks for it."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from app_harness import entry_script_every_run  # noqa: F401  (a fixture)
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from cx_app.project import SurveyIdentity
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema
from cx_app.workspace.programs import Workspace
from cx_app.workspace.views import ProgramSummary, recent_first

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240


def _texts(at: AppTest) -> str:
    return "\n".join(m.value for m in [*at.markdown, *at.caption, *at.subheader])


def test_a_workspace_with_a_program_opens_on_it(entry_script_every_run):  # noqa: F811
    with Workspace.open(os.environ["CX_APP_DATABASE_URL"]) as ws:  # as the CLI made it
        ws.create_program("bank_q3", sample_path("telecom_nps"),
                          schema=load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml"),
                          algorithm="nb", folds=3, calibration="none", keep_survey=True)
        ws.add_waves("bank_q3", [sample_path("telecom_nps_wave7_unlabeled")])
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()  # a new session, no address
    _ok(at)
    text = _texts(at)
    assert "Your programs" in text and "**bank_q3**" in text
    assert "last wave **2021-07** (1 in all" in text and "1 model(s)" in text
    at.button(key="landing_new").click().run()  # "Start with a new survey": the list hides
    _ok(at)
    assert "Your programs" not in _texts(at)
    assert at.selectbox(key="survey_file").value.startswith("Bundled sample")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()  # another new session
    assert "**bank_q3**" in _texts(at)
    at.button(key="landing_open::bank_q3").click().run()  # one click
    _ok(at)
    assert at.query_params["program"] == "bank_q3"
    assert list(at.session_state["analysis"].models) == ["nb"]
    assert "Your programs" not in _texts(at)  # the Data page of the program now


def test_the_sample_under_a_workspace_of_programs_says_so_on_every_page(
        entry_script_every_run):  # noqa: F811
    with Workspace.open(os.environ["CX_APP_DATABASE_URL"]) as ws:  # another file than the sample
        ws.create_program("shops", sample_path("retail_csat"), algorithm="nb", folds=3,
                          calibration="none", keep_survey=True)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _ok(at)
    assert "**shops**" in _texts(at)  # listed on the Data page, the sample underneath
    hint = "This page shows the bundled sample survey, not one of your 1 program(s)"
    for page in ("nps", "models", "project"):
        at.switch_page(f"app_pages/{page}.py").run()
        _ok(at)
        assert any(hint in i.value for i in at.info), page
    at.switch_page("app_pages/data.py").run()
    at.button(key="landing_new").click().run()  # the analyst chose the sample: no more hint
    at.switch_page("app_pages/nps.py").run()
    assert not any(hint in i.value for i in at.info)
    at.switch_page("app_pages/data.py").run()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()  # a new session opens the program
    at.button(key="landing_open::shops").click().run()
    at.switch_page("app_pages/nps.py").run()
    _ok(at)
    assert at.session_state["analysis"].survey.source.filename == "retail_csat.csv", \
        [w.value for w in at.warning]
    assert not any(hint in i.value for i in at.info)


def test_an_empty_workspace_starts_on_the_sample(entry_script_every_run):  # noqa: F811
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _ok(at)
    assert "Your programs" not in _texts(at)
    assert at.selectbox(key="survey_file").value.startswith("Bundled sample")
    assert [b for b in at.button if b.key == "landing_new"] == []


def test_programs_are_listed_most_recent_first():
    def summary(name: str, created: int, last: int | None) -> ProgramSummary:
        day = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        return ProgramSummary(name, day + dt.timedelta(days=created), (), 0,
                              SurveyIdentity("0" * 64, None, None), None,
                              None if last is None else "W1",
                              day + dt.timedelta(days=last if last is not None else created))

    programs = [summary("a", 1, 9), summary("b", 5, None), summary("c", 2, 3),
                summary("d", 5, None)]
    # a: wave on day 9; b and d created day 5 (by name); c: wave on day 3
    assert [p.name for p in recent_first(programs)] == ["a", "b", "d", "c"]
