"""``cx-app evaluate FILE --out DIR``: cross-validate the driver models and write results.json.

Each algorithm is cross-validated once (same folds for all); levels, per-fold metrics, ROC,
pairwise tests and drivers are derived from the cached predictions. Default comparisons: every
level on ``accuracy``, plus ``f1_macro`` on multiclass levels and ``mcc`` on 2×2 levels.
Permutation importance is computed for the best model only (highest mean per-fold accuracy at
the original level), reusing its fold models.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cx_app.algorithms import DEFAULT_ALGORITHMS, get_algorithm
from cx_app.cli._common import add_survey_arguments, survey_from_args
from cx_app.comparison import compare_models
from cx_app.crossval import CALIBRATIONS, cross_validate_model
from cx_app.drivers import driver_importance
from cx_app.errors import AnalysisError
from cx_app.evaluation import ModelEvaluation, evaluate_result
from cx_app.grouping import resolve_plan


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="cross-validate driver models and write results.json")
    add_survey_arguments(p)
    p.add_argument(
        "--algorithms",
        metavar="A,B",
        default=",".join(DEFAULT_ALGORITHMS),
        help=f"algorithm ids (default: {','.join(DEFAULT_ALGORITHMS)}; also: ordinal)",
    )
    p.add_argument("--folds", type=int, default=10, help="number of folds (default 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--n-jobs", type=int, default=1, help="folds fitted in parallel (default 1)")
    p.add_argument(
        "--calibration",
        choices=CALIBRATIONS,
        default="none",
        help="probability calibration inside each fold (default none)",
    )
    p.add_argument(
        "--permutation-repeats",
        type=int,
        default=5,
        help="shuffles per attribute and fold for permutation importance (default 5)",
    )
    p.add_argument("--out", metavar="DIR", required=True, help="output folder")
    p.set_defaults(func=run)


def default_comparisons(evaluation: ModelEvaluation) -> list[tuple[str, str]]:
    """(level, metric) pairs compared by default: accuracy everywhere, f1_macro on multiclass
    levels, mcc on 2×2 levels."""
    pairs = []
    for lvl in evaluation.levels:
        pairs.append((lvl.name, "accuracy"))
        pairs.append((lvl.name, "mcc" if lvl.is_binary else "f1_macro"))
    return pairs


def _versions() -> dict[str, str]:
    import numpy
    import pandas
    import sklearn
    import statsmodels
    import xgboost

    from cx_app import __version__

    return {"cx_app": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "pandas": pandas.__version__, "scikit-learn": sklearn.__version__,
            "statsmodels": statsmodels.__version__, "xgboost": xgboost.__version__}  # fmt: skip


def evaluate_survey(
    survey: Any,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    *,
    folds: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
    calibration: str = "none",
    permutation_repeats: int = 5,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, ModelEvaluation]]:
    """Cross-validate ``algorithms`` on a loaded survey; return (results document, evaluations)."""
    for a in algorithms:
        get_algorithm(a)
    if survey.y is None:
        raise AnalysisError("evaluating models needs the target (score) column")
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    X, y, classes = survey.X, survey.y, survey.classes
    evaluations: dict[str, ModelEvaluation] = {}
    best_cv, best_score = None, -1.0
    warnings: dict[str, list[str]] = {}
    for algorithm_id in algorithms:
        cv = cross_validate_model(
            X, y, classes, algorithm_id, folds=folds, seed=seed, n_jobs=n_jobs,
            progress=progress, calibration=calibration, keep_models=True,
        )  # fmt: skip
        evaluation = evaluate_result(cv, plan)
        evaluations[algorithm_id] = evaluation
        warnings[algorithm_id] = list(cv.warnings)
        score = evaluation.mean("original", "accuracy")
        if score > best_score:  # keep only the best model's fold models (memory)
            best_cv, best_score = cv, score
        del cv
    first = next(iter(evaluations.values()))
    comparisons = [
        c.to_dict()
        for level, metric in default_comparisons(first)
        for c in compare_models(evaluations, level, metric)
    ]
    attribute_max = {a.name: a.scale.max for a in survey.schema.attributes}
    drivers = driver_importance(
        X, y, classes, cv_results=[best_cv] if best_cv is not None else [],
        resolved_plan=plan, attribute_max=attribute_max, n_repeats=permutation_repeats, seed=seed,
    )  # fmt: skip
    source = survey.source
    document = {
        "dataset": {
            "rows_used": survey.quality.rows_used,
            "classes": list(classes),
            "attributes": list(map(str, X.columns)),
        },
        "folds": folds,
        "seed": seed,
        "calibration": calibration,
        "models": {a: e.to_dict() for a, e in evaluations.items()},
        "comparisons": comparisons,
        "comparison_method": "k-fold paired t-test (p), Nadeau–Bengio corrected (p_corrected), "
        "Holm over the pairs of each level and metric applied to p_corrected (p_holm)",
        "drivers": {
            "permutation_model": best_cv.algorithm_id if best_cv else None,
            **drivers.to_dict(),
        },
        "warnings": warnings,
        "quality": survey.quality.to_dict(),
        "provenance": {
            "file": source.filename,
            "sheet": source.sheet,
            "sha256": source.sha256,
            "schema": survey.schema.name,
            "plan": plan.to_dict(),
            "algorithms": {a: evaluations[a].cv_summary["settings"] for a in algorithms},
            "versions": _versions(),
        },
    }
    return document, evaluations


def leaderboard(evaluations: dict[str, ModelEvaluation]) -> str:
    """A short text table: mean per-fold accuracy at each level, AUCs and fit time."""
    first = next(iter(evaluations.values()))
    names = [lvl.name for lvl in first.levels]
    header = ["model", *(f"acc {n}" for n in names), *(f"AUC {n}" for n in first.roc), "fit s"]
    rows = []
    ranked = sorted(evaluations.items(), key=lambda kv: -kv[1].mean(names[-1], "accuracy"))
    for a, e in ranked:
        rows.append(
            [
                a,
                *(f"{e.mean(n, 'accuracy'):.3f}" for n in names),
                *(f"{r.auc:.3f}" for r in e.roc.values()),
                f"{e.fit_seconds:.1f}",
            ]
        )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    survey = survey_from_args(args)

    def progress(done: int, total: int, message: str) -> None:
        if done:
            print(f"  {message}", flush=True)
        else:
            print(message, flush=True)

    document, evaluations = evaluate_survey(
        survey, algorithms, folds=args.folds, seed=args.seed, n_jobs=args.n_jobs,
        calibration=args.calibration, permutation_repeats=args.permutation_repeats,
        progress=progress,
    )  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False, default=_plain), "utf-8")
    print()
    print(leaderboard(evaluations))
    significant = [
        c["verdict"]
        for c in document["comparisons"]
        if c["p_holm"] is not None and c["p_holm"] < c["alpha"]
    ]
    print(
        f"\n{len(significant)} of {len(document['comparisons'])} comparisons significant "
        "after Holm correction"
    )
    print(f"drivers (relative weights): {', '.join(document['drivers']['ranking'][:5])}, ...")
    print(f"wrote {path}")
    return 0


def _plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    print(f"warning: {type(value).__name__} written as text", file=sys.stderr)
    return str(value)
