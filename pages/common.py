"""Shared page helpers: the analysis in session state, cached loading, tables with CSV download,
number formatting and error display. Not a page itself (the entry script lists the pages).

Streamlit caches: survey files are read once per content (``st.cache_resource`` keyed on the
bytes, file name, sheet and schema); cross-validation results live in one process-wide
:class:`cx_app.app.session.ResultStore` keyed on the survey's content key and the training recipe.
Per-user state (the :class:`cx_app.app.session.Analysis`, uploaded files, page choices) lives in
``st.session_state``.

Isolation on a shared server: everything process-wide is keyed by content, so a session only
gets back what it would compute itself from the very bytes it loaded, and nothing process-wide
is ever listed on a page (the models a user can pick are ``Analysis.models``, in session state).
Every cache is bounded: ``max_entries`` and a TTL on each ``st.cache_resource``, entries, bytes
and TTL on the store (:func:`cx_app.app.session.cache_limits`, ``CX_APP_*`` environment variables).
Cached objects are shared, not copied: pages treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from cx_app.app.file_memory import AnalysisShelf, MappingMemory
from cx_app.app.recovery import RecoveryStore, Snapshot
from cx_app.app.session import Analysis, ResultStore, cache_limits, survey_key
from cx_app.app.training import TrainingJob
from cx_app.errors import CxAppError
from cx_app.reports.definitions import column_help, column_label, survey_labels
from cx_app.safe_text import escape_markdown, to_safe_csv
from cx_app.survey.importing import SurveyData, load_survey, read_table, sheet_names
from cx_app.survey.schema import SurveySchema, load_schema, parse_schema
from cx_app.workspace.database import database_url
from cx_app.workspace.programs import Workspace

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "survey_schemas"
SAMPLE_NAME = "telecom_nps"
SAMPLE_SCHEMA = "telecom_nps.yaml"
ANALYSIS = "analysis"
UPLOADS = "uploads"  # {file name: bytes}, kept when the Data page's uploader is not on screen
INFER = "Infer from the data"
PROJECT_SCHEMA = "The opened or restored analysis' schema"  # a schema option, and its key
TOKEN = "recovery_token"  # this session's own token (server-issued), also in the address
OFFERED = "recovery_offered"  # the address' token whose snapshot is offered, until chosen
RECOVERY_STATE = (UPLOADS, "data_choice", "last_wave_estimate", PROJECT_SCHEMA)
"""Session-state entries a reload snapshot keeps beside the analysis."""
LIMITS = cache_limits()
TTL = LIMITS.ttl_seconds


def md_escape(text: object) -> str:
    """Survey text made literal inside Markdown (no link, image, HTML, emphasis, LaTeX or
    ``:color[...]`` directive): :func:`cx_app.safe_text.escape_markdown`. Every text a page
    shows through Markdown that is not a literal goes through it
    (``tests/security/test_page_text_escaping.py`` checks the pages)."""
    return escape_markdown(text)


# --------------------------------------------------------------------------- caches


@st.cache_resource(max_entries=1, show_spinner=False)
def result_store() -> ResultStore:
    """The process-wide store of cross-validation results (frozen, safe to share; bounded in
    entries, bytes and age by ``LIMITS``)."""
    return ResultStore.from_limits(LIMITS)


@st.cache_resource(max_entries=4, show_spinner=False)
def _workspace_at(url: str) -> Workspace:
    return Workspace.open(url)


def workspace() -> Workspace:
    """The workspace database of this server (``CX_APP_DATABASE_URL``, else the user's SQLite
    file): one engine per URL for the whole process, migrated when first opened."""
    return _workspace_at(database_url())


def bundled_schemas() -> dict[str, Path]:
    return {p.name: p for p in sorted(SCHEMA_DIR.glob("*.yaml"))}


@st.cache_resource(max_entries=8, ttl=TTL, show_spinner=False)
def schema_from_file(name: str) -> SurveySchema:
    return load_schema(bundled_schemas()[name])


@st.cache_resource(max_entries=8, ttl=TTL, show_spinner="Reading the survey file…")
def cached_survey(data: bytes, filename: str, sheet: str | None, schema_yaml: str | None,
                  require_target: bool = True, require_attributes: bool = True,
                  scoring: bool = False) -> SurveyData:
    """``load_survey`` once per (content, sheet, schema); the result is frozen and shared.
    A new wave scored by a saved model is read with both ``require_`` flags False and its
    attribute gaps kept (the model fills them with the training statistics)."""
    import yaml

    schema = None if schema_yaml is None else parse_schema(yaml.safe_load(schema_yaml))
    return load_survey(data, schema=schema, sheet=sheet, filename=filename,
                       require_target=require_target, require_attributes=require_attributes,
                       scoring=scoring)


@st.cache_resource(max_entries=8, ttl=TTL, show_spinner=False)
def cached_sheet_names(data: bytes, filename: str) -> list[str]:
    """The workbook's sheets, through the importer's size and archive checks, once per content."""
    return sheet_names(data, filename=filename)


@st.cache_resource(max_entries=8, ttl=TTL, show_spinner=False)
def cached_raw_table(data: bytes, filename: str, sheet: str | None) -> pd.DataFrame:
    return read_table(data, sheet=sheet, filename=filename)


@st.cache_resource(max_entries=4, ttl=TTL, show_spinner=False)
def sample_bytes(name: str) -> tuple[str, bytes]:
    from cx_app.survey.samples import sample_path

    path = sample_path(name)
    return path.name, path.read_bytes()


def new_analysis(survey: SurveyData) -> Analysis:
    return Analysis(survey=survey, data_key=survey.data_key, plan=survey.schema.plan_spec,
                    memo_items=LIMITS.memo_items)


def analysis() -> Analysis:
    """The user's analysis; on first use, the bundled sample survey with its schema."""
    if ANALYSIS not in st.session_state:
        filename, data = sample_bytes(SAMPLE_NAME)
        schema = schema_from_file(SAMPLE_SCHEMA)
        survey = cached_survey(data, filename, None, schema.to_yaml())
        st.session_state[ANALYSIS] = new_analysis(survey)
    if (job := collect_training()) is not None:  # ended while another page was on screen
        st.toast(md_escape(job.message))
    return st.session_state[ANALYSIS]


TRAINING = "training_job"  # the user's background training (cx_app.app.training.TrainingJob)
TRAINING_DONE = "training_done"  # a job that ended and handed its models over, to summarise


def collect_training() -> TrainingJob | None:
    """A background training that has ended hands its models to its analysis (once, in the
    page's thread) and is kept for the Models page's summary; returns it then."""
    job = st.session_state.get(TRAINING)
    if job is None or not job.finish():
        return None
    st.session_state[TRAINING_DONE] = job
    return job


def uploads() -> dict[str, bytes]:
    return st.session_state.setdefault(UPLOADS, {})


def mapping_memory() -> MappingMemory:
    """The user's column-mapping edits, per file (kept while other files are analysed)."""
    return st.session_state.setdefault("mapping_memory", MappingMemory())


def analysis_shelf() -> AnalysisShelf:
    """The user's analyses by data key: going back to a file brings back its models."""
    return st.session_state.setdefault("analysis_shelf", AnalysisShelf())


# --------------------------------------------------------------------------- display


def run_safely(action: Callable[[], Any], *, what: str | None = None) -> Any:
    """Run ``action``; a library error becomes a clear message on the page (and None)."""
    try:
        return action()
    except CxAppError as exc:
        text = str(exc)
        # library messages usually name the file already: do not name it twice
        st.error(md_escape(f"{what}: {text}" if what and not text.startswith(str(what))
                           else text))
        return None


def pct(value: float | None, digits: int = 1) -> str:
    if value is None or pd.isna(value):
        return "—"
    return f"{100 * value:.{digits}f}%"


def num(value: float | None, digits: int = 3) -> str:
    if value is None or pd.isna(value):
        return "—"
    return f"{value:.{digits}f}"


def table(frame: pd.DataFrame, *, key: str, file_name: str, hide_index: bool = True,
          column_config: dict | None = None, height: int | str = "auto",
          label: str = "Download CSV", csv_frame: pd.DataFrame | None = None) -> None:
    """A dataframe with its CSV download (formula-like survey text neutralised).

    ``csv_frame``: what to download when it differs from what is shown (e.g. rates as 0–1
    numbers while the page shows percentages)."""
    st.dataframe(frame, hide_index=hide_index, column_config=plain_config(frame, column_config),
                 height=height, key=f"df_{key}")
    out = frame if csv_frame is None else csv_frame  # the CSV keeps the data's column names
    data = to_safe_csv(out.reset_index() if not hide_index else out)
    st.download_button(md_escape(label), data=data, file_name=file_name, mime="text/csv",
                       key=f"dl_{key}", on_click="ignore")


def plain_config(frame: pd.DataFrame, column_config: dict | None = None) -> dict:
    """``column_config`` with each column's header in plain words (the survey's label of its
    columns, :func:`~cx_app.reports.definitions.column_label`) and a metric's meaning on
    hover; a header the caller gave stays."""
    labels = survey_labels(analysis().survey.schema)
    config = dict(column_config or {})
    for column in frame.columns:
        entry = config.get(column)
        if isinstance(column, str) and (entry is None or isinstance(entry, dict)):
            own = (entry or {}).get("label")
            config[column] = {**(entry or {}), "help": column_help(column),
                              "label": own if own and own != column
                              else str(column_label(column, labels))}
    return config


def percent_columns(columns: list[str], digits: int = 1) -> dict:
    """``column_config`` showing 0–1 rates as percentages."""
    return {c: st.column_config.NumberColumn(c, format=f"%.{digits}f%%") for c in columns}


def scale_percent(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Rates (0–1) × 100 for display with a ``%`` format."""
    out = frame.copy()
    for c in columns:
        if c in out:
            out[c] = pd.to_numeric(out[c], errors="coerce") * 100
    return out


def survey_caption(a: Analysis) -> None:
    src = a.survey.source
    sheet = f", sheet {src.sheet}" if src.sheet else ""
    st.caption(f"Data: {md_escape(src.filename)}{md_escape(sheet)} · "
               f"{a.survey.quality.rows_used:,} respondents · schema {md_escape(a.survey.schema.name)}")


def need_models(a: Analysis) -> bool:
    """True (and a hint on the page) when no model is trained yet."""
    if a.models:
        return False
    st.info("No model is trained yet: train one or more on the Models page first.")
    st.page_link("pages/models.py", label="Go to Models")
    return True


# --------------------------------------------------------------------------- reload recovery


@st.cache_resource(max_entries=1, show_spinner=False)
def recovery_store() -> RecoveryStore:
    """The process-wide reload snapshots (bounded like the result store; it issues the tokens)."""
    return RecoveryStore(LIMITS)


def _restore(token: str) -> None:
    snapshot = recovery_store().restore(token)  # a copy: nothing shared with where it came from
    _dismiss()
    if snapshot is None:  # forgotten since it was offered (bounds, age)
        return
    for key, value in snapshot.state.items():
        st.session_state[key] = value
    # the Data page offers the analysis' own schema, so that it keeps the analysis
    st.session_state[PROJECT_SCHEMA] = snapshot.analysis.survey.schema
    choice = dict(snapshot.state.get("data_choice") or {})
    st.session_state["data_choice"] = {"file": None, "sheet": None, **choice,
                                       "schema": PROJECT_SCHEMA}
    st.session_state[ANALYSIS] = snapshot.analysis
    st.session_state.pop("survey_file", None)  # the Data page's file box: the restored file


def _dismiss() -> None:
    st.session_state.pop(OFFERED, None)


def recovery_offer() -> None:
    """Run by the entry script before the page: give the session a token of its own (never
    the one in the address: fixation) and keep it in the address; after a reload, offer the
    snapshot named by the address' token until the user chooses (the address keeps that token
    meanwhile, so another reload offers it again). The buttons act through callbacks, which
    run before whichever script runs next."""
    store = recovery_store()
    if TOKEN not in st.session_state:  # the session's first run
        st.session_state[TOKEN] = store.issue()
        address = st.query_params.get("session")
        if store.get(address) is not None:  # a reload (or another tab's address)
            st.session_state[OFFERED] = address
    offered = st.session_state.get(OFFERED)
    snapshot = None if offered is None else store.get(offered)
    if snapshot is None:
        _dismiss()
    shown = st.session_state[TOKEN] if snapshot is None else offered
    if st.query_params.get("session") != shown:  # also after a page switch cleared it
        st.query_params["session"] = shown
    if snapshot is not None:
        st.info(f"The page was reloaded. Your analysis from before is kept: "
                f"{md_escape(snapshot.describe())}.")
        restore, fresh = st.columns(2)
        restore.button("Restore it", type="primary", key="recovery_restore",
                       on_click=_restore, args=(offered,))
        fresh.button("Start afresh", key="recovery_dismiss", on_click=_dismiss)


def save_snapshot() -> None:
    """Keep a copy of the session's analysis under its own token, once the user has chosen
    whether to restore an earlier one. Run by the entry script at the end of every script run,
    after the page's change (an upload on the Data page swaps the analysis)."""
    token = st.session_state.get(TOKEN)
    if token and OFFERED not in st.session_state and ANALYSIS in st.session_state:
        recovery_store().save(token, Snapshot(st.session_state[ANALYSIS], {
            k: st.session_state[k] for k in RECOVERY_STATE if k in st.session_state}))


def switch_to(fresh: Analysis, filename: str) -> None:
    """Make ``fresh`` (the file and mapping now chosen) the session's analysis unless it already
    is: the analysis it replaces is shelved with its models, and one shelved earlier for the
    same file and mapping comes back with its models (nothing retrained)."""
    analysis = st.session_state.get(ANALYSIS)
    if analysis is None or analysis.data_key != fresh.data_key:
        shelf = analysis_shelf()
        if analysis is not None:
            shelf.resume(analysis)  # kept with its models for when the user comes back
            if analysis.models:
                st.info(f"The {len(analysis.models)} model(s) trained on "
                        f"{md_escape(analysis.survey.source.filename)} are kept: they come "
                        "back when you return to that file and mapping.")
        st.session_state[ANALYSIS] = analysis = shelf.resume(fresh)
        if analysis is not fresh and analysis.models:
            st.success(f"Back to {md_escape(filename)}: its {len(analysis.models)} trained "
                       "model(s) and results are here again (nothing retrained).")


def warnings(texts: list[str] | tuple[str, ...]) -> None:
    """Each text as a warning (markdown escaped)."""
    for text in texts:
        st.warning(md_escape(text))
