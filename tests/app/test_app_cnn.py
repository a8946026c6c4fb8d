"""The CNN on the Models page (AppTest): chosen like any algorithm, its settings editable,
cross-validated on a small uploaded survey, its adaptation to 3 attributes shown."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # trains the CNN on the Models page (~17 s)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 180  # two busy cores; the first CNN fit imports Keras and compiles


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _survey_csv() -> bytes:
    rng = np.random.default_rng(3)
    n = 200
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "Likelihood to recommend (0-10)", nps)
    return frame.to_csv(index=False).encode()


def test_the_cnn_trains_on_the_models_page_and_says_how_it_adapted():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").upload("small.csv", _survey_csv(), "text/csv")
    at.run()
    _ok(at)
    assert at.session_state["analysis"].survey.X.shape == (200, 3)
    at.switch_page("app_pages/models.py").run()
    _ok(at)
    at.multiselect(key="algorithms").set_value(["cnn"]).run()
    at.radio(key="preset").set_value("papers").run()
    _ok(at)
    assert at.number_input(key="set::papers::cnn::epochs").value == 100  # the papers' settings
    assert at.number_input(key="set::papers::cnn::batch_size").value == 128
    at.number_input(key="set::papers::cnn::epochs").set_value(5)
    at.number_input(key="folds").set_value(3)
    at.button(key="train").click().run()
    _ok(at)
    models = at.session_state["analysis"].models
    (model_id,) = models
    cv = models[model_id].cv
    assert cv.algorithm_id == "cnn" and cv.folds == 3 and cv.settings["epochs"] == 5
    assert model_id.startswith("cnn papers") and cv.preset == "papers"
    assert cv.proba.shape == (200, len(cv.classes))
    assert any("pooling 4→3" in w.value for w in at.warning)
    shown = " ".join(str(df.value.to_dict()) for df in at.dataframe)
    assert "Convolutional neural network" in shown or "cnn" in shown
