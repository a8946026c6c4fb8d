"""The preset selector on the Models page (AppTest): fast by default, and a model of the papers
preset is labelled with it, beside the fast one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from cx_app.models.names import model_display_name

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 120  # two busy cores


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _survey_csv() -> bytes:
    rng = np.random.default_rng(3)
    n = 150
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "Likelihood to recommend (0-10)", nps)
    return frame.to_csv(index=False).encode()


def test_preset_selector_defaults_to_fast_and_labels_the_papers_model():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload("small.csv", _survey_csv(), "text/csv")
    at.run()
    at.switch_page("app_pages/models.py").run()
    _ok(at)
    assert at.radio(key="preset").value == "fast"
    assert list(at.radio(key="preset").options) == ["fast (default)", "as in the papers"]
    at.multiselect(key="algorithms").set_value(["ann"]).run()
    assert at.number_input(key="set::fast::ann::batch_size").value == 200
    at.number_input(key="folds").set_value(3)
    at.button(key="train").click().run()
    _ok(at)
    at.radio(key="preset").set_value("papers").run()
    assert at.number_input(key="set::papers::ann::batch_size").value == 10
    at.number_input(key="set::papers::ann::max_iter").set_value(5)
    at.button(key="train").click().run()
    models = at.session_state["analysis"].models
    assert list(models) == ["ann", "ann papers max_iter=5"]
    assert (models["ann"].cv.preset, models["ann papers max_iter=5"].cv.preset) == (
        "fast", "papers")
    assert models["ann papers max_iter=5"].cv.settings["batch_size"] == 10
    recipes = next(df.value for df in at.dataframe if "preset" in df.value.columns)
    assert recipes.set_index("model")["preset"].to_dict() == {  # models named in words
        model_display_name("ann"): "fast", model_display_name("ann papers max_iter=5"): "papers"}
