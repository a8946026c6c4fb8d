"""Models: choose algorithms and settings, cross-validate them (with progress), and compare
them on every level of the reduction plan."""

from __future__ import annotations

from typing import Any

import streamlit as st

from cx_app.app import views
from cx_app.models.algorithms import ALGORITHMS, PRESETS, get_algorithm
from cx_app.models.crossval import CALIBRATIONS
from pages import common

a = common.analysis()
st.title("Models")
common.survey_caption(a)
st.write("Each algorithm is cross-validated once: its out-of-fold predictions and class "
         "probabilities are kept, and every matrix, grouping, ROC and test is derived from them.")


def setting_input(algorithm_id: str, name: str, default: Any, preset: str) -> Any:
    key = f"set::{preset}::{algorithm_id}::{name}"
    if isinstance(default, bool):
        return st.checkbox(name, value=default, key=key)
    if isinstance(default, int):
        return int(st.number_input(name, value=default, step=1, key=key))
    if isinstance(default, float):
        return float(st.number_input(name, value=default, format="%g", key=key))
    if isinstance(default, str):
        return st.text_input(name, value=default, key=key)
    text = st.text_input(f"{name} (YAML)", value=views.setting_text(default), key=key)
    try:
        return views.parse_setting(text, default)
    except ValueError as exc:
        st.error(f"{name}: {exc}")
        return default


names = {k: f"{spec.name} ({k})" for k, spec in ALGORITHMS.items()}
chosen = st.multiselect("Algorithms", list(ALGORITHMS), default=["lr", "nb"],
                        format_func=names.get, key="algorithms")
c1, c2, c3 = st.columns(3)
folds = int(c1.number_input("Folds", min_value=2, max_value=20, value=10, step=1, key="folds"))
seed = int(c2.number_input("Seed", min_value=0, value=0, step=1, key="seed"))
calibration = c3.selectbox("Probability calibration", CALIBRATIONS, key="calibration",
                           help="Calibrated probabilities make the ALP estimates on a new wave "
                                "trustworthy (NB, RF and boosted trees usually need it).")

preset = st.radio("Preset", PRESETS, horizontal=True, key="preset",
                  format_func={"fast": "fast (default)", "papers": "papers"}.get,
                  help="fast: the same models with a faster solver or stopping rule (linear "
                       "SVM by liblinear, the MLP stopped early, trees on every free core, "
                       "the CNN for 30 epochs), measured as accurate as the papers' settings "
                       "(bench/RESULTS.md); papers: exactly the papers' settings. Models of "
                       "the papers preset are labelled with it (svm papers), so both can be "
                       "compared.")

settings: dict[str, dict] = {}
for algorithm_id in chosen:
    spec = get_algorithm(algorithm_id, preset)
    with st.expander(f"{spec.name}: settings ({preset} preset)"):
        st.caption(spec.description)
        settings[algorithm_id] = {n: setting_input(algorithm_id, n, v, preset)
                                  for n, v in spec.defaults.items()}

if st.button("Train and cross-validate", type="primary", disabled=not chosen, key="train"):
    status = st.status(f"Cross-validating {len(chosen)} model(s), {folds} folds each…",
                       expanded=True)
    bar = status.progress(0.0, text="starting")

    def show(event) -> None:
        (status.error if event.status == "failed" else status.write)(event.message)
        for warning in event.warnings:
            status.warning(warning)

    events = a.train({k: settings[k] for k in chosen}, folds=folds, seed=seed,
                     calibration=calibration, store=common.result_store(), preset=preset,
                     progress=lambda share, text: bar.progress(share, text=text), on_event=show)
    failed = any(e.status == "failed" for e in events)
    status.update(label="Training finished" + (" with errors" if failed else ""),
                  state="error" if failed else "complete", expanded=failed)

if not a.models:
    st.info("Choose algorithms and press **Train and cross-validate**.")
    st.stop()

st.subheader("Trained models")
recipes, advice = views.trained_models_table(a)
gap_columns = list(views.GAP_COLUMNS)
common.table(common.scale_percent(recipes, gap_columns), key="recipes", file_name="models.csv",
             csv_frame=recipes,
             column_config={"fit seconds": st.column_config.NumberColumn(format="%.2f"),
                            "respondents": st.column_config.NumberColumn(format="localized"),
                            **{c: st.column_config.NumberColumn(
                                c, format="%+.1f%%" if c.startswith("ALP") else "%.1f%%",
                                help="Held-out calibration gap: how far the ALP estimate of a "
                                "new wave would be from the truth, measured on the "
                                "cross-validation folds") for c in gap_columns},
                            "NPS gap (points)": st.column_config.NumberColumn(
                                format="%+.1f", help="Estimated − actual NPS on the held-out "
                                "folds")})
for text in advice:
    st.warning(common.md_escape(text))
remove = st.multiselect("Remove models from the analysis", list(a.models), key="remove_models")
if remove and st.button("Remove", key="remove"):
    for model_id in remove:
        a.models.pop(model_id, None)
    st.rerun()

resolved = common.run_safely(a.resolved_plan, what="Reduction plan")
if resolved is None:
    st.stop()


st.subheader("Leaderboard")
level_names = ["original", *(s.name for s in resolved.steps)]
tabs = st.tabs([f"{n} ({len(resolved.level_labels(i))} classes)" if i == 0 else n
                for i, n in enumerate(level_names)])
for i, tab in enumerate(tabs):
    with tab:
        board = views.leaderboard(a, i)
        if i > 0 and resolved.steps[i - 1].positive:
            st.caption(f"Positive group: {common.md_escape(resolved.steps[i - 1].positive)}")
        config = {c: st.column_config.NumberColumn(c, format="%.1f%%")
                  for c in board.percent_columns}
        config.update({c: st.column_config.NumberColumn(c, format="%.3f")
                       for c in board.number_columns})
        common.table(common.scale_percent(board.frame, list(board.percent_columns)),
                     key=f"board_{i}", file_name=f"leaderboard_{level_names[i]}.csv",
                     column_config=config, csv_frame=board.frame)
st.caption("Best model first (mean accuracy over the folds). Rates in percent; MCC from −1 "
           "to 1. Definitions: Confusion matrices page.")
