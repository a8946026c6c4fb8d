"""The app's analysis as a project file and back (no streamlit import).

:func:`save_analysis` turns a session's :class:`cx_app.app.session.Analysis` (survey identity,
mapping, plan in use, cross-validated models with their permutation importance, fitted final
models) and its last new-wave estimate into the bytes of a ``.cxproj`` file
(:mod:`cx_app.project`). :func:`open_analysis` gives back an :class:`Analysis` from such a file
without retraining anything: the pages then derive every matrix, ROC, test and driver view from
the restored out-of-fold arrays, as after a training.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cx_app.app.session import Analysis, CrossValidatedModel
from cx_app.errors import AnalysisError, CxAppError
from cx_app.project import (
    Project,
    ProjectFileError,
    ProjectModel,
    project_bytes,
    read_project,
    survey_identity,
)
from cx_app.survey.data import SurveyData

__all__ = ["OpenedProject", "open_analysis", "save_analysis"]


def save_analysis(analysis: Analysis, *, include_survey: bytes | None = None,
                  estimates: Sequence[Any] = (), settings: dict | None = None) -> bytes:
    """The ``.cxproj`` bytes of ``analysis``: every trained model (its out-of-fold arrays,
    permutation importance and final model when fitted), the plan in use, the results of the
    models that share the best one's folds, and ``estimates`` (typed estimate documents).
    ``include_survey``: the survey file's bytes, only when the user asked for them."""
    survey = analysis.survey
    if include_survey is not None:
        from cx_app.provenance import sha256_hex

        if sha256_hex(include_survey) != survey.source.sha256:
            raise AnalysisError("the survey bytes given are not the survey of the analysis")
    models = []
    for m in analysis.models.values():
        final = analysis.finals.get(f"{m.key}:final")
        models.append(ProjectModel(model_id=m.model_id, algorithm_id=m.algorithm_id,
                                   settings=dict(m.settings), folds=m.folds, seed=m.seed,
                                   key=m.key, cv=m.cv, permutation=m.permutation, final=final,
                                   final_bytes=(None if final is None else
                                                analysis.final_model_bytes(m.model_id))))
    results = None
    if analysis.models:
        results = analysis.report_document(
            analysis.comparable_models(analysis.best_model())).to_json()
    return project_bytes(Project(
        schema_yaml=survey.schema.to_yaml(), plan=analysis.plan.model_dump(mode="json"),
        survey=survey_identity(survey), models=tuple(models), survey_bytes=include_survey,
        estimates=tuple(e.to_dict() for e in estimates), results=results,
        settings=dict(settings or {})))


@dataclass(frozen=True, eq=False)
class OpenedProject:
    """A project opened for the app: the restored analysis and what the pages need besides."""

    analysis: Analysis
    project: Project
    survey_bytes: bytes
    estimates: tuple  # WaveEstimateDocument, in the project's order
    sheet_choice: str | None = None
    """The sheet to choose on the Data page (None: the first sheet matching the schema)."""


def open_analysis(data: bytes, *, name: str, survey_files: dict[str, bytes] | None = None,
                  memo_items: int = 256,
                  load_survey: Callable[..., SurveyData] | None = None) -> OpenedProject:
    """Open the project file ``data`` (named ``name``) as an :class:`Analysis`.

    The survey comes from the project when it holds it, else from ``survey_files`` (the
    session's uploads, the bundled sample: {file name: bytes}) by its SHA-256; without it,
    :class:`ProjectFileError` says which file to load first. Every model must be of this
    survey's respondents. Nothing is retrained. ``load_survey``: the reader to use (the app's
    cached one; default :func:`cx_app.survey.importing.load_survey`)."""
    from cx_app.engine.plan import PlanSpec
    from cx_app.estimate.document import WaveEstimateDocument
    from cx_app.provenance import sha256_hex

    project = read_project(data, name=name)
    survey_bytes = project.survey_bytes
    if survey_bytes is None:
        survey_bytes = next((b for b in (survey_files or {}).values()
                             if sha256_hex(b) == project.survey.sha256), None)
    if survey_bytes is None:
        raise ProjectFileError(
            f"{name} does not include its survey: load {project.survey.describe()} on the Data "
            "page first, then open the project again.")
    schema = project.schema
    if load_survey is None:
        from cx_app.survey.importing import load_survey
    try:
        # the sheet as first chosen when that gives the same one (the data-quality notes say
        # how the sheet was found); else the recorded sheet by name
        sheet_choice = None
        survey = load_survey(survey_bytes, schema=schema, sheet=None,
                             filename=project.survey.filename)
        if survey.source.sheet != project.survey.sheet:
            sheet_choice = project.survey.sheet
            survey = load_survey(survey_bytes, schema=schema, sheet=project.survey.sheet,
                                 filename=project.survey.filename)
    except CxAppError as exc:
        raise ProjectFileError(f"{name}: its survey cannot be read with its schema: {exc}") from None
    analysis = Analysis(survey=survey, data_key=survey.data_key,
                        plan=PlanSpec.model_validate(project.plan), memo_items=memo_items)
    import numpy as np

    for m in project.models:
        if m.cv.n != len(survey.y) or not np.array_equal(np.asarray(m.cv.y_true),
                                                         np.asarray(survey.y)):
            raise ProjectFileError(
                f"{name}: the model {m.model_id} was trained on other respondents than "
                f"{project.survey.describe()}: the project does not fit together.")
        analysis.add_model(CrossValidatedModel(m.model_id, m.algorithm_id, dict(m.settings),
                                               m.folds, m.seed, m.cv, m.key, m.permutation))
        analysis.trained_keys.add(m.key)
        if m.final is not None:
            analysis.finals[f"{m.key}:final"] = m.final
    try:
        analysis.resolved_plan()
    except CxAppError as exc:
        raise ProjectFileError(f"{name}: its plan does not fit its survey: {exc}") from None
    estimates = tuple(WaveEstimateDocument.from_dict(e) for e in project.estimates)
    return OpenedProject(analysis, project, survey_bytes, estimates, sheet_choice)
