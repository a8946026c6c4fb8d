"""The HTML report in headless chromium: no network, no console errors, charts drawn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report_fixtures import make_new_wave, make_results  # noqa: E402

from cx_app.reports.blocks import ChartBlock  # noqa: E402
from cx_app.reports.content import build_report  # noqa: E402
from cx_app.reports.html import write_html  # noqa: E402

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_report_renders_offline_with_charts_and_no_errors(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    report_path = tmp_path / "report.html"
    report = build_report(make_results(), make_new_wave())
    expected_charts = sum(isinstance(b, ChartBlock) for s in report.sections for b in s.blocks)
    assert expected_charts >= 6  # model and driver charts of the fixture
    write_html(report, report_path)

    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(report_path.as_uri())
            page.wait_for_function(
                "() => [...document.querySelectorAll('div.chart')]"
                ".every(d => d.querySelector('svg, canvas') || d.classList.contains('chart-error'))",
                timeout=30_000)
            charts = page.locator("div.chart")
            count = charts.count()
            drawn = page.locator("div.chart svg.marks").count()
            failed = page.locator("div.chart.chart-error").count()
            screenshot = Path("/tmp/cx_report_screenshot.png")
            page.locator("#sec-roc").screenshot(path=str(screenshot))
            title = page.title()
        finally:
            browser.close()

    assert count == expected_charts  # every chart of the content model is on the page
    assert failed == 0 and drawn == count
    assert errors == []
    assert dialogs == []  # no hostile label ran as script
    assert [u for u in requests if not u.startswith("file://")] == []
    assert "CX driver analysis" in title
