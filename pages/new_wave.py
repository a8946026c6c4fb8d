"""New wave: apply a model to a wave without labels — the ALP matrix, estimated metrics and NPS
with interval, drift warnings, realized values when the wave is labeled, predictions download."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from cx_app.errors import CxAppError
from cx_app.estimate.model_file import load_model
from cx_app.estimate.new_wave import estimate_wave
from cx_app.reports import charts
from cx_app.safe_text import to_safe_csv
from pages import common, panels

WAVES = {
    "Bundled wave 7 (unlabeled)": "telecom_nps_wave7_unlabeled",
    "Bundled wave 7 (labeled, for a backtest)": "telecom_nps_wave7_labeled",
}

a = common.analysis()
st.title("New wave")
st.write("Estimate how well a model does on a new survey wave without its scores (ALP "
         "confusion matrix), and the wave's NPS with an interval. With a labeled wave, the "
         "realized values are shown beside the estimates.")

# --------------------------------------------------------------------------- the model
st.subheader("1. Model")
source = st.radio("Model source", ["Trained in this session", "Saved model file (.skops)"],
                  horizontal=True, key="nw_model_source")
model = None
if source == "Trained in this session":
    if common.need_models(a):
        st.stop()
    model_id = st.selectbox("Model", list(a.models), key="nw_model")
    model = a.final_model(model_id, common.result_store())
    if model is None:
        st.info("The cross-validated model is fitted once more on all respondents to score new "
                "waves (probability calibration as chosen on the Models page; its "
                "cross-validation is reused, not run again).")
        if st.button("Fit on all respondents", type="primary", key="nw_fit"):
            bar = st.progress(0.0, text="fitting")

            def progress(done: int, total: int, message: str) -> None:
                bar.progress(min(1.0, done / max(total, 1)), text=message)

            model = common.run_safely(lambda: a.final_model(
                model_id, common.result_store(), fit=True, progress=progress))
            if model is None:
                st.stop()
            bar.progress(1.0, text="done")
    if model is not None:
        st.download_button("Download the model file (.skops)",
                           data=a.final_model_bytes(model_id),
                           file_name=f"{a.models[model_id].algorithm_id}.skops",
                           mime="application/octet-stream", key="dl_model", on_click="ignore")
else:
    upload = st.file_uploader("Model file", type=["skops"], key="nw_model_file")
    if upload is not None:  # read from the upload's bytes: nothing is written to disk
        model = common.run_safely(lambda: load_model(upload.getvalue(),
                                                     name=Path(upload.name).name))
if model is None:
    st.stop()
for warning in model.load_warnings:
    st.warning(common.md_escape(warning))
st.text(f"Model: {model.algorithm_id}, calibration {model.calibration}, trained on "
        f"{model.training.get('n', '?')} respondents of {model.training.get('filename', '?')}")


panels.calibration_checks(dict(model.cv or {}))

# --------------------------------------------------------------------------- the wave
st.subheader("2. Wave")
uploads = common.uploads()
wave_upload = st.file_uploader("Upload a wave (.xlsx, .xls, .ods, .csv)",
                               type=["xlsx", "xlsm", "xls", "ods", "csv"], key="nw_wave_file")
if wave_upload is not None:
    uploads[wave_upload.name] = wave_upload.getvalue()
options = [*WAVES, *uploads]
default = options.index(wave_upload.name) if wave_upload is not None else 0
wave_name = st.selectbox("Wave", options, index=default, key="nw_wave")
if wave_name in WAVES:
    filename, data = common.sample_bytes(WAVES[wave_name])
else:
    filename, data = wave_name, uploads[wave_name]
try:
    wave = common.cached_survey(data, filename, None, model.schema_yaml, require_target=False,
                                require_attributes=False, scoring=True)
    estimate = estimate_wave(model, wave)
except CxAppError as exc:
    st.error(str(exc))
    st.stop()

# --------------------------------------------------------------------------- results
st.session_state["last_wave_estimate"] = common.run_safely(estimate.document)  # for the Report
st.subheader("3. Estimates")
for warning in estimate.warnings:
    st.warning(common.md_escape(warning))
nps = estimate.estimated_nps
c1, c2, c3 = st.columns(3)
c1.metric("Estimated NPS", f"{nps.value:+.1f}",
          help=f"95% interval {nps.ci95[0]:+.1f} to {nps.ci95[1]:+.1f} (sampling and model "
               "uncertainty combined)")
c2.metric("Estimated accuracy", common.pct(estimate.estimated["accuracy"]))
c3.metric("Respondents", f"{estimate.n:,}")
st.text(f"Estimated NPS {nps.value:+.1f} (95% interval {nps.ci95[0]:+.1f} to "
        f"{nps.ci95[1]:+.1f})")
if estimate.realized_nps is not None:
    r = estimate.realized_nps
    st.text(f"Realized NPS {r.value:+.1f} (95% interval {r.ci95[0]:+.1f} to {r.ci95[1]:+.1f}); "
            f"realized accuracy {common.pct(estimate.realized['accuracy'])}")

metrics = pd.DataFrame(estimate.metric_comparison()).rename(
    columns={"estimated": "estimated (ALP)"})
value_columns = [c for c in metrics.columns if c not in ("level", "metric")]
common.table(common.scale_percent(metrics, value_columns), key="nw_metrics",
             file_name="wave_metrics.csv", csv_frame=metrics,
             column_config={c: st.column_config.NumberColumn(c, format="%.1f%%")
                            for c in value_columns})

st.subheader("ALP confusion matrix")
st.caption("Rows: estimated actual class (summed probabilities) · columns: predicted class. "
           "Real-valued counts; no labels needed.")
original, *reduced = estimate.levels
st.altair_chart(charts.confusion_heatmap(original.to_frame(), count_format=",.1f",
                                         title="ALP matrix, original classes"), width="content")
for level in reduced:
    st.altair_chart(charts.confusion_heatmap(level.to_frame(), count_format=",.1f",
                                             title=f"ALP {level.name}"), width="content")

st.subheader("Drift against the training data")
common.table(estimate.drift.to_frame(), key="nw_drift", file_name="wave_drift.csv")

st.subheader("Per-respondent predictions")
predictions = estimate.predictions_frame()
st.dataframe(predictions.head(200), hide_index=True, key="df_predictions")
st.download_button("Download all predictions (CSV)",
                   data=to_safe_csv(predictions),
                   file_name=f"predictions_{Path(filename).stem}.csv", mime="text/csv",
                   key="dl_predictions", on_click="ignore")
