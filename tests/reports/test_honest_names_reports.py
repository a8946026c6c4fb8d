"""Issue 25 point 6 in the reports: on a target that is no recommend question the Excel and the
HTML report (with a new wave) say "net score" with neutral group names — no "NPS", "promoter"
or "detractor" but in the titles of the papers cited — and on a recommend question on 0–10
they still say NPS, promoters and detractors. The whole path is the analyst's: cx-app evaluate,
train, estimate and report on a CSV."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.reports.definitions import PAPERS

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from test_cli_honest_names import ATTITUDE, RECOMMEND, survey_file  # noqa: E402

NPS_WORDS = re.compile(r"nps|promoter|detractor", re.IGNORECASE)


def reports(folder: Path, target: str, *, new_wave: bool = True) -> tuple[str, list[str]]:
    """(the HTML report's text, every text cell of the Excel report) of the analyst's path;
    ``new_wave``: with a new wave estimated by a trained model (else evaluate's own reports)."""
    path = survey_file(folder, target, (0, 10))
    assert main(["evaluate", path, "--algorithms", "lr", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(folder / "out")]) == 0
    written = folder / "out"
    if new_wave:
        wave = folder / "wave.csv"
        pd.read_csv(path).drop(columns=["Wave"]).to_csv(wave, index=False)
        assert main(["train", path, "--algorithm", "lr", "--folds", "3",
                     "--out", str(folder / "lr.skops")]) == 0
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["estimate", "--model", str(folder / "lr.skops"), str(wave),
                         "--json"]) == 0
        estimate = folder / "estimate.json"
        estimate.write_text(out.getvalue(), encoding="utf-8")
        written = folder
        for name in ("report.html", "report.xlsx"):
            assert main(["report", str(folder / "out" / "results.json"), "--new-wave",
                         str(estimate), "--out", str(folder / name)]) == 0
    book = openpyxl.load_workbook(written / "report.xlsx")
    cells = [c.value for ws in book for row in ws.iter_rows() for c in row
             if isinstance(c.value, str)]
    return (written / "report.html").read_text(encoding="utf-8"), cells


def without_citations(text: str) -> str:
    """The text without the cited papers' titles (two of them name the Net Promoter Score)."""
    for paper in PAPERS:
        text = text.replace(paper.citation, "").replace(
            paper.citation.replace("'", "&#x27;"), "")
    return text


@pytest.mark.slow  # about 14 s: evaluate and both reports
def test_a_target_that_is_no_recommend_question_has_no_nps_in_either_report(tmp_path, capsys):
    html, cells = reports(tmp_path, ATTITUDE)
    capsys.readouterr()
    assert NPS_WORDS.findall(without_citations(html)) == []
    assert [c for c in map(without_citations, cells) if NPS_WORDS.search(c)] == []
    assert "Net score of the analysed respondents" in cells
    assert "Net score of the new wave" in cells
    assert ">Net score of the analysed respondents<" in html
    assert "high and the low groups" in html  # the new wave's note names the neutral groups


def test_a_recommend_question_still_reads_as_nps(tmp_path, capsys):
    html, cells = reports(tmp_path, RECOMMEND, new_wave=False)
    capsys.readouterr()
    assert "NPS of the analysed respondents" in cells
    assert re.search(r"The NPS of the 240 analysed respondents is", html)
    assert ">promoters<" in html and ">detractors<" in html  # the reduced matrices' groups
