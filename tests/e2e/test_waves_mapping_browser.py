"""Issue 13 in a real browser (Playwright + Debian chromium, one streamlit server and one user
session for the module, tests in order):

(a) a survey that is not the bundled sample, two unlabeled waves uploaded at once → the New wave
    page's tracker chart and its table: two estimated waves with intervals, and one row per
    region (numbers from the library, computed here);
(b) the mapping's schema YAML downloaded and uploaded back gives the same schema and data;
(c) a mapping edit and the trained models survive switching to another file and back;
(d) Cancel stops a slow training cleanly: no traceback, the finished model kept, the one in
    training dropped with a message.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

# the server and page fixtures of the workflow test: one streamlit server, one session
from test_app_browser import (  # noqa: F401
    WAIT,
    _download,
    _expect,
    _go,
    _settle,
    _visible,
    app_url,
    page,
    train,
)

from cx_app.estimate.tracker import track_waves, tracker_frame
from cx_app.estimate.training import train_model
from cx_app.survey.importing import load_survey, read_table
from cx_app.survey.inference import infer_schema
from cx_app.survey.samples import sample_path, simulate_telecom_waves

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # one page through four tests: trains, two waves, a schema round trip, a cancel (~2.5 min)
FOLDS = 3
SURVEY = "branch_survey.csv"
WAVES = ("branch_wave7.csv", "branch_wave8.csv")


@pytest.fixture(scope="module")
def url(request) -> str:
    return request.getfixturevalue("app_url")


@pytest.fixture(scope="module")
def pg(request):
    """The one browser page (one user session) of the module's tests."""
    return request.getfixturevalue("page")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A simulated survey (waves 1–2, another seed than the sample) and two later waves
    without the target question, written as CSV files."""
    folder = tmp_path_factory.mktemp("waves")
    survey = simulate_telecom_waves([1, 2], respondents_per_operator=150, seed=11)
    paths = {SURVEY: folder / SURVEY}
    survey.to_csv(paths[SURVEY], index=False)
    for name, wave in zip(WAVES, (7, 8), strict=True):
        frame = simulate_telecom_waves([wave], respondents_per_operator=100, seed=11,
                                       include_target=False, drift=0.3 * (wave - 6))
        paths[name] = folder / name
        frame.to_csv(paths[name], index=False)
    return paths


def _upload(pg, paths, nth: int = 0) -> None:
    pg.locator('[data-testid="stFileUploader"] input[type="file"]').nth(nth).set_input_files(
        [str(p) for p in paths])


def _choose(pg, label: str, option: str) -> None:
    box = pg.locator('[data-testid="stSelectbox"]', has_text=label).get_by_role("combobox")
    choice = pg.get_by_role("option", name=option, exact=True)
    for _ in range(3):  # a rerun that starts meanwhile closes the list: open it again
        _settle(pg)
        box.click()
        box.fill(option)  # the list filters as one types
        try:
            choice.click(timeout=10_000)
            break
        except Exception:  # noqa: BLE001 — playwright's TimeoutError, retried
            pg.keyboard.press("Escape")
    else:
        raise AssertionError(f"option {option!r} of {label!r} never appeared")
    _settle(pg)
    _expect()(box).to_have_value(option, timeout=WAIT)


def _no_traceback(pg) -> None:
    _expect()(pg.locator('[data-testid="stException"]')).to_have_count(0)


def _train(pg, url) -> None:
    _go(pg, url, "models")
    train(pg, FOLDS)


def test_a_tracker_of_two_uploaded_waves_with_intervals_and_segments(pg, url, files,
                                                                      tmp_path):
    pg.goto(url)
    _visible(pg.get_by_text("Data quality"))
    _settle(pg)
    _upload(pg, [files[SURVEY]])
    _visible(pg.get_by_text(f"File: {SURVEY}"))
    _settle(pg)

    # lr only (quick), 3 folds
    _go(pg, url, "models")
    pg.get_by_role("button", name="Remove Naive Bayes (nb)").click()  # lr only
    _settle(pg)
    _train(pg, url)

    _go(pg, url, "new_wave")
    pg.get_by_role("button", name="Fit on all respondents").click()
    _settle(pg)
    _visible(pg.get_by_text("has no wave yet", exact=False).first)
    _upload(pg, [files[n] for n in reversed(WAVES)])  # uploaded out of order
    _visible(pg.get_by_text("Tracker: estimated NPS by wave"))
    _settle(pg)
    _choose(pg, "By segment", "Region")
    _no_traceback(pg)
    _visible(pg.locator("[data-testid='stVegaLiteChart']").first)  # the tracker chart
    shown = pd.read_csv(io.BytesIO(_download(pg, "dl_nw_tracker", tmp_path)))

    # the same with the library: the model fitted on all respondents, both waves by region
    raw = read_table(files[SURVEY].read_bytes(), filename=SURVEY)
    survey = load_survey(files[SURVEY].read_bytes(), filename=SURVEY,
                         schema=infer_schema(raw, name="branch_survey"))
    model = train_model(survey, "lr", calibration="none", folds=FOLDS, seed=0).model
    waves = [load_survey(files[n].read_bytes(), filename=n, schema=model.schema,
                         require_target=False, require_attributes=False, scoring=True)
             for n in WAVES]
    region = next(s.name for s in model.schema.segments if s.column == "Region")
    expected = tracker_frame(track_waves(model, waves, by=region)).round(2)

    overall = shown[shown["series"] == "All respondents"]
    # two estimated points in wave order (labelled by the files' wave column), whatever the
    # upload order
    assert list(overall["wave"]) == sorted(overall["wave"]) and len(overall) == 2
    assert (overall["ci_low"] < overall["nps"]).all() and (overall["nps"] < overall["ci_high"]
                                                           ).all()
    assert overall["realized"].isna().all()  # unlabeled waves: estimates only
    assert len(shown) == len(expected) and set(shown["series"]) > {"All respondents"}
    # the same numbers, wave by wave (the k-th wave in time is the k-th file) and series
    shown = shown.assign(k=shown["wave"].map({w: i for i, w in enumerate(overall["wave"])}))
    expected = expected.assign(k=expected["wave"].map({w: i for i, w in enumerate(WAVES)}))
    both = shown.merge(expected, on=["k", "series"], suffixes=("", "_lib"), validate="1:1")
    assert len(both) == len(expected)
    for column in ("nps", "ci_low", "ci_high"):
        np.testing.assert_allclose(both[column].to_numpy(float),
                                   both[f"{column}_lib"].to_numpy(float), atol=0.011)
    pg.screenshot(path=str(tmp_path / "tracker.png"), full_page=True)


def test_b_schema_yaml_downloads_and_uploads_back(pg, url, tmp_path):
    _go(pg, url, "")  # the Data page is the root
    _visible(pg.get_by_text(f"File: {SURVEY}"))
    respondents = pg.locator('[data-testid="stMetric"]', has_text="Respondents (survey base)")
    before = respondents.text_content()
    yaml_bytes = _download(pg, "dl_schema", tmp_path)
    assert b"Likelihood to recommend (0-10)" in yaml_bytes
    path = tmp_path / "branch_schema.yaml"
    path.write_bytes(yaml_bytes)
    pg.locator('.st-key-schema_upload input[type="file"]').set_input_files(str(path))
    _settle(pg)
    _no_traceback(pg)
    _expect()(pg.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    _expect()(respondents).to_have_text(before, timeout=WAIT)
    # the schema in use is the uploaded one, unchanged (the mapping is folded for a file)
    pg.get_by_text("Column mapping (check it", exact=False).click()
    again = _download(pg, "dl_schema", tmp_path)
    assert again == yaml_bytes
    # drop the uploaded schema again (back to the inferred one)
    pg.get_by_role("button", name="Remove branch_schema.yaml").click()
    _settle(pg)


def test_c_switching_files_and_back_keeps_the_mapping_and_the_models(pg, url):
    _go(pg, url, "")  # the Data page is the root
    # a mapping edit on the survey: respondents with a gap leave the models
    _choose(pg, "Unanswered attribute scores", "Leave respondents with a gap out of the models "
                                               "(not out of the net score)")
    # the model of test a does not fit the new mapping: the page says so first
    _visible(pg.get_by_text("do not apply to it", exact=False))
    pg.get_by_role("button", name="Use the new mapping").click()
    _settle(pg)
    used = pg.locator('[data-testid="stMetric"]', has_text="Used by the models")
    used_after_edit = used.text_content()
    _train(pg, url)  # lr on the edited mapping

    # another file, then back
    _go(pg, url, "")  # the Data page is the root
    _upload(pg, [sample_path("retail_csat")])
    _visible(pg.get_by_text("File: retail_csat.csv"))
    _settle(pg)
    _choose(pg, "Survey file", SURVEY)
    _visible(pg.get_by_text(f"File: {SURVEY}"))
    _visible(pg.get_by_text("are here again (nothing retrained)", exact=False))
    _expect()(used).to_have_text(used_after_edit, timeout=WAIT)
    policy = pg.locator('[data-testid="stSelectbox"]', has_text="Unanswered attribute scores")
    _expect()(policy.get_by_role("combobox")).to_have_value(
        "Leave respondents with a gap out of the models (not out of the net score)", timeout=WAIT)

    # the Models page lists the model again without a new training
    _go(pg, url, "models")
    _visible(pg.get_by_text("Trained models", exact=True))
    _expect()(pg.locator(".st-key-dl_recipes button")).to_have_count(1, timeout=WAIT)
    _expect()(pg.get_by_text("Training finished")).to_have_count(0)
    _no_traceback(pg)


def test_d_cancel_stops_a_slow_training_cleanly(pg, url, tmp_path):
    _go(pg, url, "")  # the Data page is the root
    _choose(pg, "Survey file", "Bundled sample: telecom NPS survey (waves 1–6)")
    _visible(pg.get_by_text("File: telecom_nps.xlsx"))
    _go(pg, url, "models")
    box = pg.locator(".st-key-algorithms").get_by_role("combobox")
    box.click()
    box.fill("Neural")
    pg.get_by_role("option", name="Neural network (ann)").click()
    pg.keyboard.press("Escape")
    _settle(pg)
    # the papers' MLP (batches of 10) is the slow one; the fast preset's takes seconds
    pg.locator(".st-key-preset").get_by_text("as in the papers", exact=True).click()
    _settle(pg)
    caption = pg.get_by_text("Expected time:", exact=False)
    _expect()(caption).to_contain_text("Neural network about", timeout=WAIT)  # the slow one
    pg.get_by_role("button", name="Train and cross-validate").click()
    _visible(pg.get_by_text("Logistic regression (papers' settings): cross-validated in",
                            exact=False))  # lr done, ann next
    pg.get_by_role("button", name="Cancel training").click()
    message = pg.get_by_text("Training cancelled (kept: Logistic regression (papers' settings); "
                             "Neural network was stopped during training and dropped)",
                             exact=False).first
    _visible(message)
    _settle(pg)
    _no_traceback(pg)
    _visible(pg.get_by_text("Trained models", exact=True))
    recipes = pd.read_csv(io.BytesIO(_download(pg, "dl_recipes", tmp_path)))
    assert [m.split(" ")[0] for m in recipes.iloc[:, 0]] == ["lr"]  # ann was dropped
    assert math.isfinite(float(recipes["fit seconds"].iloc[0]))
    pg.screenshot(path=str(tmp_path / "cancelled.png"), full_page=True)
