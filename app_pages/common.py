"""Shared page helpers: session-state keys, cached loading, tables with CSV download, number
formatting and error display. Not a page itself (the entry script lists the pages). The
analysis and its workspace program: :mod:`app_pages.lifecycle`; the address:
:mod:`app_pages.routing`.

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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
import yaml

from app_pages import team_mode
from cx_app.app.file_memory import MappingMemory
from cx_app.app.session import Analysis, ResultStore
from cx_app.app.store import cache_limits
from cx_app.errors import CxAppError
from cx_app.models.names import model_display_name
from cx_app.reports.definitions import column_help, survey_labels
from cx_app.safe_text import escape_markdown, to_safe_csv
from cx_app.survey.importing import SurveyData, load_survey, read_table, sheet_names
from cx_app.survey.reading import CSV_SUFFIXES, EXCEL_SUFFIXES, STAT_SUFFIXES
from cx_app.survey.schema import SurveySchema, load_schema, parse_schema
from cx_app.workspace.audit import LOCAL_APP_USER
from cx_app.workspace.database import Database, database_url
from cx_app.workspace.programs import Workspace

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "survey_schemas"
SAMPLE_NAME = "telecom_nps"
SAMPLE_SCHEMA = "telecom_nps.yaml"
SURVEY_TYPES = [s.lstrip(".") for s in (*EXCEL_SUFFIXES, *CSV_SUFFIXES, *STAT_SUFFIXES)]
"""What every survey uploader takes: what the reader reads (a survey and its waves alike)."""
ANALYSIS = "analysis"
UPLOADS = "uploads"  # {file name: bytes}, kept when the Data page's uploader is not on screen
INFER = "Infer from the data"
PROJECT_SCHEMA = "The opened or restored analysis' schema"  # a schema option, and its key
PROGRAM = "program"  # the workspace program of the analysis (its name), also in the address
KEEP_FILES = "keep_files"  # whether new programs keep their files (the Project page)
PLAN_KEPT = "plan_kept"  # (program, plan key) last written to the workspace
WORKSPACE_URL = "workspace_url"  # the session's workspace database (fixed when it starts)
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


@st.cache_resource(max_entries=4, ttl=TTL, show_spinner=False)
def _workspace_at(url: str) -> Workspace:
    return Workspace.open(url, user=LOCAL_APP_USER)


def workspace() -> Workspace:
    """The workspace database of this server (``CX_APP_DATABASE_URL``, else the user's SQLite
    file, read when the session starts): one engine per URL for the whole process, migrated
    when first opened. It acts for the local user, or in team mode for the signed-in person
    within their teams' rights (:mod:`app_pages.team_mode`)."""
    shared = _workspace_at(st.session_state.setdefault(WORKSPACE_URL, database_url()))
    teams = team_mode.teams()
    return shared if teams is None else shared.for_user(team_mode.current_user(), teams,
                                                        sign_in=team_mode.current_sign_in())


def workspace_database() -> Database:
    """The server's workspace database (team mode binds sign-ins in it)."""
    return _workspace_at(st.session_state.setdefault(WORKSPACE_URL, database_url())).database


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


def uploads() -> dict[str, bytes]:
    return st.session_state.setdefault(UPLOADS, {})


def mapping_memory() -> MappingMemory:
    """The user's column-mapping edits, per file (kept while other files are analysed)."""
    return st.session_state.setdefault("mapping_memory", MappingMemory())


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
          label: str = "Download CSV", csv_frame: pd.DataFrame | None = None,
          headers: Mapping[str, str] | None = None) -> None:
    """A dataframe with its CSV download (formula-like survey text neutralised).

    ``csv_frame``: what to download when it differs from what is shown (e.g. rates as 0–1
    numbers while the page shows percentages). A ``model`` column shows the models' names in
    words (:func:`~cx_app.models.names.model_display_name`); the CSV keeps their ids.
    ``headers``: this table's own header of each of its columns (issue 37: no shared map
    decides a header). A missing text value is shown as "—", never "None"."""
    out = frame if csv_frame is None else csv_frame  # the CSV keeps the data's column names
    if "model" in frame.columns and frame["model"].map(type).eq(str).all():
        frame = frame.assign(model=frame["model"].map(model_display_name))
    frame = frame.apply(lambda c: c.astype(object).where(c.notna(), "—")
                        if c.dtype == object else c)
    column_config = dict(column_config or {})
    for column, header in (headers or {}).items():
        if column in frame.columns:
            entry = column_config.get(column)
            column_config[column] = {**(entry if isinstance(entry, dict) else {}),
                                     "label": header}
    st.dataframe(frame, hide_index=hide_index, column_config=plain_config(frame, column_config),
                 height=height, key=f"df_{key}")
    data = out.reset_index() if not hide_index else out  # the CSV made when it is asked for
    st.download_button(md_escape(label), data=lambda: to_safe_csv(data), file_name=file_name,
                       mime="text/csv", key=f"dl_{key}", on_click="ignore")


def plain_config(frame: pd.DataFrame, column_config: dict | None = None) -> dict:
    """``column_config`` with each column's header: the one its table declared (``headers`` or
    a column's label), else the survey's label of one of its own columns, else the column's
    name as the table built it; a metric's meaning on hover. No shared map decides a header."""
    a = st.session_state.get(ANALYSIS)  # the pages open it (lifecycle.analysis) first
    labels = {} if a is None else survey_labels(a.survey.schema)
    config = dict(column_config or {})
    for column in frame.columns:
        entry = config.get(column)
        if isinstance(column, str) and (entry is None or isinstance(entry, dict)):
            own = (entry or {}).get("label")
            config[column] = {**(entry or {}), "help": column_help(column),
                              "label": own or labels.get(column, column)}
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
    if (st.session_state.get(PROGRAM) is None and not st.session_state.get("landing_hidden")
            and src.filename == sample_bytes(SAMPLE_NAME)[0]
            and (programs := run_safely(workspace().list_programs))):
        st.info(f"This page shows the bundled sample survey, not one of your {len(programs)} "
                "program(s) in this workspace: open one on the Data page.")  # a returning analyst
        st.page_link("app_pages/data.py", label="Your programs")


def need_models(a: Analysis) -> bool:
    """True (and a hint on the page) when no model is trained yet."""
    if a.models:
        return False
    st.info("No model is trained yet: train one or more on the Models page first.")
    st.page_link("app_pages/models.py", label="Go to Models")
    return True


def warnings(texts: list[str] | tuple[str, ...]) -> None:
    """Each text as a warning (markdown escaped)."""
    for text in texts:
        st.warning(md_escape(text))
