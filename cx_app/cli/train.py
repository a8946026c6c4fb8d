"""``cx-app train FILE --out MODEL.skops``: train a driver model (default lr) and save it.

The gaps of every calibration option are printed so that ``--calibration auto``'s choice can be
checked, and the paper's Section 5 check (the model fit on 100 % of the data, validated with
ALP). Everything printed is also in the model file's metadata (``cv``).
"""

from __future__ import annotations

import argparse
import json
import sys

from cx_app.cli._common import (
    add_cluster_arguments,
    add_survey_arguments,
    add_training_arguments,
    cluster_from_args,
    model_words,
    survey_from_args,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a driver model on a labelled survey and save it")
    add_survey_arguments(p)
    add_training_arguments(p)
    p.add_argument("--out", required=True, metavar="MODEL.skops", help="model file to write")
    p.add_argument("--report-gaps", action="store_true",
                   help="also print regular vs ALP metrics per level on training and held-out "
                        "folds, and the learning curve (3%%-78%% training share; 10 more fits)")
    p.add_argument("--json", action="store_true", help="print the training summary as JSON")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


def _print_side_by_side(alp_vs_cm: dict) -> None:
    from cx_app.engine.catalogue import short_name

    sides = [s for s in ("training", "heldout") if s in alp_vs_cm]
    print("regular CM vs ALP CM (gap = ALP - CM), " + " | ".join(
        f"{s} folds" for s in sides) + ":")
    for level, metrics in alp_vs_cm[sides[0]].items():
        for metric in metrics:
            cells = [f"CM {v['cm']:.3f}  ALP {v['alp']:.3f}  gap {v['gap']:+.3f}"
                     for v in (alp_vs_cm[side][level][metric] for side in sides)]
            print(f"  {level:<8} {short_name(metric):<16} " + "  |  ".join(cells))


def _print_learning_curve(rows: list[dict]) -> None:
    print("learning curve (accuracy; test share 20%):")
    print("  train share  n train   CM train  ALP train   CM test  ALP test")
    for r in rows:
        print(f"  {r['train_share']:>10.0%}  {r['n_train']:>7}   {r['cm_train']:.3f}     "
              f"{r['alp_train']:.3f}     {r['cm_test']:.3f}    {r['alp_test']:.3f}")


def run(args: argparse.Namespace) -> int:
    from cx_app.estimate.model_file import save_model
    from cx_app.estimate.model_metadata import LARGE_GAP, LARGE_NET_ERROR
    from cx_app.estimate.training import train_model

    survey = survey_from_args(args)
    with cluster_from_args(args):
        outcome = train_model(survey, args.algorithm, calibration=args.calibration,
                              folds=args.folds, seed=args.seed, learning_curve=args.report_gaps, preset=args.preset)
    path = save_model(outcome.model, args.out)
    choice = outcome.choice
    cv = outcome.model.cv.to_dict()
    check = outcome.model.cv.full_training_check
    if args.json:
        doc = {"model": str(path), "preset": outcome.model.preset, "calibration": choice.to_dict(), "cv": cv["levels"],
               "alp_gap": cv["alp_gap"], "full_training_check": cv["full_training_check"],
               "alp_vs_cm": cv["alp_vs_cm"], "warnings": list(choice.warnings)}
        if "learning_curve" in cv:
            doc["learning_curve"] = cv["learning_curve"]
        print(json.dumps(doc, indent=2, default=str))
    else:
        print(f"{survey.source.filename}: {len(survey.y)} respondents, "
              f"{model_words(args.algorithm, outcome.model.preset)}, {args.folds}-fold "
              f"cross-validation (seed {args.seed})")
        print("held-out ALP gap per calibration (gap = ALP accuracy - accuracy; net = estimated "
              "- actual net score; net err = net-score calibration error, points; "
              f"score = the largest of |gap| / {LARGE_GAP:g}, class-share distance / "
              f"{LARGE_GAP:g} and net err / {LARGE_NET_ERROR:g}: above 1 is warned about; the "
              "smallest score is chosen):")
        for r in choice.reports:
            mark = "  <- chosen" if r.method == choice.chosen else ""
            g = r.gap
            net = ("" if g.net_gap is None else
                   f"  net {g.net_gap:+.1f}  net err {g.net_calibration_error:.1f}")
            print(f"  {r.method:<12} accuracy {g.accuracy_cm:.3f}  ALP {g.accuracy_alp:.3f}"
                  f"  gap {g.accuracy_gap:+.3f}  shares {g.share_gap:.3f}{net}"
                  f"  score {g.score:.3f}  Brier {r.brier:.3f}  ECE {r.ece:.3f}{mark}")
        for level, metrics in cv["levels"].items():
            print(f"  held-out {level}: accuracy {metrics['accuracy']:.3f}, "
                  f"macro F1 {metrics['f1_macro']:.3f}")
        print(f"trained on 100% and validated with ALP (paper Section 5): held-out accuracy "
              f"{check.heldout_cm:.3f} (ALP {check.heldout_alp:.3f}); full-data model: "
              f"ALP accuracy {check.full_train_alp:.3f}, resubstitution accuracy "
              f"{check.full_train_cm:.3f}")
        for note in check.notes:
            print(f"  note: {note}")
        if args.report_gaps:
            _print_side_by_side(cv["alp_vs_cm"])
            _print_learning_curve(cv["learning_curve"])
        print(f"saved {path}")
    for w in choice.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0
