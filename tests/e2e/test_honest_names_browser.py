"""Issue 25 point 6 in a real browser (Playwright + Debian chromium against a streamlit
server): an uploaded survey whose 0–10 target is no recommend question. The Data page shows
"Is this an NPS (recommend) question?" answered "No" (the inferred answer); the NPS page and
the whole window (navigation included) then say "net score" with low / middle / high and never
"NPS", "promoter" or "detractor"; answering "Yes" makes the same page an NPS with promoters
and detractors (the NPS cut points 0–6 / 9–10; the net score had used a symmetric split)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

# the server and page fixtures of the workflow test: one streamlit server, one session
from test_app_browser import _go, _settle, _visible, app_url, page  # noqa: F401

from cx_app.survey.importing import load_survey
from cx_app.survey.nps import groups_for_schema, nps_summary

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from test_cli_honest_names import ATTITUDE, survey_file  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # trains, then relabels (~17 s)

NPS_WORDS = re.compile(r"nps|promoter|detractor", re.IGNORECASE)
QUESTION = "Is this an NPS (recommend) question?"


def _metric(window, label: str) -> str:
    box = window.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_a_non_recommend_item_reads_as_a_net_score_until_the_analyst_says_yes(request,
                                                                            tmp_path):
    pg, url = request.getfixturevalue("page"), request.getfixturevalue("app_url")
    path = Path(survey_file(tmp_path, ATTITUDE, (0, 10)))
    expected = load_survey(path)
    net = nps_summary(expected.scores, groups=groups_for_schema(expected.schema))
    pg.goto(url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(path))
    _visible(pg.get_by_text(f"File: {path.name}"))
    _settle(pg)
    radio = pg.locator('[data-testid="stRadio"]', has_text=QUESTION)
    assert radio.get_by_role("radio", name="No").is_checked()

    _go(pg, url, "nps")
    _visible(pg.get_by_text("Net score overview"))
    _visible(pg.locator('[data-testid="stVegaLiteChart"]').first)
    text = pg.locator("body").inner_text()
    assert NPS_WORDS.findall(text) == [], text[:3000]
    assert _metric(pg, "Net score (top box − bottom box)") == f"{net.value:+.1f}"
    assert _metric(pg, "High") == f"{100 * net.shares['high']:.1f}%"
    pg.screenshot(path=str(tmp_path / "net_score_page.png"), full_page=True)

    # the analyst answers "Yes": the same scores, now an NPS, with the NPS cut points (0–6 /
    # 9–10) instead of the symmetric split of a non-recommend item (issue 37, point 7)
    nps = nps_summary(expected.scores)
    assert nps.value != net.value  # the premise: the two groupings differ on this survey
    pg.locator('[data-testid="stSidebarNav"] a', has_text="Data").first.click()  # the default
    _settle(pg)
    radio = pg.locator('[data-testid="stRadio"]', has_text=QUESTION)
    radio.get_by_text("Yes", exact=True).click()
    _settle(pg)
    _go(pg, url, "nps")
    _visible(pg.get_by_text("NPS overview"))
    assert _metric(pg, "NPS") == f"{nps.value:+.1f}"
    assert _metric(pg, "Promoters") == f"{100 * nps.shares['promoters']:.1f}%"
    assert _metric(pg, "Detractors") == f"{100 * nps.shares['detractors']:.1f}%"
