"""New wave: apply a model to a wave without labels — the ALP matrix, estimated metrics and NPS
with interval, drift warnings, realized values when the wave is labeled, predictions download."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from cx_app.errors import CxAppError
from cx_app.estimate.tracker import split_waves, track_waves, tracker_frame
from cx_app.reports import charts
from cx_app.reports.definitions import ALP, explain
from cx_app.safe_text import to_safe_csv
from cx_app.survey.vocabulary import vocabulary
from pages import common, panels

WAVES = {
    "Bundled wave 7 (unlabeled)": "telecom_nps_wave7_unlabeled",
    "Bundled wave 7 (labeled, for a backtest)": "telecom_nps_wave7_labeled",
}

a = common.analysis()
st.title("New wave")
st.write("Estimate how well a model does on a new survey wave without its scores — estimated "
         "from the model's probabilities (ALP, see the Glossary page) — and the wave's net score "
         "with an interval. With a labeled wave, the realized values are shown beside the "
         "estimates.")

# --------------------------------------------------------------------------- the model
st.subheader("1. Model")
model = panels.model_source(a)
if model is None:
    st.stop()
for warning in model.load_warnings:
    st.warning(common.md_escape(warning))
st.text(f"Model: {model.algorithm_id}, calibration {model.calibration}, trained on "
        f"{model.training.n or '?'} respondents of {model.training.filename or '?'}")


panels.calibration_checks(model.cv)

# --------------------------------------------------------------------------- the waves
st.subheader("2. Waves")
waves_seen: dict[str, bytes] = st.session_state.setdefault("nw_wave_bytes", {})
new_files = st.file_uploader("Upload one or more waves (.xlsx, .xls, .ods, .csv)",
                             type=["xlsx", "xlsm", "xls", "ods", "csv"], key="nw_wave_files",
                             accept_multiple_files=True)
for f in new_files or []:
    waves_seen[f.name] = f.getvalue()
sample = a.survey.source.filename == common.sample_bytes(common.SAMPLE_NAME)[0]
options = [*(WAVES if sample else {}), *waves_seen]  # bundled waves only for the sample
if not options:
    st.info("Upload the wave(s) to estimate: files with the same questions as the training "
            "survey, with or without the target question.")
    st.stop()
uploaded = [f.name for f in new_files or []]
if uploaded and st.session_state.get("nw_last_upload") != uploaded:
    st.session_state["nw_last_upload"] = uploaded  # a fresh upload is what gets estimated
    st.session_state["nw_waves"] = uploaded
if not set(st.session_state.get("nw_waves") or []) <= set(options):
    st.session_state.pop("nw_waves")
chosen = st.multiselect("Waves to estimate (in time order)", options, key="nw_waves",
                        default=None if "nw_waves" in st.session_state else [options[0]],
                        persist_state="session")  # kept across page switches
if not chosen:
    st.info("Choose at least one wave.")
    st.stop()
segments = [s for s in model.schema.segments if s.role != "date"]
by = st.selectbox("Estimate each value of a segment too", [None, *segments],
                  format_func=lambda s: "no" if s is None else s.column, key="nw_by",
                  persist_state="session")


def read_wave(name: str):
    filename, data = (common.sample_bytes(WAVES[name]) if name in WAVES
                      else (name, waves_seen[name]))
    return common.cached_survey(data, filename, None, model.schema_yaml, require_target=False,
                                require_attributes=False, scoring=True)


try:
    # a file with a wave column holding several waves: one point per wave
    wave_surveys = [part for name in chosen for part in split_waves(read_wave(name))]
    tracked = track_waves(model, wave_surveys, by=None if by is None else by.name)
except CxAppError as exc:
    st.error(common.md_escape(exc))
    st.stop()
covers = tracked[0].estimate.estimated_nps.covers
SCORE = common.md_escape(vocabulary(model.schema).title)  # "NPS" only for an NPS
if len(tracked) > 1 or by is not None:
    st.subheader(f"Tracker: estimated {SCORE} by wave")
    table = tracker_frame(tracked)
    shown = table.dropna(subset=["nps"])
    st.altair_chart(charts.nps_trend_chart(shown, wave_title="Wave", score_title=SCORE),
                    width="stretch")
    st.caption(f"Estimated from the model's probabilities (ALP). 95% intervals cover "
               f"{common.md_escape(covers)}. "
               "▲ / ▼: a significant change from the previous wave of the same line (z test "
               "on the two estimates with their whole uncertainty, Holm-adjusted over the "
               f"{int(table['p'].notna().sum())} changes, 5%). n per wave and segment in the "
               "table.")
    common.table(table.round(2), key="nw_tracker", file_name="tracker.csv")
files = [t.file for t in tracked]
detail = st.selectbox("Details of wave", files, index=len(files) - 1, key="nw_detail")
estimate = tracked[files.index(detail)].estimate
filename = tracked[files.index(detail)].file

# --------------------------------------------------------------------------- results
st.session_state["last_wave_estimate"] = common.run_safely(estimate.document)  # for the Report
st.subheader("3. Estimates")
common.warnings(estimate.warnings)
nps = estimate.estimated_nps
c1, c2, c3 = st.columns(3)
c1.metric(f"Estimated {SCORE}", f"{nps.value:+.1f}",
          help=f"95% interval {nps.ci95[0]:+.1f} to {nps.ci95[1]:+.1f}: it covers "
               f"{common.md_escape(nps.covers)}")
c2.metric("Estimated accuracy", common.pct(estimate.estimated["accuracy"]),
          help=common.md_escape(explain(ALP)))
c3.metric("Respondents", f"{estimate.n:,}")
st.text(f"Estimated {SCORE} {nps.value:+.1f} (95% interval {nps.ci95[0]:+.1f} to "
        f"{nps.ci95[1]:+.1f})")
for alert in estimate.alerts:  # estimated accuracy and net score against their limits
    (st.warning if alert.alert else st.caption)(common.md_escape(alert.sentence()))
if estimate.realized_nps is not None:
    r = estimate.realized_nps
    st.text(f"Realized {SCORE} {r.value:+.1f} (95% interval {r.ci95[0]:+.1f} to {r.ci95[1]:+.1f}); "
            f"realized accuracy {common.pct(estimate.realized['accuracy'])}")

metrics = pd.DataFrame(estimate.metric_comparison()).rename(
    columns={"estimated": "estimated (ALP)"})
value_columns = [c for c in metrics.columns if c not in ("level", "metric")]
common.table(common.scale_percent(metrics, value_columns), key="nw_metrics",
             file_name="wave_metrics.csv", csv_frame=metrics,
             column_config={c: st.column_config.NumberColumn(c, format="%.1f%%")
                            for c in value_columns})

panels.alp_matrices(estimate, model.schema.plan_spec)

st.subheader("Drift against the training data")
common.table(estimate.drift.to_frame(), key="nw_drift", file_name="wave_drift.csv")

st.subheader("Per-respondent predictions")
predictions = estimate.predictions_frame()
st.dataframe(predictions.head(200), hide_index=True, key="df_predictions",
             column_config=common.plain_config(predictions))
st.download_button("Download all predictions (CSV)", data=to_safe_csv(predictions),
                   file_name=f"predictions_{Path(filename).stem}.csv", mime="text/csv",
                   key="dl_predictions", on_click="ignore")
