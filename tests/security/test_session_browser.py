"""Issue 24, cases 3, 4 and 11 on a real server (``streamlit run`` + Playwright + Debian's
chromium): the entry script's snapshot after each page run, as a browser reload sees it.

A tab opened with a made-up ``?session=`` gets a token of its own; it uploads a file and
reloads: the offer names the new file and restores it. Another browser opens that tab's
address, restores (a copy) and uploads a second file, which never appears in the first tab's
file list; the made-up token still finds nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from e2e.test_app_browser import ARGS, CHROMIUM, WAIT, _settle, app_url  # noqa: F401

from cx_app.survey.samples import sample_path

pytestmark = pytest.mark.browser

FORGED = "Fixat10nFixat10nFixat10nFixat10nFixat10nFix"  # well formed, never issued
OFFER = "Your analysis from before is kept"


def _token(pg) -> str:
    return parse_qs(urlparse(pg.url).query)["session"][0]


def _tab(browser, url: str):
    """A new browser context (its own websocket: a new Streamlit session) at ``url``."""
    pg = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    pg.set_default_timeout(WAIT)
    pg.goto(url)
    _settle(pg)
    return pg


def _upload(pg, path: Path) -> None:
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(path))
    pg.get_by_text(f"File: {path.name}").first.wait_for(timeout=WAIT)
    _settle(pg)


def _file_box(pg):
    return pg.locator('[data-testid="stSelectbox"]', has_text="Survey file").get_by_role(
        "combobox")


def _file_options(pg) -> list[str]:
    _settle(pg)
    _file_box(pg).click()
    options = pg.get_by_role("option")
    options.first.wait_for(timeout=WAIT)
    names = options.all_inner_texts()
    pg.keyboard.press("Escape")
    _settle(pg)
    return names


def _restore(pg, expect, name: str) -> None:
    expect(pg.get_by_text(OFFER)).to_be_visible(timeout=WAIT)
    expect(pg.get_by_text(OFFER)).to_contain_text(name)
    pg.get_by_role("button", name="Restore it").click()
    _settle(pg)
    expect(_file_box(pg)).to_have_value(name, timeout=WAIT)


def test_tokens_reload_after_upload_and_restores_in_a_browser(app_url, tmp_path):  # noqa: F811
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    expect = sync_api.expect
    lines = sample_path("retail_csat").read_bytes().splitlines(keepends=True)
    victim, other = tmp_path / "victim.csv", tmp_path / "other.csv"
    victim.write_bytes(b"".join(lines[:601]))
    other.write_bytes(b"".join(lines[:1] + lines[601:1201]))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            a = _tab(browser, f"{app_url}/?session={FORGED}")  # case 3: not adopted
            expect(a).to_have_url(re.compile(r"session=[A-Za-z0-9_-]{43}"), timeout=WAIT)
            assert _token(a) != FORGED
            assert not a.get_by_text(OFFER).count()

            _upload(a, victim)  # case 11: a reload right after the upload
            a.reload()
            _settle(a)
            _restore(a, expect, victim.name)
            assert _token(a) != FORGED

            b = _tab(browser, a.url)  # case 4: A's address in another browser
            _restore(b, expect, victim.name)
            assert _token(b) != _token(a)
            _upload(b, other)
            expect(_file_box(b)).to_have_value(other.name, timeout=WAIT)

            a.locator('[data-testid="stSidebarNav"] a', has_text="Data").first.click()
            _settle(a)
            options = _file_options(a)
            assert victim.name in options and other.name not in options
            expect(_file_box(a)).to_have_value(victim.name, timeout=WAIT)

            stranger = _tab(browser, f"{app_url}/?session={FORGED}")
            assert not stranger.get_by_text(OFFER).count()
            assert victim.name not in stranger.content()
        finally:
            browser.close()
