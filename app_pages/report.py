"""Report: the Excel and HTML reports and the JSON results of this session's analysis, built
from the cached results (nothing is retrained)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from cx_app.errors import CxAppError
from cx_app.models.names import model_display_name

LAST_WAVE = "last_wave_estimate"  # set by the New wave page

a = common.analysis()
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
program = common.program_view(chosen)  # the program's waves, when it has some
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
c1, c2, c3 = st.columns(3)
c1.download_button("Excel report (.xlsx)", data=files["xlsx"], file_name=f"{stem}.xlsx",
                   key="dl_xlsx", on_click="ignore",
                   mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
c2.download_button("HTML report", data=files["html"], file_name=f"{stem}.html",
                   mime="text/html", key="dl_html", on_click="ignore")
c3.download_button("Results (JSON)", data=files["json"], file_name=f"{stem}_results.json",
                   mime="application/json", key="dl_json", on_click="ignore")
if "pptx" in files:
    st.download_button("Slide deck (.pptx)", data=files["pptx"], file_name=f"{stem}.pptx",
                       key="dl_pptx", on_click="ignore", mime="application/vnd.openxmlformats-"
                       "officedocument.presentationml.presentation")
if new_wave is not None:
    st.download_button("New-wave estimate (JSON)",
                       data=new_wave.to_json().encode("utf-8"),
                       file_name=f"{stem}_new_wave.json", mime="application/json",
                       key="dl_wave_json", on_click="ignore")
