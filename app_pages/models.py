"""Models: choose algorithms and settings, cross-validate them (with progress), and compare
them on every level of the reduction plan."""

from __future__ import annotations

import streamlit as st

from app_pages import common, job_queue, lifecycle, panels
from cx_app.app import views
from cx_app.app.training import TrainingJob
from cx_app.models import cluster
from cx_app.models.algorithms import ALGORITHMS, PRESETS, get_algorithm
from cx_app.models.crossval import CALIBRATIONS
from cx_app.models.names import model_display_name, names_in_text
from cx_app.reports.definitions import explain, plain_name
from cx_app.workspace import fits
from cx_app.workspace.database import Database

a = lifecycle.analysis()
st.title("Models")
common.survey_caption(a)
st.write("Each algorithm is cross-validated once: its out-of-fold predictions and class "
         "probabilities are kept, and every matrix, grouping, ROC and test is derived from them.")


@st.cache_resource(max_entries=1)
def dask_clients() -> cluster.SharedClient:
    """The server process's Dask client, shared by its sessions."""
    return cluster.SharedClient()


address = cluster.scheduler_address()  # CX_APP_DASK_SCHEDULER; unset: local, dask not imported
client = None
if address:
    with st.spinner("Connecting to the Dask cluster…"):
        client = common.run_safely(lambda: dask_clients().get(address), what="Dask cluster")
if client is not None:
    st.caption(common.md_escape(cluster.cluster_info(client).describe()))

names = {k: f"{spec.name} ({k})" for k, spec in ALGORITHMS.items()}
chosen = st.multiselect("Algorithms", list(ALGORITHMS), default=["lr", "nb"],
                        format_func=names.get, key="algorithms", persist_state="session")
c1, c2, c3 = st.columns(3)
folds = int(c1.number_input("Folds", min_value=2, max_value=20, value=10, step=1, key="folds",
                            persist_state="session",
                            help=common.md_escape(explain("Cross-validation folds"))))
seed = int(c2.number_input("Seed", min_value=0, value=0, step=1, key="seed",
                           persist_state="session"))
calibration = c3.selectbox("Probability calibration", CALIBRATIONS, key="calibration",
                           persist_state="session",
                           help="Calibrated probabilities make the ALP estimates on a new wave "
                                "trustworthy (NB, RF and boosted trees usually need it).")

preset = st.radio("Preset", PRESETS, horizontal=True, key="preset", persist_state="session",
                  format_func=lambda p: plain_name(p) + (" (default)" if p == "fast" else ""),
                  help="fast: the same models with a faster solver or stopping rule (linear "
                       "SVM by liblinear, the MLP stopped early, trees on every free core, the "
                       "CNN for 30 epochs), measured as accurate as the papers' settings; as in "
                       "the papers: exactly the papers' settings (the model's name says so).")

settings: dict[str, dict] = {}
for algorithm_id in chosen:
    spec = get_algorithm(algorithm_id, preset)
    with st.expander(common.md_escape(f"{spec.name}: settings ({preset} preset)")):
        st.caption(common.md_escape(spec.description))
        settings[algorithm_id] = {n: panels.setting_input(algorithm_id, n, v, preset)
                                  for n, v in spec.defaults.items()}

rows, attributes = a.survey.quality.rows_used, len(a.survey.schema.attributes)
database = common.run_safely(lambda: common.workspace().database, what="Workspace")
chosen_settings = {k: settings[k] for k in chosen}


def expected(db: Database | None) -> fits.ExpectedTimes:  # db None: the constants
    return fits.expected_times(db, chosen_settings, preset=preset, respondents=rows,
                               attributes=attributes, folds=folds, calibration=calibration)


times = common.run_safely(lambda: expected(database), what="Expected time") or expected(None)
job = st.session_state.get(lifecycle.TRAINING)
b1, b2 = st.columns([1, 3], vertical_alignment="center")
refused = lifecycle.denied("training")  # team mode: a viewer may not train
clicked = b1.button("Train and cross-validate", type="primary", key="train",
                    disabled=not chosen or (job is not None and job.running) or bool(refused)
                    or (address is not None and client is None))
b2.caption(common.md_escape(refused or (names_in_text(times.sentence(), chosen) if chosen
                                        else "Choose at least one algorithm.")))
if clicked and not refused and not (job is not None and job.running):
    job = st.session_state[lifecycle.TRAINING] = job_queue.start(TrainingJob(
        a, chosen_settings, folds=folds, seed=seed, calibration=calibration,
        store=common.result_store(), preset=preset, expected=times.phases,
        around=(lambda: cluster.on_cluster(client)) if client is not None else None,
        record_fit=fits.fit_recorder(database) if database is not None else None,
        on_model=lifecycle.keep_model(lifecycle.ensure_program(a), a)))
ended = st.session_state.pop(lifecycle.TRAINING_DONE, None)  # handed over while off this page
if job is not None and (job.running or not job.handed_over or ended is job):
    panels.training_progress(job)  # returns when the job has ended
    panels.training_summary(job)

if not a.models:
    st.info("Choose algorithms and press **Train and cross-validate**.")
    st.stop()

st.subheader("Trained models")
recipes, advice = views.trained_models_table(a)
gap_columns = list(views.GAP_COLUMNS)
common.table(common.scale_percent(recipes, gap_columns), key="recipes", file_name="models.csv",
             csv_frame=recipes, headers=views.TRAINED_MODEL_HEADERS,
             column_config={"fit seconds": st.column_config.NumberColumn(format="%.2f"),
                            "respondents": st.column_config.NumberColumn(format="localized"),
                            **{c: st.column_config.NumberColumn(
                                c, format="%+.1f%%" if c == gap_columns[0] else "%.1f%%",
                                help=explain("Held-out calibration gap")) for c in gap_columns},
                            "Net score gap (points)": st.column_config.NumberColumn(
                                format="%+.1f", help="Estimated − actual net score on the "
                                "held-out folds")})
for text in advice:
    st.warning(common.md_escape(text))
remove = [] if refused else st.multiselect("Remove models from the analysis", list(a.models),
                                           key="remove_models", format_func=model_display_name)
if remove and st.button("Remove", key="remove"):
    for model_id in remove:
        lifecycle.remove_model(a, model_id)
    st.rerun()
resolved = common.run_safely(a.resolved_plan, what="Reduction plan")
if resolved is None:
    st.stop()

st.subheader("Leaderboard")
level_names = ["original", *(s.name for s in resolved.steps)]
tabs = st.tabs([common.md_escape(f"{n} ({len(resolved.level_labels(i))} classes)" if i == 0
                                  else n) for i, n in enumerate(level_names)])
for i, tab in enumerate(tabs):
    with tab:
        board = views.leaderboard(a, i)
        if i > 0 and resolved.steps[i - 1].positive:
            st.caption("Positive group: "
                       f"{common.md_escape(plain_name(resolved.steps[i - 1].positive))}")
        config = {c: st.column_config.NumberColumn(c, format="%.1f%%" if c in
                                                   board.percent_columns else "%.3f")
                  for c in (*board.percent_columns, *board.number_columns)}
        common.table(common.scale_percent(board.frame, list(board.percent_columns)),
                     key=f"board_{i}", file_name=f"leaderboard_{level_names[i]}.csv",
                     column_config=config, csv_frame=board.frame, headers={"model": "Model"})
        if (note := views.baseline_note(a, i)) is not None:
            (st.warning if note[1] else st.caption)(common.md_escape(note[0]))
st.caption("Best model first (mean accuracy over the folds). Rates in percent; MCC −1 to 1.")
