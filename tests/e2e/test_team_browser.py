"""Issue 28's acceptance in a real browser: the app in team mode, signed in through a local
OpenID Connect provider (``oidc-provider-mock``), with two teams.

North owns a program (made through the library by its analyst, its survey kept); South does
not see it. Signed out, no page shows anything but the app's name and "Sign in", whatever the
address; a North analyst opens the program and trains; a North viewer reads it and downloads a
report but cannot train; a South analyst sees it on no page and cannot open it by its address;
the audit trail records each action with the right person.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from browser_harness import (
    ROOT,
    chromium_browser,
    free_port,
    oidc_provider,
    sign_in,
    streamlit_server,
    write_auth_secrets,
)
from test_app_browser import WAIT, _download, _settle, _visible, train

from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema
from cx_app.workspace.programs import Workspace
from cx_app.workspace.teams import load_teams

pytestmark = [pytest.mark.browser, pytest.mark.slow,  # two teams, five people (~6 min)
              # oidc-provider-mock 0.3 calls Authlib APIs that Authlib 1.9 deprecates
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ALICE, DANA, CAROL, BOB, EVE = ("alice@example.com", "dana@example.com", "carol@example.com",
                                "bob@example.com", "eve@elsewhere.org")
TEAMS = f"""teams:
  North:
    admin: [{ALICE}]
    analyst: [{DANA}]
    viewer: [{CAROL}]
  South:
    analyst: [{BOB}]
"""
NORTH = "north_retail"
NORTH_FILE = "north_retail_survey.xlsx"
PAGES = ("", "nps", "models", "confusion", "compare", "drivers", "new_wave", "report", "project",
         "glossary")


@pytest.fixture(scope="module")
def team_app(tmp_path_factory):
    """The app in team mode on a workspace holding North's program (one model, 3 folds)."""
    folder = tmp_path_factory.mktemp("team")
    teams_file = folder / "teams.yaml"
    teams_file.write_text(TEAMS, encoding="utf-8")
    database = f"sqlite:///{folder / 'workspace.db'}"
    survey = folder / NORTH_FILE
    shutil.copyfile(sample_path("telecom_nps"), survey)
    with Workspace.open(database, user=DANA, teams=load_teams(teams_file)) as workspace:
        workspace.create_program(NORTH, survey, schema=load_schema(
            ROOT / "survey_schemas" / "telecom_nps.yaml"), algorithm="lr", folds=3,
            keep_survey=True, team="North")
    port = free_port()
    with oidc_provider((ALICE, DANA, CAROL, BOB, EVE)) as provider:
        secrets_file = write_auth_secrets(folder / "secrets.toml", port, provider)
        env = {"CX_APP_DATABASE_URL": database, "CX_APP_TEAMS": str(teams_file)}
        with streamlit_server(ROOT / "streamlit_app.py", port, secrets_file,
                              log=folder / "streamlit.log", extra_env=env) as url:
            yield url, database


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as chromium:
        yield chromium


@pytest.fixture
def person(browser, team_app):
    """``person(email)``: a page of a browser of its own, signed in as ``email`` (None: not
    signed in)."""
    url, _ = team_app
    contexts = []

    def make(email: str | None):
        contexts.append(browser.new_context(viewport={"width": 1400, "height": 1000},
                                            accept_downloads=True))
        page = contexts[-1].new_page()
        page.set_default_timeout(WAIT)
        page.goto(url)
        if email is not None:
            sign_in(page, url, email)
            _visible(page.get_by_text(f"Signed in as {email}"))
            _settle(page)
        return page

    yield make
    for context in contexts:
        context.close()


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _open(page, url: str, path: str) -> None:
    page.goto(f"{url}/{path}")
    _visible(page.locator('[data-testid="stSidebarNav"]'))  # the app's script has run
    _settle(page)


def _audit(database: str) -> pd.DataFrame:
    with Workspace.open(database, user="test") as workspace:
        return pd.DataFrame([{"user": r.user, "action": r.action} for r in workspace.audit(NORTH)])


def test_signed_out_every_address_shows_only_the_app_name_and_sign_in(team_app, person):
    url, _ = team_app
    page = person(None)
    for path in (*PAGES, f"?program={NORTH}", f"models?program={NORTH}",
                 f"project?program={NORTH}"):
        page.goto(f"{url}/{path}")
        _visible(page.get_by_role("button", name="Sign in"))
        _settle(page)
        shown = {line.strip() for line in _main_text(page).splitlines() if line.strip()}
        assert shown <= {"CX driver analytics", "Sign in"}, (path, shown)
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0, path
        assert NORTH not in page.content(), path


def test_a_north_analyst_opens_the_program_and_trains_and_the_trail_names_her(team_app, person,
                                                                              tmp_path):
    url, database = team_app
    page = person(DANA)
    _open(page, url, "project")
    programs = pd.read_csv(io.BytesIO(_download(page, "dl_programs", tmp_path)))
    assert list(programs["program"]) == [NORTH] and list(programs["team"]) == ["North"]
    _open(page, url, f"models?program={NORTH}")
    _visible(page.get_by_text("Leaderboard", exact=True))
    train(page)
    trail = _audit(database)
    trained = trail[trail["action"] == "model trained"]
    assert set(trained["user"]) == {DANA} and len(trained) >= 2, trail  # the CLI's lr + nb
    assert trail.iloc[-1].tolist() == [DANA, "program created"], trail
    _open(page, url, f"project?program={NORTH}")
    shown = pd.read_csv(io.BytesIO(_download(page, "dl_audit", tmp_path)))
    assert (shown["who"] == DANA).all() and "model trained" in set(shown["what"]), shown


def _download_of(page, selector: str):
    """The download the button ``selector`` starts. A click that lands during a rerun starts
    none (see ``test_app_browser._download``): after the page settles again it is clicked once
    more, three tries at most."""
    timeout = pytest.importorskip("playwright.sync_api").TimeoutError
    for attempt in range(3):
        _settle(page)
        try:
            with page.expect_download(timeout=WAIT // 3) as info:
                page.locator(selector).click()
            return info.value
        except timeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def test_a_north_viewer_reads_and_downloads_but_cannot_train(team_app, person, tmp_path):
    url, database = team_app
    page = person(CAROL)
    _open(page, url, f"models?program={NORTH}")
    _visible(page.get_by_text("Leaderboard", exact=True))
    _visible(page.get_by_text(f"{CAROL} is a viewer of North", exact=False))
    assert page.get_by_role("button", name="Train and cross-validate").is_disabled()
    _open(page, url, f"?program={NORTH}")
    assert page.locator(".st-key-uploader").count() == 0  # no survey upload
    _visible(page.get_by_text("uploading survey files needs the analyst role", exact=False))
    assert page.locator(".st-key-schema_upload").count() == 0  # no schema upload (issue 33)
    _open(page, url, f"project?program={NORTH}")
    _visible(page.get_by_text("Programs in the workspace", exact=True))
    assert page.locator(".st-key-project_upload").count() == 0  # no project upload
    assert "Workspace database" not in _main_text(page)  # the URL is for admins only
    _open(page, url, f"report?program={NORTH}")
    page.get_by_role("button", name="Build the reports").click()
    _visible(page.get_by_text("Excel report (.xlsx)"))
    _settle(page)
    assert not re.search(r"/media/\w+\.xlsx", page.content())  # no address of the report
    download = _download_of(page, ".st-key-dl_xlsx button")
    address = download.url
    assert "/media/" in address and (Path(download.path()).read_bytes()[:2] == b"PK")
    _settle(page)
    for path in ("models", "nps"):  # the viewer goes on working: her session runs again
        _open(page, url, f"{path}?program={NORTH}")
    stranger = page.context.browser.new_context()  # never signed in
    answer = stranger.request.get(address)
    assert answer.status == 404 and answer.body()[:2] != b"PK", answer.status
    stranger.close()
    trail = _audit(database)
    assert trail.iloc[0].tolist() == [CAROL, "report exported"], trail
    assert CAROL not in set(trail[trail["action"] != "report exported"]["user"]), trail


def test_a_south_analyst_sees_north_on_no_page_and_not_by_its_address(team_app, person):
    url, _ = team_app
    page = person(BOB)
    _open(page, url, f"?program={NORTH}")
    _visible(page.get_by_text(f"no program named '{NORTH}'", exact=False))
    for path in PAGES:
        _open(page, url, path)
        text = _main_text(page)
        assert NORTH_FILE not in text and "north" not in text.lower().replace(
            f"no program named '{NORTH}'", ""), (path, text[:500])
    _open(page, url, "project")
    assert page.locator(".st-key-dl_programs").count() == 0  # no program to list


def test_a_person_of_no_team_is_told_so_and_sees_nothing(team_app, person):
    url, _ = team_app
    page = person(None)
    sign_in(page, url, EVE)
    _visible(page.get_by_text("not a member of any team", exact=False))
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0
    assert NORTH not in page.content()
