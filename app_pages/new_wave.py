"""New wave: estimate the program's new survey waves without their scores — the tracker over
every wave (estimated and, for labelled waves, realized), by segment, and each wave's ALP
matrix, metrics, drift and predictions. Waves are kept in the workspace program."""

from __future__ import annotations

import streamlit as st

from app_pages import common, lifecycle, panels, wave_panels
from cx_app.models.algorithms import preset_label
from cx_app.models.names import model_display_name
from cx_app.survey.vocabulary import vocabulary

a = lifecycle.analysis()
st.title("New wave")
st.write("Estimate how well a model does on a new survey wave without its scores — estimated "
         "from the model's probabilities (ALP, see the Glossary page) — and the wave's net score "
         "with an interval. Waves are kept in the program, in wave order; a labelled wave shows "
         "its realized values beside the estimates.")

# --------------------------------------------------------------------------- the model
st.subheader("1. Model")
model, model_id = panels.model_source(a)
if model is None:
    st.stop()
for warning in model.load_warnings:
    st.warning(common.md_escape(warning))
st.text(f"Model: {model_display_name(preset_label(model.algorithm_id, model.preset))}, "
        f"calibration {model.calibration}, trained on "
        f"{model.training.n or '?'} respondents of {model.training.filename or '?'}")
panels.calibration_checks(model.cv)
SCORE = vocabulary(model.schema).title  # "NPS" only for an NPS (escaped where shown)

st.subheader("2. Waves")
if model_id is None:
    wave_panels.adhoc_waves(model)
    st.stop()
refused = lifecycle.denied("adding and estimating waves")  # team mode: a viewer only reads
name = lifecycle.program_name() if refused else lifecycle.ensure_program(a)
if refused:
    st.info(common.md_escape(refused))
if name is None:
    st.stop()
files = None if refused else st.file_uploader("Add waves to the program (.xlsx, .xls, .ods, .csv)",
                         type=common.SURVEY_TYPES, key="nw_wave_files",
                         accept_multiple_files=True,
                         help="The same file added twice is one wave. A file with a wave "
                              "column holding several waves gives one wave per value.")
label = None if refused else st.text_input(
    "Label of the wave to add (optional)", key="nw_label",
    help="For a single file: its label in the tracker (e.g. 2026-03 or W07; a date in it "
         "orders the waves). Otherwise the file's wave column or a wave or date in its file "
         "name labels it.")
audit = None if refused else st.file_uploader(
    "A few respondents of this wave with their answers (optional)",
    type=common.SURVEY_TYPES, key="nw_audit_file",
    help="An audit sample: respondents of the one wave you add who were asked the "
         "recommend question (or the wave file itself with some answers). The tracker then "
         "shows the audited score, which also sees changes the attributes cannot show "
         "(prediction-powered inference; respondents matched by their id).")
if not refused:
    wave_panels.add_waves(name, files, wave_panels.bundled_choice(a, name), label, audit)
not_kept = [] if refused else common.run_safely(
    lambda: common.workspace().estimate_waves(name, model_id)) or []
if not_kept:
    st.caption(common.md_escape(f"Not estimated by {model_display_name(model_id)}: "
                                f"{', '.join(not_kept)} (the "
                                "program does not keep these files; add them again)."))
view = common.run_safely(lambda: common.workspace().show(name, model=model_id))
if view is None or not view.waves:
    st.info(f"The program {common.md_escape(name)} has no wave yet: add the wave files to "
            "estimate (with or without the target question).")
    st.stop()
st.caption(f"Program {common.md_escape(name)}: {len(view.waves)} wave file(s), estimated by "
           f"{common.md_escape(model_display_name(model_id))}.")
segments = {s.name: s.column for s in model.schema.segments if s.role not in ("wave", "date")}
st.subheader(f"Tracker: estimated {common.md_escape(SCORE)} by wave")
wave_panels.tracker(view, SCORE, segments)
if not refused:
    wave_panels.remove_wave(name, view)

# --------------------------------------------------------------------------- one wave
st.subheader("3. Estimates of one wave")
shown = [f"{w.label} · {w.filename}" for w in view.waves]
chosen = st.selectbox("Details of wave", shown, index=len(shown) - 1, key="nw_detail")
wave = view.waves[shown.index(chosen)]
model_key = a.models[model_id].key
estimate = wave_panels.wave_estimate(a, name, model, model_key, wave)
st.session_state["last_wave_estimate"] = wave.estimate  # for the Report and Project pages
wave_panels.audit_summary(wave)
if estimate is None:
    nps = wave.estimated_nps
    st.text(f"Estimated {SCORE} {nps.value:+.1f} (95% interval {nps.ci95[0]:+.1f} to "
            f"{nps.ci95[1]:+.1f}); the program does not keep this wave's file, so its "
            "matrices and predictions cannot be shown.")
    st.stop()
wave_panels.details(estimate, SCORE, wave.filename or chosen, model.schema.plan_spec,
                    wave_panels.wave_key(name, model_key, wave))
