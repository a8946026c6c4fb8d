"""``cx-app estimate``: estimated performance and NPS of new, unlabelled waves with a saved model.

One wave file: the full estimate (``--json``: what ``cx-app report --new-wave`` reads); several
files, a wave column or ``--by``: the tracker. The JSON, alerts and ``--audit``: docs/alp.md."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from functools import partial

from cx_app.cli._common import (
    add_cluster_arguments,
    cluster_from_args,
    fmt_ci,
    model_words,
    segment_line,
)
from cx_app.errors import CxAppError, SchemaError
from cx_app.survey.vocabulary import vocabulary_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimate", help="estimate performance and net score (NPS) of a new "
                                        "survey wave")
    p.add_argument("files", metavar="WAVE_FILE", nargs="+",
                   help="the new wave(s) (.xlsx, .csv, ...), in time order")
    p.add_argument("--by", metavar="SEGMENT",
                   help="also estimate each value of this segment (its name or column header)")
    p.add_argument("--model", required=True, metavar="MODEL.skops",
                   help="model file written by `cx-app train`")
    p.add_argument("--sheet", metavar="NAME", help="sheet name or number (default: first match)")
    p.add_argument("--schema", metavar="S",
                   help="read the wave with this schema instead of the model's own (e.g. other "
                        "column headers); its scale and attribute names must match the model's")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")
    p.add_argument("--alert-accuracy", metavar="LOW[,HIGH]",
                   help="alert when the estimated accuracy (0-1) is outside these limits "
                        "(default: the model's held-out 3-sigma band at each wave's size)")
    p.add_argument("--alert-nps", metavar="LOW[,HIGH]",
                   help="alert when the estimated net score (points) is outside these limits "
                        "(default: the 3-sigma band of the model's held-out folds)")
    p.add_argument("--audit", metavar="SAMPLE",
                   help="a few respondents of this wave with their answers (or the wave file "
                        "itself with some answers): the audited net score, accuracy and F1 by "
                        "prediction-powered inference, and a check of the label-free estimate "
                        "(one wave only)")
    p.add_argument("--predictions", metavar="OUT.csv",
                   help="write per-respondent predictions and probabilities to this CSV")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


def _compatible_schema(path: str, model):
    """The schema at ``path`` if the model can score data read with it, else SchemaError."""
    from cx_app.survey.schema import load_schema

    schema = load_schema(path)
    if tuple(schema.classes) != tuple(model.classes):
        raise SchemaError(
            f"{path}: target scale {schema.classes[0]}-{schema.classes[-1]} differs from the "
            f"model's {model.classes[0]}-{model.classes[-1]}")
    names = {a.name for a in schema.attributes}
    missing = [a for a in model.attribute_names if a not in names]
    if missing:
        raise SchemaError(
            f"{path}: the model needs the attribute(s) {', '.join(missing)}, which this schema "
            "does not define (attribute names must match the model's)")
    return schema


def _thresholds(args: argparse.Namespace):
    """The analyst's alert limits from ``--alert-accuracy`` / ``--alert-nps`` (None: defaults)."""
    from cx_app.estimate.alerts import AlertThresholds, parse_limits

    accuracy = parse_limits(args.alert_accuracy, "--alert-accuracy")
    net = parse_limits(args.alert_nps, "--alert-nps")
    return None if accuracy is None and net is None else AlertThresholds(accuracy, net)


def _track(model, surveys, args: argparse.Namespace) -> int:
    import json

    from cx_app.cli.nps import resolve_segment
    from cx_app.estimate.tracker import track_waves, tracker_document

    by = title = None
    if args.by:
        segment = resolve_segment(model.schema, args.by, surveys[0].frame.columns)
        by, title = segment.name, segment.column
    with cluster_from_args(args):  # each wave a task
        tracked = track_waves(model, surveys, by=by, thresholds=_thresholds(args))
    if args.json:
        print(json.dumps(tracker_document(tracked), indent=1, ensure_ascii=False, default=str))
        return 0
    kind = vocabulary_for(nps=tracked[0].estimate.estimated_nps.kind == "nps").short_name
    print(f"model {model_words(model.algorithm_id, model.preset)}, calibration "
          f"{model.calibration}; estimated {kind} with 95% intervals")
    for t in tracked:
        nps = t.estimate.estimated_nps
        line = f"{t.file}: {t.estimate.n:,} respondents, {kind} {nps.value:+.1f} {fmt_ci(1, nps.ci95)}"
        if t.estimate.realized_nps is not None:
            line += f"; realized {t.estimate.realized_nps.value:+.1f}"
        print(line)
        for a in t.estimate.alerts:
            if a.alert:
                print(f"  {a.sentence()}")
        for s in t.segments:
            raised = "; ".join(a.short() for a in s.alerts if a.alert)
            print(segment_line(title, s.label, s.respondents, s.estimated_nps, s.note)
                  + (f" ALERT: {raised}" if raised else ""))
    print(f"the intervals cover {tracked[0].estimate.estimated_nps.covers}")
    segment = next((s.estimated_nps for t in tracked for s in t.segments
                    if s.estimated_nps is not None), None)
    if segment is not None:
        print(f"a segment's interval covers {segment.covers}")
    for t in tracked:
        for w in t.estimate.warnings:
            print(f"warning: {t.file}: {w}", file=sys.stderr)
    return 0


def _print_audit(audit) -> None:
    """The audit's lines of ``cx-app estimate --audit`` (:mod:`cx_app.estimate.audit`)."""
    print(audit.headline())
    for name, fig in (("accuracy", audit.accuracy), ("group accuracy", audit.group_accuracy),
                      ("macro F1", audit.f1_macro)):
        print(f"  audited {name} {fig.value:.3f} {fmt_ci(3, fig.ci95)} (label-free "
              f"{fig.label_free:.3f})")
    print(f"  {audit.shift_test.sentence}")
    print(f"  audit rows matched by {audit.matched_by}: {audit.n_audit:,} of the wave's "
          f"{audit.n_wave:,} respondents")
    if audit.excluded:
        reasons = Counter(row.reason for row in audit.excluded)
        rows = ", ".join(str(r.row) for r in audit.excluded[:10])
        print(f"  {len(audit.excluded)} audit row(s) left out ("
              + "; ".join(f"{k}: {v}" for k, v in reasons.items())
              + f"), sheet rows {rows}" + (" …" if len(audit.excluded) > 10 else ""))
    for note in audit.notes:
        print(f"  note: {note}")


def run(args: argparse.Namespace) -> int:
    from cx_app.atomic_files import write_bytes_atomic
    from cx_app.estimate.model_file import load_model
    from cx_app.estimate.new_wave import estimate_wave
    from cx_app.estimate.tracker import split_waves
    from cx_app.safe_text import to_safe_csv
    from cx_app.survey.importing import load_survey

    model = load_model(args.model)
    schema = _compatible_schema(args.schema, model) if args.schema else model.schema
    read = partial(load_survey, schema=schema, require_target=False, scoring=True,
                   require_attributes=False)
    surveys = [wave for f in args.files  # a file with a wave column: one line per wave
               for wave in split_waves(read(f, sheet=args.sheet))]
    if len(surveys) > 1 or args.by:
        if args.audit:
            raise CxAppError("--audit goes with one wave: give one wave file (without --by); "
                             f"{len(surveys)} wave(s) were read")
        return _track(model, surveys, args)
    survey = surveys[0]
    est = estimate_wave(model, survey, thresholds=_thresholds(args))
    if args.audit:
        from cx_app.estimate.audit import with_audit
        est = with_audit(model, survey, est, read(args.audit))
    if args.predictions:
        write_bytes_atomic(args.predictions, to_safe_csv(est.predictions_frame()))
    if args.json:
        print(est.to_json())
        return 0
    nps = est.estimated_nps
    score = vocabulary_for(nps=nps.kind == "nps").short_name
    print(f"{survey.source.filename}: {est.n} respondents; model "
          f"{model_words(model.algorithm_id, model.preset)}, calibration {model.calibration}, "
          f"trained on {model.training.n} respondents")
    print(f"estimated {score} {nps.value:.1f}, 95% interval {fmt_ci(1, nps.ci95)} "
          f"(answers SE {nps.se_outcome:.1f}, model SE {nps.se_model:.1f}"
          + (f", training survey SE {nps.se_reference:.1f}" if nps.se_reference else "")
          + (f", sampling SE {nps.se_sampling:.1f}" if nps.se_sampling else "")
          + (f", segment SE {nps.se_segment:.1f}" if nps.se_segment else "") + ")")
    print(f"  the interval covers {nps.covers}")
    if est.realized_nps is not None:
        print(f"realized  {score} {est.realized_nps.value:.1f}")
    for level in est.levels:
        m = level.metrics
        ci = est.metric_intervals.ci95(level.name)
        line = (f"  {level.name:<10} estimated accuracy {m['accuracy']:.3f} "
                f"{fmt_ci(3, ci['accuracy'])}, macro F1 {m['f1_macro']:.3f} "
                f"{fmt_ci(3, ci['f1_macro'])}")
        if est.realized_levels is not None:
            r = next(lv for lv in est.realized_levels if lv.name == level.name).metrics
            line += f"   realized accuracy {r['accuracy']:.3f}, macro F1 {r['f1_macro']:.3f}"
        print(line)
    counts = ", ".join(f"{c}: {v:.1f}" for c, v in est.estimated_class_counts.items())
    print(f"estimated class counts: {counts}")
    for a in est.alerts:
        print(a.sentence())
    if est.audit is not None:
        _print_audit(est.audit)
    if args.predictions:
        print(f"predictions written to {args.predictions}")
    for w in est.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0
