"""The app works fully offline: with every non-loopback request blocked, visiting every page
gives no failed request and no console error (issue 15: the page icon came from an outside font
service)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from test_app_browser import ARGS, CHROMIUM, WAIT, _settle, app_url  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # every page in turn (~20 s)

PAGES = ("nps", "models", "confusion", "compare", "drivers", "new_wave", "report", "project",
         "glossary")


def test_every_page_loads_offline_without_errors(app_url):  # noqa: F811
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    blocked, failed, errors = [], [], []

    def route(r):
        host = urlparse(r.request.url).hostname or ""
        if r.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.route("**/*", route)
            pg = context.new_page()
            pg.set_default_timeout(WAIT)
            pg.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            pg.goto(app_url)
            _settle(pg)
            for path in PAGES:
                pg.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
                _settle(pg)
        finally:
            browser.close()
    assert blocked == [], blocked
    assert failed == [], failed
    assert errors == [], errors
