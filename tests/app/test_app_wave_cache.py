"""The New wave page's caches (``app_pages/wave_panels.py``): the tracker drawn from the cache
is drawn afresh when a wave is added or removed (the caption's wave count, the table and the
chart's data), and the cache keeps each person's program apart (team mode: two people may see
different programs of one name).

Driven through ``AppTest`` on a workspace database of the test's own (``tests/conftest.py``)."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest
from test_app_pages import _ok

from app_pages import wave_panels
from cx_app.reports.program_tracker import program_tracker_frame
from cx_app.survey.samples import simulate_telecom_waves
from cx_app.workspace.programs import Workspace
from cx_app.workspace.views import ModelSummary

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 240
PROGRAM = "telecom_nps"


def _wave_csv(k: int) -> bytes:
    return simulate_telecom_waves([k], respondents_per_operator=30, seed=k,
                                  include_target=False).to_csv(index=False).encode()


def _shown(at: AppTest) -> tuple[int, list[str], set[str]]:
    """The caption's wave count, the tracker table's waves and the waves in the chart's data."""
    caption = next(c.value for c in at.caption if "wave file(s), estimated by" in c.value)
    count = int(re.search(r": (\d+) wave file\(s\)", caption).group(1))
    table = next(df.value for df in at.dataframe if "series" in df.value.columns)
    chart = at.get("vega_lite_chart")[0].proto
    import pyarrow as pa

    charted = {w for d in chart.datasets
               for w in pa.ipc.open_stream(d.data.data).read_all().column("wave").to_pylist()}
    return count, list(table["wave"]), charted


def test_the_cached_tracker_shows_an_added_and_a_removed_wave():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["nb"])
    at.number_input(key="folds").set_value(3)
    at.number_input(key="seed").set_value(31)
    at.button(key="train").click().run()
    at.switch_page("app_pages/new_wave.py").run()
    at.button(key="nw_fit").click().run()
    _ok(at)
    assert _shown(at) == (1, ["2021-07"], {"2021-07"})  # the bundled wave 7
    at.run()  # drawn again from the cache
    assert _shown(at) == (1, ["2021-07"], {"2021-07"})

    uploader = at.file_uploader(key="nw_wave_files")
    uploader.upload("wave8.csv", _wave_csv(8), "text/csv")
    uploader.upload("wave9.csv", _wave_csv(9), "text/csv")
    at.run()
    _ok(at)
    waves = ["2021-07", "2021-08", "2021-09"]
    assert _shown(at) == (3, waves, set(waves))

    remove = at.selectbox(key="nw_remove")
    remove.set_value(next(o for o in remove.options if o.startswith("2021-08"))).run()
    at.button(key="nw_remove_go").click().run()
    _ok(at)
    assert _shown(at) == (2, ["2021-07", "2021-09"], {"2021-07", "2021-09"})
    assert at.expander[-1].label == "Remove a wave"  # the expander keeps its state
    assert at.session_state["nw_remove_open"] is not None

    # two people, one program name, different programs: each gets their own tracker
    with Workspace.open() as workspace:
        view = workspace.show(PROGRAM, model="nb seed=31")
    other = view.model_copy(update={"waves": view.waves[:1]})
    ann = wave_panels.program_key(view, workspace_url="sqlite:///a.db", user="ann@example.org")
    bob = wave_panels.program_key(other, workspace_url="sqlite:///a.db", user="bob@example.org")
    assert ann != bob
    assert ann != wave_panels.program_key(view, workspace_url="sqlite:///a.db",
                                          user="bob@example.org")  # same view, another person
    assert ann != wave_panels.program_key(view, workspace_url="sqlite:///b.db",
                                          user="ann@example.org")  # another workspace
    for key, shown in ((ann, view), (bob, other), (ann, view)):
        parts = wave_panels.tracker_parts(key, None, "NPS", shown)
        assert list(parts.table["wave"]) == [w.label for w in shown.waves]
        expected = program_tracker_frame(shown).round(2)
        assert parts.table.equals(expected)


    # the version: the same for the same program, new with any wave, model, refit or team
    assert view.version == other.version[:3] + (view.version[3],)
    assert view.model_copy(update={"waves": ()}).version != view.version
    refit = view.model_copy(update={"models": tuple(
        m.model_copy(update={"file_sha256": "0" * 64}) for m in view.models)})
    assert refit.version != view.version  # a model fitted again: its estimates are new
    more = view.model_copy(update={"models": (*view.models, ModelSummary(
        model_id="lr seed=1", algorithm="lr", preset="fast", calibration="none",
        file_sha256=None, training_n=None, created=view.created))})
    assert more.version != view.version
    assert view.model_copy(update={"team": "analysts"}).version != view.version
