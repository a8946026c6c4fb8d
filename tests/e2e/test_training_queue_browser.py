"""The server's training queue in a real browser: two sessions of one person (local mode: both
are "local user", 1 training job per person) press Train one after the other; the second waits,
its page says so with its place in the queue, and its Cancel takes it out of the queue at once
while the first goes on and finishes; pressed again, it trains."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_harness import chromium_browser, free_port, streamlit_server
from test_app_browser import _settle, _visible, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # two trainings queued on one server (~80 s)
ROOT = Path(__file__).resolve().parents[2]


def _models_page(browser, url: str, folds: int, seed: int):
    """A new session on the Models page with the default algorithms (lr + nb), ``folds`` and
    ``seed`` set, ready to press Train."""
    pg = new_page(browser)
    pg.goto(url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)
    return ready_to_train(pg, folds, seed)


def ready_to_train(pg, folds: int, seed: int):
    """``pg`` (a session showing the app) on the Models page with ``folds`` and ``seed`` set
    (also used by bench/bench_team_load_browser.py)."""
    pg.locator('[data-testid="stSidebarNav"] a[href$="/models"]').click()
    _settle(pg)
    for label, value in (("Folds", folds), ("Seed", seed)):
        box = pg.get_by_label(label, exact=True)
        box.fill(str(value))
        box.press("Enter")
        _settle(pg)
    return pg


def test_a_second_train_waits_in_the_queue_and_its_cancel_leaves_it(tmp_path):
    env = {"CX_APP_JOBS_PER_USER": "1", "CX_APP_JOBS_PER_SERVER": "2"}
    with streamlit_server(ROOT / "streamlit_app.py", free_port(), log=tmp_path / "log",
                          extra_env=env) as url, chromium_browser() as browser:
        # both sessions ready first, so that the second press comes while the first trains
        first = _models_page(browser, url, folds=20, seed=11)  # 20 folds: long enough
        second = _models_page(browser, url, folds=3, seed=12)
        first.get_by_role("button", name="Train and cross-validate").click()
        _visible(first.get_by_role("button", name="Cancel training"))
        second.get_by_role("button", name="Train and cross-validate").click()
        _visible(second.get_by_text(
            "Waiting for the server: 0 training job(s) ahead of yours in the queue (yours is "
            "number 1); the server trains 2 job(s) at a time, 1 per person."))
        second.get_by_role("button", name="Cancel training").click()
        _visible(second.get_by_test_id("stAlertContentWarning").get_by_text(
            "Training cancelled before it started (no model was trained)."))
        _settle(second)
        assert "Trained models" not in second.locator("body").inner_text()
        assert not second.get_by_role("button", name="Train and cross-validate").is_disabled()

        _visible(first.get_by_text("Training finished"))  # the first went on meanwhile
        _settle(first)
        second.get_by_role("button", name="Train and cross-validate").click()
        _visible(second.get_by_text("Training finished"))
        _settle(second)
        _visible(second.get_by_text("Trained models"))
