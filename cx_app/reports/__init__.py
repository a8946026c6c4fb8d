"""Metric reports for CX teams: an Excel workbook and a self-contained HTML file.

Both are rendered from one content model (:mod:`cx_app.reports.content`) built from the typed
results (``results.json``) and, optionally, a new-wave estimate; nothing is retrained.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cx_app.errors import CxAppError

if TYPE_CHECKING:
    from cx_app.estimate.document import WaveEstimateDocument
    from cx_app.models.results import Results

FORMATS = {".xlsx": "xlsx", ".html": "html", ".htm": "html"}
_LAZY = {"Report": "blocks", "build_report": "content", "excel_bytes": "excel",
         "write_excel": "excel", "render_html": "html", "write_html": "html"}
__all__ = [*_LAZY, "write_report", "write_reports"]


def __getattr__(name: str) -> Any:
    # imported when first used (PEP 562): `cx-app validate` needs the plain names of
    # cx_app.reports.definitions, not Altair, openpyxl, SciPy and scikit-learn
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"cx_app.reports.{_LAZY[name]}"), name)


def write_report(results: Results | Mapping[str, Any], path: str | Path,
                 new_wave: WaveEstimateDocument | Mapping[str, Any] | None = None, *,
                 respondent_data: bool = False, source_name: str | None = None) -> Path:
    """Write one report; the format follows the suffix of ``path`` (.xlsx or .html)."""
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CxAppError(f"cannot tell the report format from {path.name}: use a name ending "
                         "in .xlsx or .html")
    _write(results, new_wave, respondent_data, source_name, {fmt: path},
           f"the report {path}")
    return path


def write_reports(results: Results | Mapping[str, Any], out_dir: str | Path,
                  new_wave: WaveEstimateDocument | Mapping[str, Any] | None = None, *,
                  respondent_data: bool = False) -> dict[str, Path]:
    """Write ``out_dir/report.xlsx`` and ``out_dir/report.html`` from one content model."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"xlsx": out_dir / "report.xlsx", "html": out_dir / "report.html"}
    _write(results, new_wave, respondent_data, "results.json", paths,
           f"the reports into {out_dir}")
    return paths


def _write(results: Results | Mapping[str, Any],
           new_wave: WaveEstimateDocument | Mapping[str, Any] | None, respondent_data: bool,
           source_name: str | None, paths: Mapping[str, Path], what: str) -> None:
    from cx_app.reports.content import build_report
    from cx_app.reports.excel import write_excel
    from cx_app.reports.html import vega_bundle, write_html

    report = build_report(results, new_wave, respondent_data=respondent_data,
                          source_name=source_name)
    # the HTML's Vega libraries are bundled in a thread (vl-convert's own code, without the
    # GIL: about 2 s and 140 MB the first time in a process) while the workbook is written;
    # not sooner: a one-shot run's workers leave in the second after their last task
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cx-app-vega") as beside:
        bundle = beside.submit(vega_bundle) if "html" in paths else None
        try:
            for fmt, path in paths.items():
                if fmt == "xlsx":
                    write_excel(report, path)
                else:
                    write_html(report, path, bundle=bundle.result() if bundle else None)
        except OSError as exc:
            raise CxAppError(f"cannot write {what}: {exc.strerror or exc}") from None
