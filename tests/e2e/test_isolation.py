"""Sessions on a shared server: two browser contexts (two users) against ONE streamlit server.

- User A uploads a CSV whose file name and one column name carry a marker and trains lr + nb;
  user B, fresh, sees the bundled sample, no trained models and never the marker outside the
  first page's list of the workspace's programs (single-user mode shares the programs: A's is
  listed there by its name, issue 37); B trains on the sample; A's pages still show A's data
  and A's results.
- Two users press "Train" at the same time; both finish, each with its own numbers.

Every leaderboard accuracy is read from the page's CSV download and compared with
``cross_validate_model`` run here, in the test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# the server fixture of the workflow test: one streamlit server for this module
from test_app_browser import (  # noqa: F401
    ARGS,
    CHROMIUM,
    WAIT,
    _expect,
    _go,
    _settle,
    _visible,
    app_url,
)

from cx_app.models.crossval import cross_validate_model
from cx_app.survey.importing import SurveyData, load_survey, read_table
from cx_app.survey.inference import infer_schema
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # two servers, two users training (~70 s)

ROOT = Path(__file__).resolve().parents[2]
MARKER = "zq81marker"
FOLDS = 3


@pytest.fixture(scope="module")
def url(request) -> str:
    """The one streamlit server every user of this module talks to."""
    return request.getfixturevalue("app_url")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _user(browser, url):
    """A new browser context (its own cookies and websocket: a new Streamlit session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(WAIT)
    pg.goto(url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)
    return pg


def _outside_landing(pg) -> str:
    """The page's text but the first page's list of the workspace's programs."""
    text = pg.locator("body").inner_text()
    landing = pg.locator(".st-key-landing")
    return text.replace(landing.inner_text(), "") if landing.count() else text


def _go_data(pg) -> None:
    pg.locator('[data-testid="stSidebarNav"] a', has_text="Data").first.click()
    _settle(pg)


def _upload(pg, path: Path) -> None:
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        str(path))
    _visible(pg.get_by_text(f"File: {path.name}"))
    _settle(pg)


def _set_number(pg, label: str, value: int) -> None:
    box = pg.get_by_label(label, exact=True)  # not the "Help for ..." button
    box.fill(str(value))
    box.press("Enter")
    _settle(pg)


def _start_training(pg, url: str, seed: int) -> None:
    _go(pg, url, "models")
    _set_number(pg, "Folds", FOLDS)
    _set_number(pg, "Seed", seed)
    pg.get_by_role("button", name="Train and cross-validate").click()


def _finish_training(pg) -> None:
    _visible(pg.get_by_text("Training finished"))
    _settle(pg)


def _leaderboard(pg, tmp_path: Path, name: str) -> dict[str, float]:
    """Accuracy per model from the Models page's download of the original-level leaderboard."""
    button = pg.locator(".st-key-dl_board_0 button")
    # a page just re-run may still show its stale elements: wait for exactly one button
    _expect()(button).to_have_count(1, timeout=WAIT)
    with pg.expect_download(timeout=WAIT) as info:
        button.click()
    path = tmp_path / f"{name}.csv"
    info.value.save_as(path)
    frame = pd.read_csv(path, encoding="utf-8-sig")
    return dict(zip(frame["model"], frame["Accuracy"], strict=True))


def _uploaded(path: Path) -> SurveyData:
    """The survey as the app reads an upload: the layout inferred from the data."""
    data = path.read_bytes()
    schema = infer_schema(read_table(data, filename=path.name), name=path.stem)
    return load_survey(data, schema=schema, filename=path.name)


def _sample() -> SurveyData:
    return load_survey(sample_path("telecom_nps"),
                       schema=load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml"))


def _expected(survey: SurveyData, seed: int) -> dict[str, float]:
    out = {}
    for algorithm in ("lr", "nb"):
        cv = cross_validate_model(survey.X, survey.y, survey.classes, algorithm, folds=FOLDS,
                                  seed=seed, calibration="none")
        out[algorithm if seed == 0 else f"{algorithm} seed={seed}"] = float(
            np.mean(cv.y_pred == cv.y_true))
    return out


def _assert_accuracies(shown: dict[str, float], expected: dict[str, float]) -> None:
    assert set(shown) == set(expected)
    for model, value in expected.items():
        assert shown[model] == pytest.approx(value, abs=1e-9), model


@pytest.fixture(scope="module")
def marked_csv(tmp_path_factory) -> Path:
    """The retail CSAT sample with a marker in its file name and in one column name."""
    source = sample_path("retail_csat").read_text(encoding="utf-8")
    header, rest = source.split("\n", 1)
    assert "Store cleanliness" in header
    path = tmp_path_factory.mktemp("upload") / f"{MARKER}_survey.csv"
    path.write_text(header.replace("Store cleanliness", f"Store {MARKER} cleanliness") + "\n"
                    + rest, encoding="utf-8")
    return path


def test_users_never_see_each_others_uploads_models_or_results(browser, url, marked_csv,
                                                              tmp_path):
    # user A: the marked upload, lr + nb trained on it
    a = _user(browser, url)
    _upload(a, marked_csv)
    assert MARKER in a.content()
    _start_training(a, url, seed=0)
    _finish_training(a)
    shown_a = _leaderboard(a, tmp_path, "a")

    # user B, fresh: the bundled sample, no models, never the marker, on every page
    b = _user(browser, url)
    _visible(b.get_by_text("File: telecom_nps.xlsx"))
    _visible(b.locator(".st-key-landing").get_by_text(f"{MARKER}_survey").first)  # listed
    assert MARKER not in _outside_landing(b)
    for path, empty in (("models", "Choose algorithms and press"),
                        ("confusion", "No model is trained yet"),
                        ("compare", "No model is trained yet"),
                        ("new_wave", "No model is trained yet"),
                        ("report", "No model is trained yet")):
        _go(b, url, path)
        _visible(b.get_by_text(empty).first)
        _settle(b)
        assert MARKER not in b.content(), path
        assert MARKER not in b.locator("body").inner_text(), path
    _go_data(b)
    _visible(b.get_by_text("File: telecom_nps.xlsx"))
    assert MARKER not in _outside_landing(b)

    # B trains on the sample
    _start_training(b, url, seed=0)
    _finish_training(b)
    shown_b = _leaderboard(b, tmp_path, "b")
    assert MARKER not in b.content()

    # A's session still holds A's data and results
    _go(a, url, "models")
    _visible(a.get_by_text(f"Data: {MARKER}_survey.csv", exact=False))
    assert _leaderboard(a, tmp_path, "a_again") == shown_a
    _go_data(a)
    _visible(a.get_by_text(f"File: {marked_csv.name}"))

    _assert_accuracies(shown_a, _expected(_uploaded(marked_csv), seed=0))
    _assert_accuracies(shown_b, _expected(_sample(), seed=0))
    a.context.close()
    b.context.close()


def test_two_users_training_at_the_same_time_both_finish(browser, url, tmp_path):
    csat = sample_path("retail_csat")
    c = _user(browser, url)
    _upload(c, csat)
    d = _user(browser, url)
    # seed 1: nothing of this is in the server's result store yet, both really train
    _start_training(c, url, seed=1)
    _start_training(d, url, seed=1)
    _finish_training(c)
    _finish_training(d)
    shown_c = _leaderboard(c, tmp_path, "c")
    shown_d = _leaderboard(d, tmp_path, "d")
    assert "already trained" not in c.locator("body").inner_text()  # both really trained
    _visible(c.get_by_text(f"Data: {csat.name}", exact=False))
    _visible(d.get_by_text("Data: telecom_nps.xlsx", exact=False))
    _assert_accuracies(shown_c, _expected(_uploaded(csat), seed=1))
    # the sample's program also holds the models user B trained on it in the test before: in
    # single-user (local) mode every session shares the workspace's programs (per-user and
    # per-team programs are team mode)
    expected_d = _expected(_sample(), seed=1)
    _assert_accuracies({m: shown_d[m] for m in expected_d}, expected_d)
    c.context.close()
    d.context.close()
