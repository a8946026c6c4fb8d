"""Issue 24, case 2 in the app: a CSV whose headers hold NUL, uploaded, trained on, and its
reports built on the Report page. Before the fix the chart renderer (vl-convert) aborted the
server process on the NUL and every analyst's session died; now the reports are built and the
same server serves a second user afterwards. A real streamlit server and headless chromium
(the fixtures and steps of ``tests/e2e/``)."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from test_app_browser import _go, _settle, _visible, app_url  # noqa: E402, F401 - app_url: the server
from test_isolation import (  # noqa: E402, F401 - browser, url: the module's fixtures
    _finish_training,
    _start_training,
    _upload,
    _user,
    browser,
    url,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # every report of a hostile upload (~65 s)
def _nul_csv(folder: Path) -> Path:
    rows = ["ID,NPS,Pri\x00ce,Speed,Sto\x00re"] + [
        f"R{i},{(i * 7) % 11},{i % 5 + 1},{(i * 3) % 5 + 1},S{i % 3}" for i in range(60)]
    path = folder / "nul_header.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_reports_of_a_nul_header_upload_leave_the_server_up(browser, url, tmp_path):  # noqa: F811
    a = _user(browser, url)
    path = _nul_csv(tmp_path)
    _upload(a, path)
    assert "column C: its header held 1 control character (NUL), removed" in a.content()
    _start_training(a, url, seed=0)
    _finish_training(a)

    _go(a, url, "report")
    a.get_by_role("button", name="Build the reports").click()
    _visible(a.get_by_text("Reports ready"))
    _settle(a)
    _visible(a.get_by_role("button", name="Excel report (.xlsx)"))

    # the same server, alive, serves a second user
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
        assert response.status == 200
    b = _user(browser, url)
    _visible(b.get_by_text("File: telecom_nps.xlsx"))
    # single-user mode shares the workspace's programs: a's is listed on the first page
    # (issue 37), and nowhere else on b's page
    _visible(b.locator(".st-key-landing").get_by_text("nul_header.csv").first)
    text = b.locator("body").inner_text()
    assert "nul_header.csv" not in text.replace(b.locator(".st-key-landing").inner_text(), "")
