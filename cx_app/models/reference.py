"""The reference survey's own net score by segment and by wave, for the exports.

What the Net score page shows (:mod:`cx_app.survey.nps_flags`), as one typed part of
``results.json``, so that the reports and the deck carry the measured numbers.
"""

from __future__ import annotations

from cx_app.models.results import ReferenceRow, ReferenceScores, ReferenceSplit, finite
from cx_app.survey.data import SurveyData
from cx_app.survey.nps import groups_for_schema, nps_by_results
from cx_app.survey.nps_flags import segments_vs_rest, wave_trend

__all__ = ["reference_scores"]


def reference_scores(survey: SurveyData) -> ReferenceScores:
    """The net score of ``survey`` by each segment (not dates) and by its first wave column;
    empty without scores."""
    if not survey.has_target:
        return ReferenceScores()
    schema, frame = survey.schema, survey.respondents
    target, weight = schema.target.name, survey.weight_name
    groups = groups_for_schema(schema)
    splits = []
    segments = [s for s in schema.segments if s.name in frame.columns and s.role != "date"]
    for spec in segments:
        if spec.role == "wave":
            continue
        flags = segments_vs_rest(frame, target, spec.name, groups=groups, weight=weight)
        ci = {r.label: r.ci95 for r in nps_by_results(frame, target, spec.name, groups=groups,
                                                      weight=weight)}
        rows = [ReferenceRow(value=str(r.segment), n=r.n, score=finite(r.nps),
                             ci_low=finite(ci[r.segment][0]), ci_high=finite(ci[r.segment][1]),
                             difference=finite(r.difference), p_holm=finite(r.p_holm),
                             flag=str(r.flag)) for r in flags.itertuples()]
        splits.append(ReferenceSplit(name=spec.name, title=spec.column, kind="segment",
                                     rows=rows))
    waves = [s for s in segments if s.role == "wave"]
    if waves:
        spec = waves[0]
        trend = wave_trend(frame, target, spec.name, groups=groups, weight=weight)
        rows = [ReferenceRow(value=str(r.wave), n=r.n, score=finite(r.nps),
                             ci_low=finite(r.ci_low), ci_high=finite(r.ci_high),
                             difference=finite(r.change), p_holm=finite(r.p_holm),
                             flag=str(r.flag)) for r in trend.itertuples()]
        splits.append(ReferenceSplit(name=spec.name, title=spec.column, kind="wave", rows=rows))
    return ReferenceScores(splits=splits)
