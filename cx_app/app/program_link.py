"""The session's analysis and its workspace program: models in and out, without retraining.

The app keeps each analysis in a program of the workspace
(:class:`cx_app.workspace.analyses.AnalysisStore`); these functions turn what the store gives
back (:class:`cx_app.project.ProjectModel`) into the session's
:class:`~cx_app.app.session.CrossValidatedModel` and fitted final models, and build the
analysis of a reopened program. No streamlit import.
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

__all__ = ["add_stored_models", "reopened_analysis"]


def add_stored_models(analysis: Analysis, models: Iterable[ProjectModel]) -> int:
    """Give ``analysis`` the stored models trained on its respondents that it does not hold
    yet (with their final fits); the number added. A model of other respondents (the file
    read differently) is left out."""
    import numpy as np

    added = 0
    y = np.asarray(analysis.survey.y)
    for m in models:
        if m.key in {held.key for held in analysis.models.values()}:
            continue
        if m.cv.n != len(y) or not np.array_equal(np.asarray(m.cv.y_true), y):
            continue
        model_id = m.model_id
        while model_id in analysis.models:  # a stored model of the same name and new recipe
            model_id = f"{model_id} ({len(analysis.models) + 1})"
        analysis.add_model(CrossValidatedModel(model_id, m.algorithm_id, dict(m.settings),
                                               m.folds, m.seed, m.cv, m.key, m.permutation))
        analysis.trained_keys.add(m.key)
        if m.final is not None:
            analysis.finals[f"{m.key}:final"] = m.final
        added += 1
    return added


def reopened_analysis(program: ReopenedProgram, survey: SurveyData, *,
                      memo_items: int = 256) -> Analysis:
    """The analysis of a reopened program: its survey (read with the program's mapping), plan
    and models (nothing retrained)."""
    analysis = Analysis(survey=survey, data_key=survey.data_key, plan=survey.schema.plan_spec,
                        memo_items=memo_items)
    try:
        plan = PlanSpec.model_validate(program.plan)
        analysis.set_plan(plan)
        analysis.resolved_plan()
    except (CxAppError, ValueError):
        analysis.set_plan(survey.schema.plan_spec)  # a plan that no longer fits: the schema's
    add_stored_models(analysis, program.models)
    return analysis
