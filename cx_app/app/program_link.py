"""The session's analysis and its workspace program: models in and out, without retraining.

Stored models (:class:`cx_app.project.ProjectModel`, of a program or a project file) become the
session's models. No streamlit import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cx_app.app.session import Analysis, CrossValidatedModel
from cx_app.engine.plan import PlanSpec
from cx_app.errors import CxAppError

if TYPE_CHECKING:
    from cx_app.project import ProjectModel
    from cx_app.survey.data import SurveyData
    from cx_app.workspace.analyses import ReopenedProgram

__all__ = ["add_stored_models", "adopt_model", "reopened_analysis", "same_respondents"]


def same_respondents(analysis: Analysis, model: ProjectModel) -> bool:
    import numpy as np

    y = np.asarray(analysis.survey.y)
    return model.cv.n == len(y) and np.array_equal(np.asarray(model.cv.y_true), y)


def adopt_model(analysis: Analysis, m: ProjectModel, model_id: str) -> None:
    """One stored model (and its final fit) as a model of ``analysis``, trained already."""
    analysis.add_model(CrossValidatedModel(model_id, m.algorithm_id, dict(m.settings),
                                           m.folds, m.seed, m.cv, m.key, m.permutation))
    analysis.trained_keys.add(m.key)
    if m.final is not None:
        analysis.finals[f"{m.key}:final"] = m.final


def add_stored_models(analysis: Analysis, models: Iterable[ProjectModel]) -> int:
    """Give ``analysis`` the stored models of its respondents that it does not hold yet; the
    number added (a model of other respondents, the file read differently, is left out)."""
    added = 0
    for m in models:
        if m.key in {held.key for held in analysis.models.values()}:
            continue
        if not same_respondents(analysis, m):
            continue
        model_id = m.model_id
        while model_id in analysis.models:  # a stored model of the same name and new recipe
            model_id = f"{model_id} ({len(analysis.models) + 1})"
        adopt_model(analysis, m, model_id)
        added += 1
    return added


def reopened_analysis(program: ReopenedProgram, survey: SurveyData, *,
                      memo_items: int = 256) -> Analysis:
    """The analysis of a reopened program (survey read with the program's mapping)."""
    analysis = Analysis(survey=survey, data_key=survey.data_key, plan=survey.schema.plan_spec,
                        memo_items=memo_items)
    try:
        analysis.set_plan(PlanSpec.model_validate(program.plan))
        analysis.resolved_plan()
    except (CxAppError, ValueError):
        analysis.set_plan(survey.schema.plan_spec)  # a plan that no longer fits: the schema's
    add_stored_models(analysis, program.models)
    return analysis
