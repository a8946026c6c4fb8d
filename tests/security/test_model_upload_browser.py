"""Issue 24, case 1 in the app: a crafted model uploaded on the New wave page of a real server.

Before, the upload killed the server process and every analyst's session with it (SIGSEGV in
scikit-learn's tree code). Now the page says one sentence, the server answers its health check,
the same user carries on (a sound model file is then accepted), and a second user opening the
app afterwards gets a working session.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from tests.data.bad import crafted
from tests.e2e import test_app_browser as e2e

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
app_url = e2e.app_url  # one streamlit server for this module (the workflow test's fixture)
page = e2e.page  # the first user's browser page


def _open(pg, url: str):
    pg.set_default_timeout(e2e.WAIT)
    pg.goto(url)
    e2e._visible(pg.get_by_text("Data quality"))
    e2e._settle(pg)
    return pg


def _upload_model(pg, path: Path) -> None:
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(path))
    e2e._settle(pg)


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as answer:
        return answer.status == 200


def test_a_crafted_model_upload_is_one_sentence_and_the_server_lives_on(page, app_url,
                                                                        tmp_path):
    expect = e2e._expect()
    first = _open(page, app_url)
    e2e._go(first, app_url, "new_wave")
    first.get_by_text("Saved model file (.skops)").click()
    e2e._settle(first)
    _upload_model(first, BAD / "model_tree_child.skops")
    error = first.locator('[data-testid="stAlertContentError"]')
    expect(error).to_have_count(1, timeout=e2e.WAIT)
    text = error.inner_text().strip()
    assert text.startswith("model_tree_child.skops: the model file is damaged or was crafted")
    assert "points at left child 2000000000" in text and text.endswith("so it was not used.")
    assert "\n" not in text and "Traceback" not in first.content()
    expect(first.locator('[data-testid="stException"]')).to_have_count(0)
    assert _healthy(app_url)

    # the same user carries on: a sound model file (never seen by this server) is accepted
    sound = tmp_path / "sound.skops"
    sound.write_bytes(crafted.tiny_model_bytes("dt"))
    _upload_model(first, sound)
    e2e._visible(first.get_by_text("Model: Decision tree (papers' settings), calibration none, "
                                   "trained on 90 respondents of crafted.csv"))
    # (the bundled wave then does not fit this model's questions: that error is the wave's)
    errors = first.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not [e for e in errors if "sound.skops" in e or "model" in e.split(":")[0]], errors

    # and a second user, arriving afterwards, gets a working session of their own
    second = _open(page.context.browser.new_context().new_page(), app_url)
    e2e._go(second, app_url, "new_wave")
    e2e._visible(second.get_by_text("Model source"))
    assert _healthy(app_url)
