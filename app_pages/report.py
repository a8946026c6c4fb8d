"""Report: the Excel and HTML reports and the JSON results of this session's analysis, built
from the cached results (nothing is retrained)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages import common, lifecycle
from cx_app.errors import CxAppError
from cx_app.models.names import model_display_name

LAST_WAVE = "last_wave_estimate"  # set by the New wave page

a = lifecycle.analysis()
st.title("Report")
common.survey_caption(a)
if common.need_models(a):
    st.stop()

best_overall = a.best_model()
comparable = a.comparable_models(best_overall)
if len(comparable) < len(a.models):
    st.caption("Paired tests need models cross-validated on the same folds (same number of "
               "folds and seed): the report holds the models trained on the folds of the most "
               "accurate one unless you choose otherwise.")
chosen = st.multiselect("Models in the report", list(a.models), default=comparable,
                        key="report_models", format_func=model_display_name)
if not chosen:
    st.stop()
program = lifecycle.program_view(chosen)  # the program's waves, when it has some
wave = st.session_state.get(LAST_WAVE)
include_wave = program is None and wave is not None and st.checkbox(
    "Include the last new-wave estimate", value=True, key="report_wave")
new_wave = wave if include_wave else None
st.text(f"{len(chosen)} model(s): {', '.join(map(model_display_name, chosen))} · plan: "
        + " → ".join(s.name for s in a.plan.plan))
if program is not None:
    st.caption(common.md_escape(
        f"With the tracker of the program {program.name}: {len({w.label for w in program.waves})} "
        "wave(s) in wave "
        f"order, every segment, estimated by {model_display_name(program.waves[0].model_id)}; "
        "the latest wave's estimate; and a slide deck for the CX team."))
stem = f"cx_report_{a.survey.source.filename.rsplit('.', 1)[0]}"
titles = {s.name: s.column for s in a.survey.schema.segments}
files = a.report_files(chosen, new_wave, program=program, segment_titles=titles)
if files is None and st.button("Build the reports", type="primary", key="build_reports"):
    with st.status("Building the reports (drivers, results, Excel, HTML)…") as status:
        try:
            files = a.report_files(chosen, new_wave, build=True, program=program,
                                   segment_titles=titles)
            status.update(label="Reports ready", state="complete")
        except CxAppError as exc:
            status.update(label="Reports failed", state="error")
            st.error(common.md_escape(exc))
if files is None:
    st.info("Press **Build the reports** (it takes a few seconds; nothing is retrained).")
    st.stop()


def download(where, label: str, kind: str, file_name: str, mime: str) -> None:
    """A download of ``files[kind]``; downloading a report of a program is an audit row. The
    bytes are handed over on the click only (a callable): the page holds no address of them,
    and the file made for the click is gone after the session's next runs (issue 33)."""
    name, data = lifecycle.program_name(), files[kind]
    waves = 0 if program is None else len({w.label for w in program.waves})
    record = None if name is None else (lambda: common.run_safely(
        lambda: common.workspace().record_report(name, kind, Path(file_name), data, waves)))
    where.download_button(common.md_escape(label), data=lambda: data, file_name=file_name, mime=mime, key=f"dl_{kind}",
                          on_click=record or "ignore")


c1, c2, c3 = st.columns(3)
OFFICE = "application/vnd.openxmlformats-officedocument."
download(c1, "Excel report (.xlsx)", "xlsx", f"{stem}.xlsx", OFFICE + "spreadsheetml.sheet")
download(c2, "HTML report", "html", f"{stem}.html", "text/html")
download(c3, "Results (JSON)", "json", f"{stem}_results.json", "application/json")
if "pptx" in files:
    download(st, "Slide deck (.pptx)", "pptx", f"{stem}.pptx",
             OFFICE + "presentationml.presentation")
if new_wave is not None:
    st.download_button("New-wave estimate (JSON)",
                       data=lambda: new_wave.to_json().encode("utf-8"),
                       file_name=f"{stem}_new_wave.json", mime="application/json",
                       key="dl_wave_json", on_click="ignore")
