"""Metric reports for CX teams: an Excel workbook and a self-contained HTML file.

Both are rendered from one content model (:mod:`cx_app.reports.content`) built from the saved
evaluation results (``results.json`` of ``cx-app evaluate --out DIR``) and, optionally, a
new-wave estimate (``cx-app estimate --json``); nothing is retrained.

>>> from cx_app.reports import write_reports                        # doctest: +SKIP
>>> write_reports(results, "out/")                                  # doctest: +SKIP
{'xlsx': PosixPath('out/report.xlsx'), 'html': PosixPath('out/report.html')}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from cx_app.errors import CxAppError
from cx_app.reports.content import Report, build_report
from cx_app.reports.excel import excel_bytes, write_excel
from cx_app.reports.html import render_html, write_html

__all__ = [
    "Report",
    "build_report",
    "excel_bytes",
    "load_json",
    "render_html",
    "write_excel",
    "write_html",
    "write_report",
    "write_reports",
]

FORMATS = {".xlsx": "xlsx", ".html": "html", ".htm": "html"}


def load_json(path: str | Path, *, what: str = "results") -> dict:
    """Read a results or estimate JSON file; a clear :class:`CxAppError` when it is unusable."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CxAppError(f"the {what} file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CxAppError(f"the {what} file {path} cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CxAppError(f"the {what} file {path} does not hold a JSON object")
    return data


def write_report(results: Mapping, path: str | Path, new_wave: Mapping | None = None, *,
                 respondent_data: bool = False, source_name: str | None = None) -> Path:
    """Write one report; the format follows the suffix of ``path`` (.xlsx or .html)."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CxAppError(f"cannot tell the report format from {path.name}: use a name ending "
                         "in .xlsx or .html")
    report = build_report(results, new_wave, respondent_data=respondent_data,
                          source_name=source_name)
    try:
        if fmt == "xlsx":
            write_excel(report, path)
        else:
            write_html(report, path)
    except OSError as exc:
        raise CxAppError(f"cannot write the report {path}: {exc.strerror or exc}") from None
    return path


def write_reports(results: Mapping, out_dir: str | Path, new_wave: Mapping | None = None, *,
                  respondent_data: bool = False) -> dict[str, Path]:
    """Write ``out_dir/report.xlsx`` and ``out_dir/report.html`` from one content model."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = build_report(results, new_wave, respondent_data=respondent_data,
                          source_name="results.json")
    paths = {"xlsx": out_dir / "report.xlsx", "html": out_dir / "report.html"}
    try:
        write_excel(report, paths["xlsx"])
        write_html(report, paths["html"])
    except OSError as exc:
        raise CxAppError(f"cannot write the reports into {out_dir}: {exc.strerror or exc}") from None
    return paths
