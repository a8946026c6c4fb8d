"""``cx-app train FILE --algorithm ID --out MODEL.skops``: train a driver model and save it.

``--calibration auto`` (the default) cross-validates every calibration method and keeps the one
with the smallest held-out ALP–CM gap (|ALP accuracy − accuracy| + class-share distance); the
gaps of every option are printed so the choice can be checked.
"""

from __future__ import annotations

import argparse
import json
import sys

from cx_app.cli._common import add_survey_arguments, survey_from_args


def register(sub: argparse._SubParsersAction) -> None:
    from cx_app.algorithms import ALGORITHMS
    from cx_app.calibration import CALIBRATION_METHODS

    p = sub.add_parser("train", help="train a driver model on a labelled survey and save it")
    add_survey_arguments(p)
    p.add_argument("--algorithm", required=True, choices=sorted(ALGORITHMS), metavar="ID",
                   help=f"algorithm id: {', '.join(ALGORITHMS)}")
    p.add_argument("--calibration", default="auto", choices=("auto", *CALIBRATION_METHODS),
                   help="probability calibration (default auto: smallest held-out ALP gap)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", required=True, metavar="MODEL.skops", help="model file to write")
    p.add_argument("--json", action="store_true", help="print the training summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cx_app.model_file import save_model, train_model

    survey = survey_from_args(args)
    outcome = train_model(survey, args.algorithm, calibration=args.calibration,
                          folds=args.folds, seed=args.seed)
    path = save_model(outcome.model, args.out)
    choice = outcome.choice
    if args.json:
        print(json.dumps({"model": str(path), "calibration": choice.to_dict(),
                          "cv": outcome.model.cv["levels"]}, indent=2, default=str))
    else:
        print(f"{survey.source.filename}: {len(survey.y)} respondents, algorithm "
              f"{args.algorithm}, {args.folds}-fold cross-validation (seed {args.seed})")
        print("held-out ALP gap per calibration (gap = ALP accuracy - accuracy; "
              "score = |gap| + class-share distance):")
        for r in choice.reports:
            mark = "  <- chosen" if r.method == choice.chosen else ""
            print(f"  {r.method:<12} accuracy {r.gap.accuracy_cm:.3f}  ALP {r.gap.accuracy_alp:.3f}"
                  f"  gap {r.gap.accuracy_gap:+.3f}  shares {r.gap.share_gap:.3f}"
                  f"  score {r.gap.score:.3f}  Brier {r.brier:.3f}  ECE {r.ece:.3f}{mark}")
        for level, metrics in outcome.model.cv["levels"].items():
            print(f"  held-out {level}: accuracy {metrics['accuracy']:.3f}, "
                  f"macro F1 {metrics['f1_macro']:.3f}")
        print(f"saved {path}")
    for w in choice.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0
