"""A program's reports: the Excel and HTML reports with a tracker over all waves, and a deck.

The report of the program's results (its latest wave as the new wave) gets a "Tracker" section;
beside it the deck. Each file written is recorded in the workspace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from cx_app.atomic_files import write_bytes_atomic
from cx_app.errors import CxAppError
from cx_app.reports.blocks import Paragraph, Section, Table, TableColumn
from cx_app.reports.program_tracker import ALL_RESPONDENTS, program_tracker_frame
from cx_app.workspace.programs import Workspace
from cx_app.workspace.views import ProgramView

if TYPE_CHECKING:
    from cx_app.models.results import Results

__all__ = ["program_report_files", "tracker_table", "write_program_reports"]

def tracker_table(view: ProgramView) -> Table:
    """Every wave (in wave order) and every segment value of it."""
    segments = list(dict.fromkeys(by for wave in view.waves for by in wave.segments))
    frames = [program_tracker_frame(view)]
    for by in segments:
        frame = program_tracker_frame(view, by)
        frame = frame[frame["series"] != ALL_RESPONDENTS].copy()
        frame["series"] = [f"{by}: {value}" for value in frame["series"]]
        frames.append(frame)
    dates = {w.label: None if w.date is None else w.date.isoformat() for w in view.waves}
    order = {w.label: i for i, w in enumerate(view.waves)}
    table = pd.concat(frames, ignore_index=True)
    table = table.assign(_order=table["wave"].map(order)).sort_values(
        ["_order"], kind="stable")

    def number(value: object) -> float | None:
        return None if value is None or pd.isna(value) else float(value)

    rows = tuple((r.wave, dates.get(r.wave), r.series, int(r.n), number(r.nps),
                  number(r.ci_low), number(r.ci_high), number(r.realized),
                  "" if pd.isna(r.change) else f"{r.change:+.1f}",
                   r.flag if isinstance(r.flag, str) else "",
                   r.alert if isinstance(r.alert, str) else "",
                   r.note if isinstance(r.note, str) else "")
                 for r in table.itertuples())
    return Table(
        "Net score by wave and segment",
        (TableColumn("wave", "Wave"), TableColumn("date", "Date"),
         TableColumn("series", "Group"), TableColumn("n", "Respondents", "int"),
         TableColumn("nps", "Estimated net score", "score"),
         TableColumn("low", "95% low", "score"), TableColumn("high", "95% high", "score"),
         TableColumn("realized", "Realized net score", "score"),
         TableColumn("change", "Change since the previous wave"),
         TableColumn("flag", "Significance"), TableColumn("alert", "Alerts"),
         TableColumn("note", "Note")),
        rows,
        note="Waves in wave order (by date, then label). The estimate uses no scores of the "
             "wave; the realized net score is shown when the wave has its scores. A change is "
             "significant when its z test on both estimates with their whole uncertainty "
             "stays below 5% after Holm's adjustment over the changes of the same table.")


def program_report_files(view: ProgramView, results: Results, *, source_name: str,
                         segment_titles: Mapping[str, str]) -> dict[str, bytes]:
    """``xlsx``, ``html`` and ``pptx``: what ``cx-app program report`` writes and the app offers."""
    from cx_app.reports import build_report
    from cx_app.reports.excel import excel_bytes
    from cx_app.reports.html import render_html
    from cx_app.reports.pptx_deck import deck_bytes, program_slides

    latest = view.waves[-1].estimate if view.waves else None
    tracker = (tracker_table(view) if view.waves else Paragraph(
        f"The program {view.name} has no wave yet: add waves with cx-app program add-wave.",
        "note"))
    report = build_report(results, latest, source_name=source_name)
    sections = list(report.sections)
    keys = [s.key for s in sections]
    sections.insert(keys.index("data_quality") if "data_quality" in keys else len(sections),
                    Section("tracker", "Tracker", (tracker,)))
    report = dataclasses.replace(report, sections=tuple(sections))
    deck = deck_bytes(program_slides(view, results, segment_titles=segment_titles,
                                     created=report.created[:10]))
    return {"xlsx": excel_bytes(report), "html": render_html(report).encode("utf-8"),
            "pptx": deck}


def write_program_reports(workspace: Workspace, name: str, out_dir: str | Path
                          ) -> dict[str, Path]:
    from cx_app.reports.pptx_deck import deck_filename

    view = workspace.show(name)
    segment_titles = {s.name: s.column for s in workspace.schema(name).segments}
    contents = program_report_files(view, workspace.results(name),
                                    source_name=f"program {name}",
                                    segment_titles=segment_titles)
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
