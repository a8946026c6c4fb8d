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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
import yaml

from app_pages import team_mode
from cx_app.app.file_memory import MappingMemory
from cx_app.app.program_link import add_stored_models, reopened_analysis
from cx_app.app.session import Analysis, ResultStore, cache_limits
from cx_app.app.training import TrainingJob
from cx_app.app.views import mapping_change
from cx_app.errors import AccessDenied, CxAppError
from cx_app.models.names import model_display_name
from cx_app.reports.definitions import column_help, survey_labels
from cx_app.safe_text import escape_markdown, to_safe_csv
from cx_app.survey.importing import SurveyData, load_survey, read_table, sheet_names
from cx_app.survey.schema import SurveySchema, load_schema, parse_schema
from cx_app.workspace.analyses import AnalysisStore
from cx_app.workspace.audit import LOCAL_APP_USER
from cx_app.workspace.database import Database, database_url
from cx_app.workspace.programs import Workspace
from cx_app.workspace.teams import Action
from cx_app.workspace.views import ProgramView

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "survey_schemas"
SAMPLE_NAME = "telecom_nps"
SAMPLE_SCHEMA = "telecom_nps.yaml"
ANALYSIS = "analysis"
UPLOADS = "uploads"  # {file name: bytes}, kept when the Data page's uploader is not on screen
INFER = "Infer from the data"
PROJECT_SCHEMA = "The opened or restored analysis' schema"  # a schema option, and its key
PROGRAM = "program"  # the workspace program of the analysis (its name), also in the address
KEEP_FILES = "keep_files"  # whether new programs keep their files (the Project page)
ADDRESS_READ = "address_read"  # the address' program was looked at (once per session)
PLAN_KEPT = "plan_kept"  # (program, plan key) last written to the workspace
CONFIRMED = "mapping_confirmed"  # the data key of a model-changing mapping the analyst accepted
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
        switch_to(new_analysis(survey), filename)  # with the sample program's models, if any
    if (job := collect_training()) is not None:  # ended while another page was on screen
        st.toast(md_escape(job.message))
    return st.session_state[ANALYSIS]


TRAINING = "training_job"  # the user's background training (cx_app.app.training.TrainingJob)
TRAINING_DONE = "training_done"  # a job that ended and handed its models over, to summarise


def collect_training() -> TrainingJob | None:
    """A background training that has ended hands its models to its analysis (once, in the
    page's thread) and is kept for the Models page's summary; returns it then."""
    job = st.session_state.get(TRAINING)
    if job is None or not hand_over(job):
        return None
    st.session_state[TRAINING_DONE] = job
    return job


def hand_over(job: TrainingJob) -> bool:
    """Give the analysis the models of an ended job (:meth:`TrainingJob.finish`) and keep
    them in its program (each once, by training key); True when this call handed them over."""
    if not job.finish():
        return False
    a = job.analysis
    done = [a.models[e.label] for e in job.events if e.label in a.models]
    if done and st.session_state.get(ANALYSIS) is a:  # the job's own models (on_model has
        store = keep_model(ensure_program(a), a)  # stored them already, unless it failed)
        for model in done:
            run_safely(lambda model=model: store(model))
    return True


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
    labels = survey_labels(analysis().survey.schema)
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


def need_models(a: Analysis) -> bool:
    """True (and a hint on the page) when no model is trained yet."""
    if a.models:
        return False
    st.info("No model is trained yet: train one or more on the Models page first.")
    st.page_link("app_pages/models.py", label="Go to Models")
    return True


# --------------------------------------------------------------------------- the program


def analysis_store() -> AnalysisStore:
    """The app's analyses in the server's workspace."""
    return AnalysisStore(workspace())


def program_name() -> str | None:
    """The workspace program of the session's analysis (None until it has one)."""
    return st.session_state.get(PROGRAM)


def keep_files() -> bool:
    """Whether new programs keep their survey and wave files (the Project page's choice)."""
    return bool(st.session_state.get(KEEP_FILES, True))


def survey_file_bytes(a: Analysis) -> bytes | None:
    """The bytes of the analysis' survey file (an upload of this session, or the sample)."""
    data = uploads().get(a.survey.source.filename)
    if data is None:
        filename, sample = sample_bytes(SAMPLE_NAME)
        data = sample if filename == a.survey.source.filename else None
    return data


def denied(doing: str, action: Action = Action.ANALYSE) -> str | None:
    """Why the person may not do ``action`` (``doing``, in words) with the session's analysis,
    in one sentence; None when they may (always in local mode). An analysis with no program
    yet needs the role in a team of theirs where they may create one."""
    found = team_mode.teams()
    if found is None:
        return None
    user, name = team_mode.current_user(), program_name()
    if name is None:
        teams = team_mode.analyst_teams() if action is Action.ANALYSE else found.teams_of(user)
        team = teams[0] if teams else next(iter(found.teams_of(user)), None)
    else:
        try:
            team = analysis_store().team_of(name)
        except CxAppError as exc:
            return str(exc)
    try:
        found.require(user, team, action, doing=doing)
    except AccessDenied as exc:
        return str(exc)
    return None


def ensure_program(a: Analysis) -> str:
    """The analysis' program, created (named after its file) the first time something of it
    is stored: a trained model, a fitted model, a wave."""
    name = program_name()
    if name is None:
        store = analysis_store()
        name = store.program_for(a.survey, survey_file_bytes(a), keep_files=keep_files(),
                                 team=team_mode.new_program_team())
        st.session_state[PROGRAM] = name
        keep = keep_model(name, a)  # models the analysis has already (e.g. a project opened)
        for model in list(a.models.values()):
            run_safely(lambda model=model: keep(model))
            final = a.finals.get(f"{model.key}:final")
            if final is not None:
                run_safely(lambda model=model, final=final: store.store_final(
                    name, model.key, final))
    return name


def _reopen(name: str) -> Analysis | None:
    """The analysis of the program ``name`` (from the address), or None (with a note)."""
    try:
        program = analysis_store().reopen(name)
    except CxAppError as exc:
        st.warning(md_escape(f"The address names a program that cannot be opened: {exc}"))
        return None
    if program.data is None:
        st.warning(md_escape(
            f"The program {name} does not keep its survey file: upload {program.filename} on "
            "the Data page and its models come back with it."))
        return None
    schema = parse_schema(yaml.safe_load(program.schema_yaml))
    filename = program.filename or "survey"
    try:
        survey = cached_survey(program.data, filename, program.sheet, schema.to_yaml())
    except CxAppError as exc:
        st.warning(md_escape(f"The program {name}'s survey cannot be read again: {exc}"))
        return None
    if filename != sample_bytes(SAMPLE_NAME)[0]:
        uploads()[filename] = program.data
    st.session_state[PROJECT_SCHEMA] = schema
    st.session_state["data_choice"] = {
        "file": None if filename == sample_bytes(SAMPLE_NAME)[0] else filename,
        "sheet": program.sheet, "schema": PROJECT_SCHEMA}
    st.session_state[PROGRAM] = name
    return reopened_analysis(program, survey, memo_items=LIMITS.memo_items)


def program_view(model_ids: list[str]) -> ProgramView | None:
    """The analysis' program with its waves as estimated by the first of ``model_ids`` that
    estimated any (None: no program, or no wave estimated by these models)."""
    name = program_name()
    if name is None:
        return None
    a = st.session_state[ANALYSIS]
    for model_id in model_ids:
        if a.finals.get(f"{a.models[model_id].key}:final") is None:
            continue  # not fitted on all respondents: it estimated no wave
        try:
            view = workspace().show(name, model=model_id)
        except CxAppError:
            continue
        if view.waves:
            return view
    return None


def open_program(name: str) -> bool:
    """Make the program ``name`` the session's analysis (the Project page's "Open")."""
    reopened = _reopen(name)
    if reopened is None:
        return False
    st.session_state[ANALYSIS] = reopened
    return True


def forget_program() -> None:
    """The session leaves its program (deleted): the next run starts on the bundled sample."""
    for key in (ANALYSIS, PROGRAM, PLAN_KEPT, "data_choice", TRAINING, TRAINING_DONE):
        st.session_state.pop(key, None)
    st.query_params.pop("program", None)


def follow_address() -> None:
    """Run by the entry script before the page: a session opened on an address naming a
    program (a reload, a second tab, a restarted server) reopens it from the workspace."""
    if ANALYSIS in st.session_state or st.session_state.get(ADDRESS_READ):
        return
    st.session_state[ADDRESS_READ] = True
    name = st.query_params.get("program")
    if name:
        reopened = _reopen(str(name))
        if reopened is not None:
            st.session_state[ANALYSIS] = reopened


def keep_in_address() -> None:
    """Run by the entry script after the page: the address names the session's program (so
    a reload reopens it) and the program keeps the plan in use."""
    name = program_name()
    if name is None:
        return
    if st.query_params.get("program") != name:
        st.query_params["program"] = name
    a = st.session_state.get(ANALYSIS)
    if a is not None and st.session_state.get(PLAN_KEPT) != (name, a.plan_key):
        if denied("keeping the grouping in the program") is None:  # a viewer's stays here
            run_safely(lambda: analysis_store().set_plan(name, a.plan.model_dump(mode="json")))
        st.session_state[PLAN_KEPT] = (name, a.plan_key)


def keep_model(name: str, a: Analysis) -> Callable[[Any], None]:
    """What a training job calls (in its thread) for each model as it is trained: store it
    in the program at once."""
    store, data_key, n = analysis_store(), a.data_key, len(a.survey.y)
    return lambda model: store.store_model(name, model, data_key=data_key, respondents=n)


def remove_model(a: Analysis, model_id: str) -> None:
    """Remove a model from the analysis and from its program (it does not come back)."""
    model = a.models.pop(model_id, None)
    if model is not None and (name := program_name()) is not None:
        run_safely(lambda: analysis_store().remove_model(name, model.key))


def keep_final(a: Analysis, model_id: str, model: Any) -> None:
    """Store a model just fitted on all respondents in the analysis' program."""
    if (refused := denied("keeping a model in the program")) is not None:
        st.caption(md_escape(f"Not kept in the workspace: {refused}"))
        return
    name = ensure_program(a)
    run_safely(lambda: analysis_store().store_final(name, a.models[model_id].key, model))


def invalidating_change(current: Analysis | None, fresh: Analysis) -> str:
    """What the analyst must confirm before ``fresh`` replaces ``current``: a new mapping of
    the same file that the trained models do not fit (target, attributes, scales, gap
    policy), in words; "" when nothing needs confirming."""
    if (current is None or not current.models or current.data_key == fresh.data_key
            or st.session_state.get(CONFIRMED) == fresh.data_key):
        return ""
    old, new = current.survey.source, fresh.survey.source
    if (old.sha256, old.sheet, old.filename) != (new.sha256, new.sheet, new.filename):
        return ""  # another file: its own program, nothing is lost
    return mapping_change(current.survey.schema, fresh.survey.schema) or "its data"


def confirm_new_mapping(fresh: Analysis, undo: Callable[[], None], editor_prefix: str) -> None:
    """Before a mapping the trained models do not fit replaces the analysis: say so, and
    offer to use it or undo it (``undo`` puts the analysis' mapping back in the editor's
    memory; the editor's widgets, keys starting with ``editor_prefix``, start again). The
    page stops until the analyst chooses; the models stay in the program either way."""
    current = st.session_state.get(ANALYSIS)
    change = invalidating_change(current, fresh)
    if not change:
        return
    st.warning(md_escape(
        f"This mapping changes what the models see ({change}), so the "
        f"{len(current.models)} trained model(s) do not apply to it. They stay in the "
        f"program {program_name() or ''} and come back when you return to the previous "
        "mapping."))
    apply, back = st.columns(2)
    if apply.button("Use the new mapping", type="primary", key="mapping_confirm"):
        st.session_state[CONFIRMED] = fresh.data_key
        st.rerun()
    if back.button("Undo the change", key="mapping_undo"):
        undo()
        for key in [k for k in st.session_state if str(k).startswith(editor_prefix)]:
            del st.session_state[key]
        st.rerun()
    st.stop()


def switch_to(fresh: Analysis, filename: str) -> None:
    """Make ``fresh`` (the file and mapping now chosen) the session's analysis unless it
    already is. A new label or colour (same data key) keeps the models; another file or
    mapping brings back the models its program holds for it (nothing retrained)."""
    current = st.session_state.get(ANALYSIS)
    if current is not None and current.data_key == fresh.data_key:
        if current.survey.schema != fresh.survey.schema:  # a display edit: models stay
            current.adopt_survey(fresh.survey)
            if (name := program_name()) is not None:
                run_safely(lambda: analysis_store().set_mapping(name, fresh.survey))
        return
    source = fresh.survey.source
    same_file = current is not None and current.survey.source.sha256 == source.sha256
    name = (program_name() if same_file else
            analysis_store().find_program(source.sha256, source.sheet, source.filename))
    st.session_state[PROGRAM] = name
    st.session_state[ANALYSIS] = fresh
    if name is None:
        return
    run_safely(lambda: analysis_store().set_mapping(name, fresh.survey))
    back = run_safely(lambda: add_stored_models(
        fresh, analysis_store().models_of(name, fresh.data_key))) or 0
    if back:
        st.success(f"{md_escape(filename)}: {md_escape(back)} model(s) trained earlier on this file and "
                   "mapping are here again (nothing retrained).")


def warnings(texts: list[str] | tuple[str, ...]) -> None:
    """Each text as a warning (markdown escaped)."""
    for text in texts:
        st.warning(md_escape(text))
