"""``cx-app evaluate``: cross-validate the driver models, write results and reports.

``cx-app evaluate FILE --out DIR`` writes ``results.json``, ``report.xlsx`` and ``report.html``
by :func:`cx_app.models.analysis.evaluate_survey` (each algorithm cross-validated once, on the
same folds; everything else derived from the cached predictions).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cx_app.app.store import survey_key, training_key
from cx_app.cli._common import (
    add_cluster_arguments,
    add_survey_arguments,
    cluster_from_args,
    progress_printer,
    survey_from_args,
)
from cx_app.models.algorithms import DEFAULT_ALGORITHMS, PAPERS_BY_DEFAULT, PRESETS
from cx_app.models.analysis import (
    BEST_MODEL_RULE,
    evaluate_survey,
    parse_pairs,
    rank_models,
    write_results,
)
from cx_app.models.baseline import below_baseline
from cx_app.models.crossval import CALIBRATIONS
from cx_app.models.drivers import PERMUTATION_REPEATS
from cx_app.models.evaluation import ModelEvaluation
from cx_app.models.names import model_display_name, names_in_text, weighting_note
from cx_app.models.results import BaselineLevel, Results
from cx_app.project import Project, ProjectModel, survey_identity, write_project
from cx_app.reports import write_reports
from cx_app.reports.definitions import plain_name
from cx_app.survey.data import SurveyData


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="cross-validate driver models and write results.json")
    add_survey_arguments(p)
    p.add_argument(
        "--algorithms",
        metavar="A,B",
        default=",".join(DEFAULT_ALGORITHMS),
        help=f"algorithm ids (default: {','.join(DEFAULT_ALGORITHMS)}; also: ordinal, cnn)",
    )
    p.add_argument(
        "--preset",
        choices=PRESETS,
        default=None,
        help="settings of every algorithm: fast (a faster solver or stopping rule, same model "
        "family) or papers (exactly the papers' settings); default: each algorithm's default, "
        "fast"
        + (f" except {', '.join(sorted(PAPERS_BY_DEFAULT))}" if PAPERS_BY_DEFAULT else ""),
    )
    p.add_argument("--folds", type=int, default=10, help="number of folds (default 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--n-jobs", type=int, default=-1,
                   help="worker processes fitting the folds of every algorithm side by side, one "
                        "thread each (default -1: every core; the numbers are the same with any)")
    p.add_argument(
        "--calibration",
        choices=CALIBRATIONS,
        default="none",
        help="probability calibration inside each fold (default none)",
    )
    p.add_argument(
        "--permutation-repeats",
        type=int,
        default=PERMUTATION_REPEATS,
        help="shuffles per attribute and fold for permutation importance "
        f"(default {PERMUTATION_REPEATS}, as in the app)",
    )
    p.add_argument(
        "--five-by-two",
        metavar="A,B",
        action="append",
        default=[],
        help="also compare algorithms A and B by the 5×2cv t-test and combined F-test on "
        "accuracy (20 extra fits; repeatable)",
    )
    p.add_argument("--out", metavar="DIR", required=True, help="output folder")
    p.add_argument("--project", metavar="FILE.cxproj",
                   help="also save the analysis as a project file (schema, plan, survey "
                        "identity, cross-validation arrays, results), for `cx-app report "
                        "--project` and the app's Open project")
    p.add_argument("--include-survey", action="store_true",
                   help="put the survey file itself into the project file (default: only its "
                        "name, sheet and SHA-256; respondent data stays out)")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


def leaderboard(evaluations: dict[str, ModelEvaluation],
                baseline: Mapping[str, BaselineLevel] | None = None) -> str:
    """A short text table: pooled out-of-fold accuracy at each level, AUCs and fit time, best
    model first (:data:`~cx_app.models.analysis.BEST_MODEL_RULE`); with ``baseline``, the
    levels where a model is below it and the baseline's own row."""
    first = next(iter(evaluations.values()))
    names = [lvl.name for lvl in first.levels]
    header = ["model", "preset", *(f"acc {n}" for n in names), *(f"AUC {n}" for n in first.roc), "fit s"]
    if baseline:
        header.append("below baseline at")
    rows = []
    level, metric = BEST_MODEL_RULE
    ranked = rank_models({m: e.mean(level, metric) for m, e in evaluations.items()}, metric)
    for a, e in ((m, evaluations[m]) for m in ranked):
        accuracies = {lvl.name: lvl.metrics.get("accuracy") for lvl in e.levels}
        rows.append(
            [
                model_display_name(a) + (" (unweighted)" if e.weighted is False else ""),
                plain_name(e.cv_summary.preset),
                *(f"{accuracies[n]:.3f}" for n in names),
                *(f"{r.auc:.3f}" for r in e.roc.values()),
                f"{e.fit_seconds:.1f}",
            ]
        )
        if baseline:
            rows[-1].append(", ".join(below_baseline(
                accuracies, {k: v.model_dump(by_alias=True) for k, v in baseline.items()}))
                or "-")
    if baseline:
        rows.append(["always the commonest class", "",
                     *(f"{baseline[n].accuracy:.3f}" if n in baseline else "" for n in names),
                     *("" for _ in first.roc), "", ""])
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    return "\n".join([*lines, "", "acc: accuracy of every respondent's out-of-fold prediction "
                       "pooled (as in results.json); order: best first by the mean of the "
                       f"folds' {metric} at the {level} level."])


def baseline_warnings(results: Results) -> list[str]:
    """One sentence per model below always answering the commonest class at some level."""
    out = []
    for model_id, model in results.models.items():
        for level in model.below_baseline or []:
            base = results.baseline[level]
            accuracy = model.levels[level].metric("accuracy")
            out.append(f"{model_display_name(model_id)} is below the baseline at {level}: "
                       f"accuracy {accuracy:.3f}, while always answering {plain_name(base.class_)} "
                       f"scores {base.accuracy:.3f}")
    return out


def expected_time(survey: SurveyData, algorithms: Sequence[str], args: argparse.Namespace,
                  load: float) -> str:
    """The time said before training, by the app's cost model
    (:func:`cx_app.models.timing.expected_phases`): every algorithm's folds, then the
    permutation importance of the one that scores best, plus starting the worker processes
    and writing the reports (:func:`~cx_app.models.timing.one_shot_seconds`), times ``load``.
    The best is not known yet, so when the algorithms' importances differ the sentence is a
    range, naming the quickest and the slowest importance."""
    from joblib import effective_n_jobs

    from cx_app.models.algorithms import resolve_preset
    from cx_app.models.timing import COSTS, expected_phases, format_duration, one_shot_seconds

    phases = {a: expected_phases(a, rows=len(survey.y), attributes=len(survey.schema.attributes),
                                 folds=args.folds, calibration=args.calibration,
                                 preset=resolve_preset(a, args.preset))
              for a in algorithms if a in COSTS}
    if not phases:
        return ""
    workers = effective_n_jobs(args.n_jobs)  # joblib's reading of -1, -2, …
    fixed = one_shot_seconds(len(algorithms), workers=workers)
    folds = sum(p.folds for p in phases.values()) + fixed
    importance = {a: p.importance * args.permutation_repeats / PERMUTATION_REPEATS
                  for a, p in phases.items()}
    quick, slow = min(importance, key=importance.get), max(importance, key=importance.get)
    low, high = folds + importance[quick], folds + importance[slow]
    source = (f"{'starting the workers and ' if workers > 1 else ''}writing the reports: "
              f"{format_duration(fixed * load)}; a quiet 2-core server's {{}} s × {load:.1f} "
              "for this machine's load now")
    if format_duration(low * load) == format_duration(high * load):
        return f"Expected time: {format_duration(high * load)} ({source.format(f'{high:.1f}')})."
    return (f"Expected time: {format_duration(low * load)} to {format_duration(high * load)}, "
            "by which model scores best: its permutation importance runs last "
            f"({_whose(quick)} {format_duration(importance[quick] * load)}, "
            f"{_whose(slow)} {format_duration(importance[slow] * load)}; "
            f"{source.format(f'{low:.1f}–{high:.1f}')}).")


def _whose(algorithm_id: str) -> str:
    """The possessive of an algorithm's name: "Random forest's", "k-nearest neighbours'"."""
    name = model_display_name(algorithm_id)
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def run(args: argparse.Namespace) -> int:
    from cx_app.models.timing import load_factor

    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    pairs = [pair for text in args.five_by_two for pair in parse_pairs(text)]
    survey = survey_from_args(args)
    said = expected_time(survey, algorithms, args, load_factor(workers=os.cpu_count() or 1))
    if said:
        print(said, flush=True)

    progress = progress_printer(algorithms)
    cvs = []
    from cx_app.models.cluster import short_lived_workers

    # on a cluster, --n-jobs is moot: every worker is used; locally, a one-shot run keeps no
    # idle worker through the CNN and the reports
    with cluster_from_args(args), short_lived_workers():
        document, evaluations = evaluate_survey(
            survey, algorithms, folds=args.folds, seed=args.seed, n_jobs=args.n_jobs,
            calibration=args.calibration, permutation_repeats=args.permutation_repeats,
            progress=progress, five_by_two=pairs, on_cv=cvs.append if args.project else None,
            preset=args.preset,
        )  # fmt: skip
    ids = [*document.warnings, *algorithms]  # a warning may name the algorithm's id alone
    notes = dict.fromkeys(names_in_text(w, ids) for ws in document.warnings.values() for w in ws)
    for note in notes:  # the same fold-assignment note comes from every model: shown once
        print(f"warning: {note}", flush=True)
    path = write_results(document, args.out)
    reports = write_reports(document, args.out)
    print()
    print(leaderboard(evaluations, document.baseline))
    for line in baseline_warnings(document):
        print(f"warning: {line}", flush=True)
    weights = weighting_note({m: (e.weighted, e.cv_summary.unweighted_reason)
                              for m, e in evaluations.items()})
    if weights:
        print(weights)
    significant = [c.verdict for c in document.comparisons if c.significant]
    print(
        f"\n{len(significant)} of {len(document.comparisons)} comparisons significant "
        "after Holm correction"
    )
    for c in document.comparisons_5x2cv or []:
        a, b = model_display_name(c.a), model_display_name(c.b)
        print(
            f"5×2cv {a} vs {b} (accuracy): t = {c.t:.3f}, p = {c.t_p:.3f}; "
            f"combined F = {c.f:.3f}, p = {c.f_p:.3f}"
            if c.t is not None and c.f is not None and c.t_p is not None and c.f_p is not None
            else f"5×2cv {a} vs {b}: undefined (identical predictions?)"
        )
    if document.drivers is not None:
        labels = document.dataset.attribute_labels
        top = [labels.get(a, a) for a in document.drivers.ranking[:5]]
        print(f"drivers (relative weights): {', '.join(top)}, ...")
    print(f"wrote {path}")
    for report in reports.values():
        print(f"wrote {report}")
    if args.project:
        settings = {"folds": args.folds, "seed": args.seed, "calibration": args.calibration,
                    "permutation_repeats": args.permutation_repeats, "algorithms": algorithms}
        project = evaluation_project(survey, cvs, document, settings=settings,
                                     survey_bytes=(Path(args.file).read_bytes()
                                                   if args.include_survey else None))
        print(f"wrote {write_project(project, args.project)}")
    return 0


def evaluation_project(survey: SurveyData, cvs: Sequence[Any], results: Any, *,
                       settings: Mapping[str, Any], survey_bytes: bytes | None = None) -> Project:
    """The project of one ``cx-app evaluate`` run; the survey file only when given."""
    schema_yaml = survey.schema.to_yaml()
    data_key = survey_key(survey.source.sha256, survey.source.sheet, schema_yaml,
                          survey.source.filename)
    models = []
    for cv in cvs:
        recipe = {"settings": dict(cv.settings), "calibration": cv.calibration}
        models.append(ProjectModel(
            model_id=cv.algorithm_id, algorithm_id=cv.algorithm_id, settings=dict(cv.settings),
            folds=cv.folds, seed=cv.seed, cv=cv,
            key=training_key(data_key, cv.algorithm_id, recipe, cv.folds, cv.seed)))
    return Project(schema_yaml=schema_yaml, plan=survey.schema.plan_spec.model_dump(mode="json"),
                   survey=survey_identity(survey), models=tuple(models),
                   survey_bytes=survey_bytes, results=results.to_json(),
                   settings=dict(settings))
