"""A program's reports: the Excel and HTML reports with a tracker over all waves, and a deck.

:func:`write_program_reports` builds the report of the program's results document
(:func:`cx_app.reports.build_report`, with the latest wave in wave order as its new wave) and
adds a "Tracker" section: one row per wave and per segment value, with the estimated net score,
its 95% interval and, for a labelled wave, the realized one. Beside them it writes the
program's PowerPoint deck (:mod:`cx_app.reports.pptx_deck`: one message per slide). Each file
written is recorded in the workspace (``reports``: file, SHA-256, size, waves covered).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cx_app.atomic_files import write_bytes_atomic
from cx_app.errors import CxAppError
from cx_app.reports.blocks import Paragraph, Report, Section, Table, TableColumn
from cx_app.workspace.programs import Workspace
from cx_app.workspace.views import ProgramView

__all__ = ["tracker_section", "tracker_table", "write_program_reports"]

ALL_RESPONDENTS = "All respondents"


def tracker_table(view: ProgramView) -> Table:
    """Every wave (in wave order) and every segment value of it: the estimated net score with
    its interval, and the realized one when the wave is labelled."""
    rows = []
    for wave in view.waves:
        est, real = wave.estimated_nps, wave.realized_nps
        date = None if wave.date is None else wave.date.isoformat()
        rows.append((wave.label, date, ALL_RESPONDENTS, wave.respondents, est.value,
                     est.ci95[0], est.ci95[1], None if real is None else real.value, ""))
        for by, values in wave.segments.items():
            for value, figure in values.items():
                seg, seg_real = figure.estimated_nps, figure.realized_nps
                rows.append((wave.label, date, f"{by}: {value}", figure.respondents,
                             None if seg is None else seg.value,
                             None if seg is None else seg.ci95[0],
                             None if seg is None else seg.ci95[1],
                             None if seg_real is None else seg_real.value, figure.note or ""))
    return Table(
        "Net score by wave and segment",
        (TableColumn("wave", "Wave"), TableColumn("date", "Date"), TableColumn("series", "Respondents"),
         TableColumn("n", "Number", "int"), TableColumn("nps", "Estimated net score", "score"),
         TableColumn("low", "95% low", "score"), TableColumn("high", "95% high", "score"),
         TableColumn("realized", "Realized net score", "score"), TableColumn("note", "Note")),
        tuple(rows),
        note="Waves in wave order (by date, then label). The estimate uses no scores of the "
             "wave; the realized net score is shown when the wave has its scores.")


def tracker_section(view: ProgramView) -> Section:
    if not view.waves:
        return Section("tracker", "Tracker", (Paragraph(
            f"The program {view.name} has no wave yet: add waves with cx-app program "
            "add-wave.", "note"),))
    return Section("tracker", "Tracker", (tracker_table(view),))


def _with_tracker(report: Report, section: Section) -> Report:
    sections = list(report.sections)
    keys = [s.key for s in sections]
    at = keys.index("data_quality") if "data_quality" in keys else len(sections)
    sections.insert(at, section)
    return dataclasses.replace(report, sections=tuple(sections))


def write_program_reports(workspace: Workspace, name: str, out_dir: str | Path
                          ) -> dict[str, Path]:
    """Write ``out_dir/report.xlsx``, ``out_dir/report.html`` and the deck
    ``out_dir/NAME.pptx`` of the program ``name``."""
    from cx_app.reports import build_report
    from cx_app.reports.excel import excel_bytes
    from cx_app.reports.html import render_html
    from cx_app.reports.pptx_deck import deck_bytes, deck_filename, program_slides

    view = workspace.show(name)
    results = workspace.results(name)
    latest = view.waves[-1].estimate if view.waves else None
    report = _with_tracker(build_report(results, latest, source_name=f"program {name}"),
                           tracker_section(view))
    segment_titles = {s.name: s.column for s in workspace.program_model(name).schema.segments}
    deck = deck_bytes(program_slides(view, results, segment_titles=segment_titles,
                                     created=report.created[:10]))
    contents = {"xlsx": excel_bytes(report), "html": render_html(report).encode("utf-8"),
                "pptx": deck}
    out = Path(out_dir)
    paths = {kind: out / f"report.{kind}" for kind in contents}
    paths["pptx"] = out / deck_filename(view.name)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for kind, data in contents.items():
            write_bytes_atomic(paths[kind], data)
    except OSError as exc:
        raise CxAppError(f"cannot write the reports into {out}: {exc.strerror or exc}") from None
    for kind, data in contents.items():
        workspace.record_report(name, kind, paths[kind], data, len(view.waves))
    return paths
