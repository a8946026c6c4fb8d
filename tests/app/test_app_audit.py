"""The New wave page's audit sample (issue 36): a wave added with "a few respondents of this
wave with their answers" shows the audited score in the tracker and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import entry_script_every_run  # noqa: F401  (a fixture)
from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from cx_app.workspace.programs import Workspace

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240
PROGRAM = "telecom_nps"
TARGET = "Likelihood to recommend (0-10)"


@pytest.mark.slow
def test_a_wave_with_its_audit_sample_shows_the_audited_score():
    from cx_app.survey.samples import simulate_telecom_waves

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["nb"])
    at.number_input(key="folds").set_value(3)
    at.number_input(key="seed").set_value(31)
    at.button(key="train").click().run()
    _ok(at)
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    labelled = simulate_telecom_waves([8], respondents_per_operator=60, seed=6).drop(
        columns=["Wave"])
    wave = labelled.drop(columns=[TARGET]).to_csv(index=False).encode()
    audit = labelled.sample(50, random_state=1).to_csv(index=False).encode()
    at.text_input(key="nw_label").set_value("2020-01")
    at.file_uploader(key="nw_audit_file").upload("audit.csv", audit, "text/csv")
    at.file_uploader(key="nw_wave_files").upload("march.csv", wave, "text/csv")
    at.run()
    _ok(at)
    tracker = next(df.value for df in at.dataframe if "series" in df.value.columns)
    row = tracker[(tracker["wave"] == "2020-01") & (tracker["series"] == tracker["series"].iloc[0])]
    assert row["note"].iloc[0].startswith("audited (50 answers")
    with Workspace.open() as workspace:
        shown = next(w for w in workspace.show(PROGRAM, model="nb seed=31").waves
                     if w.label == "2020-01").estimated_nps
    assert shown.audited_n == 50 and row["nps"].iloc[0] == pytest.approx(shown.value, abs=0.006)
    detail = at.selectbox(key="nw_detail")
    detail.set_value(next(o for o in detail.options if o.startswith("2020-01"))).run()
    assert any("audited NPS" in m.value for m in [*at.info, *at.warning])
