"""A Qualtrics Excel export (choice text, three header rows, personal data) uploaded in the
browser: the Data page names the columns left out and shows the matrix items by their own
text, the NPS page shows the library's NPS, and a model trains with the defaults (issue 34)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import test_app_browser as browser
from test_app_browser import _expect, _go, _settle, _visible

from cx_app.survey.importing import load_survey
from cx_app.survey.nps import nps_summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "survey"))
import platform_exports as exports  # noqa: E402

pytestmark = pytest.mark.browser
app_url, page = browser.app_url, browser.page  # the same server and browser fixtures
WAIT = 90_000


def test_qualtrics_excel_upload_reaches_nps_and_a_trained_model(page, app_url, tmp_path):
    pg, expect = page, _expect()
    truth = exports.answers()
    workbook = exports.qualtrics_xlsx(truth, tmp_path / "qualtrics_export.xlsx")
    expected = load_survey(workbook)
    pg.goto(app_url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(workbook))
    _visible(pg.get_by_text(f"File: {workbook.name}"))
    _settle(pg)
    used = pg.locator('[data-testid="stMetric"]', has_text="Respondents (survey base)")
    expect(used).to_contain_text(f"{expected.quality.respondents:,}", timeout=WAIT)
    _visible(pg.get_by_text("column(s) left out at import", exact=False))
    body = pg.locator("body")
    expect(body).not_to_contain_text("@example.com", timeout=WAIT)
    # matrix items go by their own text; the question they share is named once
    expect(body).to_contain_text(exports.ITEMS[-1], timeout=WAIT)
    expect(body).not_to_contain_text(f"{exports.MATRIX} - {exports.ITEMS[-1]}", timeout=WAIT)
    _go(pg, app_url, "nps")
    nps = nps_summary(expected.scores)
    _visible(pg.get_by_text(f"NPS {nps.value:+.1f} (95% interval"))
    _go(pg, app_url, "models")
    pg.get_by_role("button", name="Train and cross-validate").click()
    _visible(pg.get_by_text("Training finished"))
    _settle(pg)
    _visible(pg.get_by_text("Leaderboard", exact=True))
    expect(pg.locator("body")).not_to_contain_text("Q1_NPS_GROUP", timeout=WAIT)
