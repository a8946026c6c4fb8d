"""The program lifecycle of the app's analysis: its workspace program created when something of
it is first stored (a model, a fitted model, a wave), reopened from the workspace, kept in step
with the analysis (mapping, models) and left when deleted; who may change it in team mode.
Not a page itself. The address that names the program: :mod:`app_pages.routing`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
import yaml

from app_pages import common, team_mode
from cx_app.app.program_link import add_stored_models, reopened_analysis
from cx_app.app.session import Analysis
from cx_app.app.training import TrainingJob
from cx_app.app.views import mapping_change
from cx_app.errors import AccessDenied, CxAppError
from cx_app.survey.schema import parse_schema
from cx_app.workspace.analyses import AnalysisStore
from cx_app.workspace.teams import Action
from cx_app.workspace.views import ProgramView

CONFIRMED = "mapping_confirmed"  # the data key of a model-changing mapping the analyst accepted


def analysis() -> Analysis:
    """The user's analysis; on first use, the bundled sample survey with its schema."""
    if common.ANALYSIS not in st.session_state:
        filename, data = common.sample_bytes(common.SAMPLE_NAME)
        schema = common.schema_from_file(common.SAMPLE_SCHEMA)
        survey = common.cached_survey(data, filename, None, schema.to_yaml())
        switch_to(common.new_analysis(survey), filename)  # with the sample program's models
    if (job := collect_training()) is not None:  # ended while another page was on screen
        st.toast(common.md_escape(job.message))
    return st.session_state[common.ANALYSIS]


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
    if done and st.session_state.get(common.ANALYSIS) is a:  # the job's own models (on_model
        store = keep_model(ensure_program(a), a)  # has stored them already, unless it failed)
        for model in done:
            common.run_safely(lambda model=model: store(model))
    return True


def analysis_store() -> AnalysisStore:
    """The app's analyses in the server's workspace."""
    return AnalysisStore(common.workspace())


def program_name() -> str | None:
    """The workspace program of the session's analysis (None until it has one)."""
    return st.session_state.get(common.PROGRAM)


def keep_files() -> bool:
    """Whether new programs keep their survey and wave files (the Project page's choice)."""
    return bool(st.session_state.get(common.KEEP_FILES, True))


def survey_file_bytes(a: Analysis) -> bytes | None:
    """The bytes of the analysis' survey file (an upload of this session, or the sample)."""
    data = common.uploads().get(a.survey.source.filename)
    if data is None:
        filename, sample = common.sample_bytes(common.SAMPLE_NAME)
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
        st.session_state[common.PROGRAM] = name
        keep = keep_model(name, a)  # models the analysis has already (e.g. a project opened)
        for model in list(a.models.values()):
            common.run_safely(lambda model=model: keep(model))
            final = a.finals.get(f"{model.key}:final")
            if final is not None:
                common.run_safely(lambda model=model, final=final: store.store_final(
                    name, model.key, final))
    return name


def reopen(name: str) -> Analysis | None:
    """The analysis of the program ``name`` (from the address), or None (with a note)."""
    try:
        program = analysis_store().reopen(name)
    except CxAppError as exc:
        st.warning(common.md_escape(f"The address names a program that cannot be opened: {exc}"))
        return None
    if program.data is None:
        st.warning(common.md_escape(
            f"The program {name} does not keep its survey file: upload {program.filename} on "
            "the Data page and its models come back with it."))
        return None
    schema = parse_schema(yaml.safe_load(program.schema_yaml))
    filename = program.filename or "survey"
    try:
        survey = common.cached_survey(program.data, filename, program.sheet, schema.to_yaml())
    except CxAppError as exc:
        st.warning(common.md_escape(f"The program {name}'s survey cannot be read again: {exc}"))
        return None
    if filename != common.sample_bytes(common.SAMPLE_NAME)[0]:
        common.uploads()[filename] = program.data
    st.session_state[common.PROJECT_SCHEMA] = schema
    st.session_state["data_choice"] = {
        "file": None if filename == common.sample_bytes(common.SAMPLE_NAME)[0] else filename,
        "sheet": program.sheet, "schema": common.PROJECT_SCHEMA}
    st.session_state.pop("survey_file", None)  # the Data page's file picker follows the choice
    st.session_state[common.PROGRAM] = name
    return reopened_analysis(program, survey, memo_items=common.LIMITS.memo_items)


def program_view(model_ids: list[str]) -> ProgramView | None:
    """The analysis' program with its waves as estimated by the first of ``model_ids`` that
    estimated any (None: no program, or no wave estimated by these models)."""
    name = program_name()
    if name is None:
        return None
    a = st.session_state[common.ANALYSIS]
    for model_id in model_ids:
        if a.finals.get(f"{a.models[model_id].key}:final") is None:
            continue  # not fitted on all respondents: it estimated no wave
        try:
            view = common.workspace().show(name, model=model_id)
        except CxAppError:
            continue
        if view.waves:
            return view
    return None


def open_program(name: str) -> bool:
    """Make the program ``name`` the session's analysis (the Project page's "Open")."""
    reopened = reopen(name)
    if reopened is None:
        return False
    st.session_state[common.ANALYSIS] = reopened
    return True


def forget_program() -> None:
    """The session leaves its program (deleted): the next run starts on the bundled sample."""
    for key in (common.ANALYSIS, common.PROGRAM, common.PLAN_KEPT, "data_choice", TRAINING,
                TRAINING_DONE):
        st.session_state.pop(key, None)
    st.query_params.pop("program", None)


def keep_model(name: str, a: Analysis) -> Callable[[Any], None]:
    """What a training job calls (in its thread) for each model as it is trained: store it
    in the program at once."""
    store, data_key, n = analysis_store(), a.data_key, len(a.survey.y)
    return lambda model: store.store_model(name, model, data_key=data_key, respondents=n)


def remove_model(a: Analysis, model_id: str) -> None:
    """Remove a model from the analysis and from its program (it does not come back)."""
    model = a.models.pop(model_id, None)
    if model is not None and (name := program_name()) is not None:
        common.run_safely(lambda: analysis_store().remove_model(name, model.key))


def keep_final(a: Analysis, model_id: str, model: Any) -> None:
    """Store a model just fitted on all respondents in the analysis' program."""
    if (refused := denied("keeping a model in the program")) is not None:
        st.caption(common.md_escape(f"Not kept in the workspace: {refused}"))
        return
    name = ensure_program(a)
    common.run_safely(lambda: analysis_store().store_final(name, a.models[model_id].key, model))


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
    current = st.session_state.get(common.ANALYSIS)
    change = invalidating_change(current, fresh)
    if not change:
        return
    st.warning(common.md_escape(
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
    current = st.session_state.get(common.ANALYSIS)
    if current is not None and current.data_key == fresh.data_key:
        if current.survey.schema != fresh.survey.schema:  # a display edit: models stay
            current.adopt_survey(fresh.survey)
            if (name := program_name()) is not None:
                common.run_safely(lambda: analysis_store().set_mapping(name, fresh.survey))
        return
    source = fresh.survey.source
    same_file = current is not None and current.survey.source.sha256 == source.sha256
    name = (program_name() if same_file else
            analysis_store().find_program(source.sha256, source.sheet, source.filename))
    st.session_state[common.PROGRAM] = name
    st.session_state[common.ANALYSIS] = fresh
    if name is None:
        return
    common.run_safely(lambda: analysis_store().set_mapping(name, fresh.survey))
    back = common.run_safely(lambda: add_stored_models(
        fresh, analysis_store().models_of(name, fresh.data_key))) or 0
    if back:
        st.success(f"{common.md_escape(filename)}: {common.md_escape(back)} model(s) trained "
                   "earlier on this file and mapping are here again (nothing retrained).")
