"""Save project / Open project and a reload in a real browser (Playwright + Debian's
chromium against ``streamlit run``).

Session 1 trains lr and nb (3 folds) on the bundled sample, reloads the page and restores its
analysis, then downloads the project file. Session 2 (a new browser context: nothing shared
but the server) uploads that file on the Project page and sees both models on the Models and
Confusion pages without training."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_app_browser import ARGS, CHROMIUM, WAIT, _settle, app_url  # noqa: F401

from cx_app.project import read_project

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # trains, saves, reloads (~30 s)


def _go(pg, path: str) -> None:
    pg.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    _settle(pg)


def test_save_reload_and_open_a_project(app_url, tmp_path):  # noqa: F811
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            first = browser.new_context(viewport={"width": 1400, "height": 1000},
                                        accept_downloads=True)
            pg = first.new_page()
            pg.set_default_timeout(WAIT)
            pg.goto(app_url)
            _settle(pg)
            _go(pg, "models")
            folds = pg.get_by_label("Folds", exact=True)  # not its "Help for Folds"
            folds.fill("3")
            folds.press("Enter")
            _settle(pg)
            pg.get_by_role("button", name="Train and cross-validate").click()
            expect(pg.get_by_text("Training finished")).to_be_visible(timeout=WAIT)
            _settle(pg)
            assert "program=telecom_nps" in pg.url

            # a reload: the address names the program, reopened with its models
            pg.reload()
            _settle(pg)
            expect(pg.get_by_text("Leaderboard", exact=True)).to_be_visible(timeout=WAIT)
            _go(pg, "models")
            expect(pg.get_by_text("Leaderboard", exact=True)).to_be_visible(timeout=WAIT)

            _go(pg, "project")
            pg.get_by_role("button", name="Prepare the project file").click()
            _settle(pg)
            with pg.expect_download(timeout=WAIT) as info:
                pg.get_by_role("button", name="Save project").click()
            saved = tmp_path / info.value.suggested_filename
            info.value.save_as(saved)
            assert saved.suffix == ".cxproj"
            project = read_project(saved)
            assert [m.algorithm_id for m in project.models] == ["lr", "nb"]
            assert project.survey_bytes is None  # respondent data stays out by default

            second = browser.new_context(viewport={"width": 1400, "height": 1000})
            pg2 = second.new_page()
            pg2.set_default_timeout(WAIT)
            pg2.goto(app_url)
            _settle(pg2)
            _go(pg2, "project")
            pg2.locator('[data-testid="stFileUploader"] input[type="file"]').first \
                .set_input_files(str(saved))
            expect(pg2.get_by_text("2 model(s) of telecom_nps", exact=False)).to_be_visible(
                timeout=WAIT)
            _settle(pg2)
            _go(pg2, "models")
            expect(pg2.get_by_text("Leaderboard", exact=True)).to_be_visible(timeout=WAIT)
            _go(pg2, "confusion")
            expect(pg2.locator('[data-testid="stVegaLiteChart"]')).to_have_count(3,
                                                                                 timeout=WAIT)
            assert not pg2.get_by_text("Traceback").count()
        finally:
            browser.close()
