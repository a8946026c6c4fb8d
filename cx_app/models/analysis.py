"""One evaluation of driver models on a survey, and the ``results.json`` document it produces.

``evaluate_survey`` cross-validates each algorithm once (same folds for all) and derives the
rest from the cached predictions; ``results_document`` turns evaluations that already exist
(the CLI's, or the app's cached ones under the user's current plan) into the one document that
``results.json``, the reports and the app's downloads share.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from joblib import effective_n_jobs

from cx_app.atomic_files import write_text_atomic
from cx_app.engine.catalogue import compared_metrics, lower_is_better
from cx_app.engine.grouping import ResolvedPlan, resolve_plan
from cx_app.errors import AnalysisError
from cx_app.json_values import json_default
from cx_app.models import cluster
from cx_app.models.algorithms import DEFAULT_ALGORITHMS, get_algorithm, preset_label
from cx_app.models.baseline import below_baseline, majority_baseline
from cx_app.models.comparison import compare_models, five_by_two_cv
from cx_app.models.crossval import CrossValResult, cross_validate_model, cross_validate_together
from cx_app.models.drivers import (
    PERMUTATION_REPEATS,
    DriverAnalysis,
    driver_importance,
    survey_driver_views,
)
from cx_app.models.evaluation import ModelEvaluation, evaluate_result
from cx_app.models.reference import reference_scores
from cx_app.models.results import Results
from cx_app.provenance import provenance_block
from cx_app.survey.data import SurveyData
from cx_app.survey.nps import groups_for_schema, nps_summary

COMPARISON_METHOD = (
    "k-fold paired t-test (p plain), Nadeau–Bengio corrected (p corrected), Holm over the "
    "pairs of each level and metric applied to the corrected p (p Holm)"
)


def results_document(
    survey: SurveyData,
    evaluations: Mapping[str, ModelEvaluation],
    plan: ResolvedPlan,
    *,
    drivers: DriverAnalysis | None = None,
    permutation_model: str | None = None,
    calibration: str = "none",
    comparisons_5x2cv: Sequence[Mapping[str, Any]] | None = None,
    created: str | None = None,
) -> Results:
    """The typed results (:class:`cx_app.models.results.Results`) of evaluations that exist
    already (nothing is refitted); ``created``: the provenance timestamp, default now."""
    if not evaluations:
        raise AnalysisError("no trained model to report on: train at least one model first")
    first = next(iter(evaluations.values()))
    source = survey.source
    schema_yaml = survey.schema.to_yaml()
    net = nps_summary(survey.scores, groups=groups_for_schema(survey.schema),
                      label="all respondents", weights=survey.weights)
    baseline = majority_baseline(survey.y, plan) if survey.y is not None else {}
    # every pair of models on each level's compared metrics (compared_metrics)
    comparisons = [c.to_dict() for lvl in first.levels for metric in compared_metrics(
        lvl.is_binary) for c in compare_models(evaluations, lvl.name, metric)]
    models = {}
    for a, e in evaluations.items():
        accuracies = {lvl.name: lvl.metrics.get("accuracy") for lvl in e.levels}
        models[a] = {**e.to_dict(), "below_baseline": below_baseline(accuracies, baseline)}
    document: dict[str, Any] = {
        "dataset": {
            "filename": source.filename,
            "rows_read": survey.quality.rows_read,
            "respondents": survey.quality.respondents,
            "rows_used": survey.quality.rows_used,
            "missing_policy": survey.schema.missing_attributes,
            "classes": list(survey.classes),
            "attributes": list(survey.attribute_names),
            "attribute_labels": {a.name: a.display for a in survey.schema.attributes},
            "target_kind": survey.schema.target.kind,
            "recommend_question": survey.schema.is_nps,
            "nps": net.to_dict(),
            "reference": reference_scores(survey).to_dict(),
        },
        "folds": first.cv_summary.folds,
        "seed": first.cv_summary.seed,
        "calibration": calibration,
        "models": models,
        "baseline": baseline,
        "comparisons": comparisons,
        "comparison_method": COMPARISON_METHOD,
        "warnings": {a: list(e.cv_summary.warnings) for a, e in evaluations.items()},
        "quality": survey.quality.to_dict(),
        "provenance": {
            "file": source.filename,
            "sheet": source.sheet,
            "sha256": source.sha256,
            "schema": survey.schema.name,
            "plan": plan.to_dict(),
            "algorithms": {a: e.cv_summary.settings for a, e in evaluations.items()},
            **provenance_block(
                seed=first.cv_summary.seed, folds=first.cv_summary.folds,
                preset=", ".join(dict.fromkeys(e.cv_summary.preset for e in evaluations.values())),
                schema_yaml=schema_yaml, inputs={source.filename or "survey": source.sha256},
                created=created),
            "schema_yaml": schema_yaml,
            "presets": {a: e.cv_summary.preset for a, e in evaluations.items()},
        },
    }
    if drivers is not None:
        document["drivers"] = {"permutation_model": permutation_model, **drivers.to_dict()}
    if comparisons_5x2cv is not None:
        document["comparisons_5x2cv"] = list(comparisons_5x2cv)
    return Results.from_dict(json.loads(json.dumps(document, default=json_default)))


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """``"lr,svm;lr,rf"`` → [("lr", "svm"), ("lr", "rf")]: pairs of known, distinct algorithm ids."""
    pairs = []
    for chunk in text.split(";"):
        ids = [a.strip() for a in chunk.split(",") if a.strip()]
        if not ids:
            continue
        if len(ids) != 2 or ids[0] == ids[1]:
            raise AnalysisError(
                f"a 5×2cv comparison needs two different algorithm ids like 'lr,svm', got {chunk!r}"
            )
        for a in ids:
            get_algorithm(a)
        pairs.append((ids[0], ids[1]))
    return pairs


def evaluate_algorithm(
    survey: SurveyData,
    algorithm_id: str,
    plan: ResolvedPlan,
    *,
    folds: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
    calibration: str = "none",
    progress: Callable[[int, int, str], None] | None = None,
    preset: str | None = None,
) -> tuple[CrossValResult, ModelEvaluation]:
    """Cross-validate one algorithm on a loaded survey (fold models kept, for permutation
    importance) and derive its levels, per-fold metrics and ROC under ``plan``."""
    cv = cross_validate_model(
        survey.X, survey.y, survey.classes, algorithm_id, folds=folds, seed=seed, n_jobs=n_jobs,
        progress=progress, calibration=calibration, keep_models=True,
        missing_policy=survey.schema.missing_attributes, sample_weight=survey.model_weights,
        preset=preset,
    )  # fmt: skip
    return cv, evaluate_result(cv, plan)


def finish_evaluation(
    survey: SurveyData,
    evaluations: Mapping[str, ModelEvaluation],
    plan: ResolvedPlan,
    best_cv: CrossValResult | None,
    *,
    seed: int = 0,
    calibration: str = "none",
    permutation_repeats: int = PERMUTATION_REPEATS,
    comparisons_5x2cv: Sequence[Mapping[str, Any]] | None = None,
    n_jobs: int = 1,
    survey_views: DriverAnalysis | None = None,
) -> Results:
    """Drivers (permutation importance on ``best_cv``'s fold models, ``n_jobs`` folds at a
    time) and the results document (levels, ROC, all pairwise tests) of models evaluated by
    :func:`evaluate_algorithm`; ``survey_views``: :func:`driver_views` of ``survey`` when
    already computed."""
    permutation_model = (None if best_cv is None else
                         preset_label(best_cv.algorithm_id, best_cv.preset))
    if survey_views is None:
        survey_views = driver_views(survey, plan, seed=seed)
    drivers = driver_importance(
        survey.X, survey.y, survey.classes, cv_results=[best_cv] if best_cv is not None else [],
        n_repeats=permutation_repeats, seed=seed, n_jobs=n_jobs, survey_views=survey_views,
    )  # fmt: skip
    return results_document(
        survey, evaluations, plan, drivers=drivers,
        permutation_model=permutation_model,
        calibration=calibration, comparisons_5x2cv=comparisons_5x2cv,
    )  # fmt: skip


def driver_views(survey: SurveyData, plan: ResolvedPlan, *, seed: int = 0) -> DriverAnalysis:
    """The model-free driver views of ``survey`` (:func:`~cx_app.models.drivers.survey_driver_views`
    on its schema's scales)."""
    attributes = survey.schema.attributes
    return survey_driver_views(
        survey.X, survey.y, survey.classes, resolved_plan=plan, seed=seed,
        attribute_max={a.name: a.scale.max for a in attributes},
        attribute_min={a.name: a.scale.min for a in attributes},
    )  # fmt: skip


BEST_MODEL_RULE = ("original", "accuracy")
"""The best model: the highest mean per-fold accuracy at the original level (the first model
listed wins a tie). The CLI, the app and the reports pick by this one rule."""


def rank_models(scores: Mapping[str, float | None], metric: str) -> list[str]:
    """Model ids best first by ``scores`` (mean per-fold ``metric``) in the metric's direction;
    a model without a finite score comes last; the first listed wins a tie.

    >>> rank_models({"lr": 0.61, "nb": 0.64, "dt": float("nan")}, "accuracy")
    ['nb', 'lr', 'dt']
    >>> rank_models({"lr": 0.2, "nb": 0.1}, "fpr")
    ['nb', 'lr']
    """
    sign = 1.0 if lower_is_better(metric) else -1.0

    def key(model: str) -> tuple[bool, float]:
        value = scores[model]
        missing = value is None or not np.isfinite(value)
        return missing, 0.0 if missing else sign * float(value)

    return sorted(scores, key=key)


def best_model(evaluations: Mapping[str, ModelEvaluation]) -> str:
    """The id of the best of ``evaluations`` by :data:`BEST_MODEL_RULE` (first wins a tie)."""
    if not evaluations:
        raise AnalysisError("no model to choose from: train at least one")
    level, metric = BEST_MODEL_RULE
    return rank_models({m: e.mean(level, metric) for m, e in evaluations.items()}, metric)[0]


def evaluate_survey(
    survey: SurveyData,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    *,
    folds: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
    calibration: str = "none",
    permutation_repeats: int = PERMUTATION_REPEATS,
    progress: Callable[[int, int, str], None] | None = None,
    five_by_two: Sequence[tuple[str, str]] = (),
    on_cv: Callable[[CrossValResult], None] | None = None,
    preset: str | None = None,
) -> tuple[Results, dict[str, ModelEvaluation]]:
    """Cross-validate ``algorithms`` on a loaded survey; return (results, evaluations keyed by
    :func:`~cx_app.models.algorithms.preset_label`). Permutation importance is computed for
    the best model only, reusing its fold models. ``on_cv`` is given each cross-validation
    (fold models dropped) as it is done: what a project file keeps.
    """
    for a in algorithms:
        get_algorithm(a, preset)
    for pair in five_by_two:
        for a in pair:
            get_algorithm(a)
    if survey.y is None:
        raise AnalysisError("evaluating models needs the target (score) column")
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    groups_for_schema(survey.schema)  # the net score's groups: a bad plan fails before any fit
    evaluations: dict[str, ModelEvaluation] = {}
    best_cv = None
    with _beside_the_folds(n_jobs) as beside:
        views = beside(driver_views, survey, plan, seed=seed)
        together = cross_validate_together(
            survey.X, survey.y, survey.classes, list(algorithms), n_jobs=n_jobs,
            progress=progress, folds=folds, seed=seed, calibration=calibration,
            keep_models=True, missing_policy=survey.schema.missing_attributes,
            sample_weight=survey.model_weights, preset=preset)  # fmt: skip
        survey_views = views.result()
    for algorithm_id in algorithms:
        cv = together.pop(0)  # the others' fold models are dropped as they are evaluated
        evaluation = evaluate_result(cv, plan)
        label = preset_label(algorithm_id, preset)
        evaluations[label] = evaluation
        if on_cv is not None:
            on_cv(dataclasses.replace(cv, models=None, train_predictions=None))
        if best_model(evaluations) == label:  # keep only the best one's fold models
            best_cv = cv
        del cv
    five_by_two_results = None
    if five_by_two:
        if progress:
            progress(0, len(five_by_two), f"5×2cv tests of {len(five_by_two)} pair(s)")
        five_by_two_results = [
            five_by_two_cv(survey.X, survey.y, survey.classes, a, b, seed, n_jobs=n_jobs,
                           missing_policy=survey.schema.missing_attributes,
                           sample_weight=survey.model_weights, preset=preset).to_dict()
            for a, b in five_by_two]
    document = finish_evaluation(
        survey, evaluations, plan, best_cv, seed=seed, calibration=calibration,
        permutation_repeats=permutation_repeats, comparisons_5x2cv=five_by_two_results,
        n_jobs=n_jobs, survey_views=survey_views,
    )  # fmt: skip
    return document, evaluations


@contextlib.contextmanager
def _beside_the_folds(n_jobs: int) -> Iterator[Callable[..., Future]]:
    """``submit(fn, *args)``: run ``fn`` in a thread of this process while the folds are fitted
    in worker processes (the model-free driver views: about 3 s of 40,000 respondents that no
    longer wait for the last fold). When the folds are fitted in this process (one job), ``fn``
    runs at once instead: a fold's ``warnings.catch_warnings`` is process-wide, and must not
    record another thread's warnings."""
    if cluster.active() or effective_n_jobs(n_jobs) > 1:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cx-app-drivers") as pool:
            yield pool.submit
        return

    def at_once(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        done: Future = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # raised where the thread's would be: at .result()
            done.set_exception(exc)
        return done

    yield at_once


def write_results(results: Results, out_dir: str | Path) -> Path:
    """Write ``results.json`` into ``out_dir`` (created when missing); return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    write_text_atomic(path, results.to_json())
    return path
