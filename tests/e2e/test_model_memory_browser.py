"""Issue 33, case 2, in the app: crafted networks in real model files uploaded on the New wave
page ("Saved model file (.skops)"), with the bundled unlabelled wave (1,200 respondents).

- The wide one (one hidden layer of 400,000 units: unbatched, this wave's prediction needed
  gigabytes) is estimated, its numbers the library's; the server's peak resident memory
  (``VmHWM``) stays under its memory before the upload + the uploaded file (Streamlit keeps an
  upload in memory) + the model's own arrays + one prediction batch
  (:mod:`cx_app.estimate.model_size`) + 200 MB. (The model's first opening and 9-row
  prediction run in the limited child process of :mod:`cx_app.estimate.model_sandbox`, under
  its own cap, and are not counted here.)
- Meanwhile a second user (another browser context) opens the app and gets its pages.
- The deep one (40 hidden layers of 300) is refused in one sentence or estimated within the
  same cap, as the server's limits decide (with the defaults: 3.5 million numbers, within the
  20 million of ``CX_APP_MODEL_MAX_PARAMETERS``, so estimated); the server stays up.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest
from browser_harness import chromium_browser, free_port, streamlit_server
from crafted_models import DEEP, WAVE, WIDE, honest_network, reshaped, untrusted_file
from test_app_browser import WAIT, _expect, _go, _settle, _visible

from cx_app.errors import ModelFileError
from cx_app.estimate.model_size import check_model_size, limits, model_size
from cx_app.estimate.tracker import track_waves
from cx_app.survey.importing import load_survey

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # a server, two crafted models (~90 s)

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024


def _server_pid(port: int) -> int:
    """The pid of this process's child ``streamlit run ... --server.port port``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # a process that just ended
        if ppid == os.getpid() and b"streamlit" in b" ".join(command) and (
                str(port).encode() in command):
            return int(entry.name)
    raise AssertionError(f"no streamlit server on port {port} among this test's children")


def _memory(pid: int) -> dict[str, int]:
    """The process's resident memory now (``VmRSS``) and at its peak (``VmHWM``), in bytes."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {line.split(":")[0]: int(line.split()[1]) * 1024 for line in lines
            if line.startswith(("VmRSS:", "VmHWM:"))}


def _estimate_text(model) -> str:
    """The line the page shows for the wave's estimate, computed here by the library."""
    wave = load_survey(WAVE, schema=model.schema, require_target=False,
                       require_attributes=False, scoring=True)
    nps = track_waves(model, [wave])[0].estimate.estimated_nps
    return (f"Estimated NPS {nps.value:+.1f} (95% interval {nps.ci95[0]:+.1f} to "
            f"{nps.ci95[1]:+.1f})")


def _upload(pg, key: str, path: Path) -> None:
    pg.locator(f'.st-key-{key} input[type="file"]').set_input_files(str(path))


def test_crafted_networks_on_the_new_wave_page_stay_within_the_servers_memory(tmp_path):
    expect = _expect()
    network = honest_network()
    wide_model, deep_model = reshaped(network, (WIDE,)), reshaped(network, DEEP)
    wide = untrusted_file(wide_model, tmp_path / "wide.skops")
    deep = untrusted_file(deep_model, tmp_path / "deep.skops")
    _, batch_bytes = limits()
    arrays = model_size(wide_model.estimator).parameters * 8
    cap_over_baseline = wide.stat().st_size + arrays + batch_bytes + 200 * MB
    port = free_port()
    with streamlit_server(ROOT / "streamlit_app.py", port, log=tmp_path / "streamlit.log"
                          ) as url, chromium_browser() as browser:
        pid = _server_pid(port)
        users = [browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                 for _ in range(2)]
        for pg in users:
            pg.set_default_timeout(WAIT)
        analyst, bystander = users
        analyst.goto(url)
        _visible(analyst.get_by_text("Data quality"))
        _settle(analyst)
        _go(analyst, url, "new_wave")
        analyst.get_by_text("Saved model file (.skops)").click()
        _settle(analyst)
        baseline = _memory(pid)["VmRSS"]

        # the wide network: checked, opened, and the wave predicted in batches
        _upload(analyst, "nw_model_file", wide)
        _visible(analyst.get_by_text("Upload the wave(s) to estimate with this model file"))
        _settle(analyst)
        _upload(analyst, "nw_adhoc_files", WAVE)
        # the bystander opens the app while the analyst's wave is being estimated
        bystander.goto(url)
        _visible(bystander.get_by_text("Data quality"))
        _visible(analyst.get_by_text(_estimate_text(wide_model)))
        _settle(analyst)
        wide_peak = _memory(pid)["VmHWM"]
        expect(analyst.locator('[data-testid="stMetric"]', has_text="Respondents")
               ).to_contain_text("1,200")
        _settle(bystander)
        _go(bystander, url, "nps")  # and its pages still respond after the heavy one
        _visible(bystander.get_by_text("(95% interval").first)

        # the deep network: refused in one sentence or estimated, as the server's limits say
        _upload(analyst, "nw_model_file", deep)
        _visible(analyst.locator(".st-key-nw_model_file").get_by_text("deep.skops"))
        _settle(analyst)
        try:
            check_model_size(deep_model.estimator, deep.name)
            _visible(analyst.get_by_text(_estimate_text(deep_model)))
        except ModelFileError as refusal:
            _visible(analyst.get_by_text(str(refusal)))
        deep_peak = _memory(pid)["VmHWM"]
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
            assert response.status == 200  # the server is still up
        assert _memory(pid)["VmRSS"] > 0
    print(f"server RSS before the upload {baseline / MB:.0f} MB, peak with the wide network "
          f"{wide_peak / MB:.0f} MB, with the deep one {deep_peak / MB:.0f} MB, cap "
          f"{(baseline + cap_over_baseline) / MB:.0f} MB (file {wide.stat().st_size / MB:.0f} MB, "
          f"arrays {arrays / MB:.0f} MB, batch {batch_bytes / MB:.0f} MB)")
    assert wide_peak < baseline + cap_over_baseline, (wide_peak / MB, baseline / MB)
    assert deep_peak < baseline + cap_over_baseline, (deep_peak / MB, baseline / MB)
