"""The app's analysis as a project file and back (no streamlit import).

Nothing is retrained: the pages derive every view from the restored out-of-fold arrays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cx_app.app.program_link import adopt_model, same_respondents
from cx_app.app.session import Analysis
from cx_app.engine.plan import PlanSpec
from cx_app.errors import AnalysisError, CxAppError
from cx_app.project import (
    Project,
    ProjectFileError,
    project_bytes,
    read_project,
    survey_identity,
)
from cx_app.provenance import sha256_hex
from cx_app.survey.data import SurveyData

__all__ = ["OpenedProject", "open_analysis", "save_analysis"]


def save_analysis(analysis: Analysis, *, include_survey: bytes | None = None,
                  estimates: Sequence[Any] = (), settings: dict | None = None) -> bytes:
    """The ``.cxproj`` bytes of ``analysis`` with the results of the models that share the
    best one's folds; ``include_survey`` only when the user asked for it."""
    survey = analysis.survey
    if include_survey is not None and sha256_hex(include_survey) != survey.source.sha256:
        raise AnalysisError("the survey bytes given are not the survey of the analysis")
    models = []
    for m in analysis.models.values():
        final = analysis.finals.get(f"{m.key}:final")
        models.append(dataclasses.replace(m, settings=dict(m.settings), final=final, final_bytes=(
            None if final is None else analysis.final_model_bytes(m.model_id))))
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
    analysis: Analysis
    project: Project
    survey_bytes: bytes
    estimates: tuple  # WaveEstimateDocument, in the project's order
    sheet_choice: str | None = None  # for the Data page (None: the first matching sheet)


def open_analysis(data: bytes, *, name: str, survey_files: dict[str, bytes] | None = None,
                  memo_items: int = 256,
                  load_survey: Callable[..., SurveyData] | None = None) -> OpenedProject:
    """Open the project file ``data`` as an :class:`Analysis`; its survey from the project, else
    from ``survey_files`` (the session's uploads) by SHA-256. Every model must be of this
    survey's respondents."""
    from cx_app.estimate.document import WaveEstimateDocument

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
    for m in project.models:
        if not same_respondents(analysis, m):
            raise ProjectFileError(
                f"{name}: the model {m.model_id} was trained on other respondents than "
                f"{project.survey.describe()}: the project does not fit together.")
        adopt_model(analysis, m, m.model_id)
    try:
        analysis.resolved_plan()
    except CxAppError as exc:
        raise ProjectFileError(f"{name}: its plan does not fit its survey: {exc}") from None
    estimates = tuple(WaveEstimateDocument.from_dict(e) for e in project.estimates)
    return OpenedProject(analysis, project, survey_bytes, estimates, sheet_choice)
