"""Report: the Excel and HTML reports and the JSON results of this session's analysis, built
from the cached results (nothing is retrained)."""

from __future__ import annotations

import json

import streamlit as st

from cx_app.drivers import driver_importance
from cx_app.errors import CxAppError
from cx_app.reports import build_report, excel_bytes, render_html
from pages import common

LAST_WAVE = "last_wave_estimate"  # set by the New wave page

a = common.analysis()
st.title("Report")
common.survey_caption(a)
if common.need_models(a):
    st.stop()

attribute_max = {attr.name: attr.scale.max for attr in a.survey.schema.attributes}
best = max(a.models, key=lambda m: a.evaluation(m).mean("original", "accuracy"))


def drivers():
    return driver_importance(a.survey.X, a.survey.y, a.classes, cv_results=[a.models[best].cv],
                             resolved_plan=a.resolved_plan(), attribute_max=attribute_max,
                             n_repeats=3)


with st.spinner("Collecting the results…"):
    try:
        driver_result = a.derived(("report_drivers", a.models[best].key, a.plan_key), drivers)
        results = a.results_document(driver_result, permutation_model=best)
    except CxAppError as exc:
        st.error(str(exc))
        st.stop()

wave = st.session_state.get(LAST_WAVE)
include_wave = wave is not None and st.checkbox(
    "Include the last new-wave estimate", value=True, key="report_wave")
new_wave = wave if include_wave else None
st.write(f"{len(a.models)} model(s): {', '.join(a.models)} · plan: "
         + " → ".join(s.name for s in a.plan.plan))
stem = f"cx_report_{a.survey.source.filename.rsplit('.', 1)[0]}"
try:
    report = build_report(results, new_wave, source_name=a.survey.source.filename)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Excel report (.xlsx)", data=excel_bytes(report),
                       file_name=f"{stem}.xlsx", key="dl_xlsx", on_click="ignore",
                       mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    c2.download_button("HTML report", data=render_html(report).encode("utf-8"),
                       file_name=f"{stem}.html", mime="text/html", key="dl_html",
                       on_click="ignore")
except CxAppError as exc:
    st.error(str(exc))
    c3 = st.columns(3)[2]
c3.download_button("Results (JSON)", data=json.dumps(results, indent=1, default=str),
                   file_name=f"{stem}_results.json", mime="application/json", key="dl_json",
                   on_click="ignore")
if new_wave is not None:
    st.download_button("New-wave estimate (JSON)", data=json.dumps(new_wave, indent=1,
                                                                   default=str),
                       file_name=f"{stem}_new_wave.json", mime="application/json",
                       key="dl_wave_json", on_click="ignore")
with st.expander("What the results contain"):
    st.json({k: (list(v) if isinstance(v, dict) else v) for k, v in results.items()
             if k in ("dataset", "folds", "seed", "models", "comparison_method")},
            expanded=False)
