"""The whole analyst workflow in a real browser: Playwright drives Debian's chromium against
``streamlit run streamlit_app.py`` on a free port.

Upload a workbook through the real file input, train two fast models (3 folds), open the
confusion-matrix and new-wave pages, download the predictions, and check what the pages show.
Screenshots go to ``$CX_E2E_SCREENSHOTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_harness import free_port, streamlit_server

from cx_app.survey.importing import load_survey
from cx_app.survey.nps import nps_summary
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT = 90_000  # ms; two busy cores


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with streamlit_server(ROOT / "streamlit_app.py", free_port(), log=log) as url:
        yield url


@pytest.fixture(scope="module")
def page(app_url):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        pg = new_page(browser)
        context = pg.context
        try:
            yield pg
        finally:
            context.close()
            browser.close()


def new_page(browser):
    """A page in a new browser context (a new user: its own cookies), 1400 × 1000, downloads
    accepted, every wait up to ``WAIT``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(WAIT)
    return pg


def _download(pg, key: str, tmp_path) -> bytes:
    """The bytes of the file the download button ``key`` gives (saved under ``tmp_path``)."""
    timeout = pytest.importorskip("playwright.sync_api").TimeoutError
    button = pg.locator(f".st-key-{key} button")
    for attempt in range(3):  # a click that lands during a rerun starts none: click again
        _settle(pg)  # (an expander just opened, a file built on click, say)
        _expect()(button).to_have_count(1, timeout=WAIT)
        _expect()(button).to_be_visible(timeout=WAIT)
        try:
            with pg.expect_download(timeout=WAIT) as info:  # a file built on click: slow when busy
                button.click()
            break
        except timeout:
            if attempt == 2:
                raise
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    return target.read_bytes()


def _shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("CX_E2E_SCREENSHOTS", tmp_path))
    target.mkdir(parents=True, exist_ok=True)
    return target


def _expect():
    return pytest.importorskip("playwright.sync_api").expect


def _settle(pg) -> None:
    """Wait until the app has finished running the script and no element of the previous run
    is left on screen (Streamlit marks the app ``data-test-script-state="notRunning"`` and the
    stale elements of a re-run ``data-stale="true"``; Streamlit's own browser tests wait the
    same way). The short pause lets a rerun that an action just requested start."""
    expect = _expect()
    pg.wait_for_timeout(300)
    expect(pg.locator('[data-testid="stApp"]')).to_have_attribute(
        "data-test-script-state", "notRunning", timeout=WAIT)
    expect(pg.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=WAIT)
    expect(pg.locator('[data-stale="true"]')).to_have_count(0, timeout=WAIT)


def _visible(locator) -> None:
    """Assert (waiting up to ``WAIT``) that ``locator`` is on screen."""
    _expect()(locator).to_be_visible(timeout=WAIT)


def train(pg, folds: int = 3) -> None:
    """On the Models page: the chosen algorithms (the defaults: logistic regression and naive
    Bayes) cross-validated with ``folds`` folds; returns when the training has finished."""
    box = pg.get_by_label("Folds", exact=True)  # not its "Help for Folds"
    box.fill(str(folds))
    box.press("Enter")
    _settle(pg)
    pg.get_by_role("button", name="Train and cross-validate").click()
    _visible(pg.get_by_text("Training finished"))
    _settle(pg)


def _go(pg, app_url: str, path: str) -> None:
    # navigate through the sidebar, as a user does (keeps the session)
    pg.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    _settle(pg)


def test_upload_train_confusion_new_wave_download(page, app_url, tmp_path):
    pg = page
    expect = _expect()
    shots = _shots(tmp_path)
    pg.goto(app_url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)

    # upload the labeled wave-7 workbook through the real file input
    workbook = sample_path("telecom_nps_wave7_labeled")
    expected = load_survey(workbook, schema=load_schema(ROOT / "survey_schemas" /
                                                        "telecom_nps.yaml"))
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(workbook))
    _visible(pg.get_by_text(f"File: {workbook.name}"))
    _settle(pg)
    # the inferred layout is used for an upload; the respondent count is the library's
    used = pg.locator('[data-testid="stMetric"]', has_text="Respondents (survey base)")
    expect(used).to_contain_text(f"{expected.quality.respondents:,}", timeout=WAIT)
    models = pg.locator('[data-testid="stMetric"]', has_text="Used by the models")
    expect(models).to_contain_text(f"{expected.quality.rows_used:,}", timeout=WAIT)
    pg.screenshot(path=str(shots / "01_data.png"), full_page=True)

    _go(pg, app_url, "nps")
    nps = nps_summary(expected.scores)
    _visible(pg.get_by_text(f"NPS {nps.value:+.1f} (95% interval"))

    # train lr and nb (the defaults) with 3 folds
    _go(pg, app_url, "models")
    train(pg)
    _visible(pg.get_by_text("Leaderboard", exact=True))
    expect(pg.locator(".st-key-dl_board_0 button")).to_have_count(1, timeout=WAIT)
    pg.screenshot(path=str(shots / "02_models.png"), full_page=True)

    _go(pg, app_url, "confusion")
    charts = pg.locator('[data-testid="stVegaLiteChart"]')
    expect(charts).to_have_count(3, timeout=WAIT)
    _visible(pg.get_by_text("positive group: passives and promoters").first)
    pg.screenshot(path=str(shots / "03_confusion.png"), full_page=True)

    _go(pg, app_url, "new_wave")
    pg.get_by_role("button", name="Fit on all respondents").click()
    _settle(pg)
    # an uploaded survey: no bundled wave is offered; the wave uploaded here is estimated
    _visible(pg.get_by_text("has no wave yet", exact=False).first)
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(sample_path("telecom_nps_wave7_unlabeled")))
    _visible(pg.get_by_text("Estimated NPS", exact=False).first)
    _settle(pg)
    expect(pg.locator('[data-testid="stMetric"]', has_text="Respondents")).to_contain_text(
        "1,200", timeout=WAIT)
    _visible(pg.get_by_text("Held-out calibration gap", exact=False).first)
    pg.screenshot(path=str(shots / "04_new_wave.png"), full_page=True)

    button = pg.get_by_role("button", name="Download all predictions (CSV)")
    expect(button).to_have_count(1, timeout=WAIT)
    with pg.expect_download(timeout=WAIT) as info:
        button.click()
    download = info.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    lines = saved.read_text(encoding="utf-8-sig").splitlines()
    assert lines[0].split(",")[:4] == ["respondent_id", "sheet_row", "predicted", "group"]
    assert len(lines) == 1 + 1200
