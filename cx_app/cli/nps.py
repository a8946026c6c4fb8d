"""``cx-app nps FILE``: the net score (NPS, or CSAT net and its top-box share) with 95% intervals.

"NPS", promoters and detractors only for a recommend question on 0–10; any other target prints
a "net score (top box − bottom box)" with neutral group names (the JSON's keys stay as they are).
Changes use the two-sided z test of MATH.md §11 (SE = √(Var_A + Var_B)).
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from cx_app.cli._common import add_survey_arguments, survey_from_args
from cx_app.errors import SchemaError
from cx_app.survey.nps import (
    CsatResult,
    NetScoreGroups,
    NpsChange,
    NpsResult,
    csat_summary,
    groups_for_schema,
    nps_change,
    nps_summary,
    segment_frames,
)
from cx_app.survey.schema import SegmentSpec, SurveySchema, normalise_header
from cx_app.survey.score_groups import groups_between, groups_note, score_span
from cx_app.survey.vocabulary import vocabulary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nps", help="net score (NPS for a recommend question, else top box − "
                                   "bottom box) with 95%% intervals, overall and "
                                   "by segment; wave-on-wave changes and --compare A B, with "
                                   "interval and z test")
    add_survey_arguments(p)
    p.add_argument("--by", metavar="COL", action="append", default=[],
                   help="segment column (name, header or alias); repeat for several tables")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), action="append", default=[],
                   help="the change from segment value A to B of a --by segment (e.g. two "
                        "waves or two operators), with its 95%% interval and z test; repeatable")
    p.add_argument("--low-up-to", type=int, metavar="N",
                   help="the analyst's groups: scores up to N are the low (negative) group "
                        "(default: the schema's plan; on 0–10, 0–6 for a recommend question, "
                        "else the symmetric 0–4)")
    p.add_argument("--high-from", type=int, metavar="N",
                   help="scores from N are the high (positive) group (default: 9 for a "
                        "recommend question on 0–10, else the symmetric 6)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def resolve_segment(schema: SurveySchema, text: str, columns: pd.Index) -> SegmentSpec:
    wanted = normalise_header(text)
    for segment in schema.segments:
        keys = {normalise_header(k) for k in (segment.name, *segment.candidates)}
        if wanted in keys:
            if segment.name not in columns:
                raise SchemaError(f"--by {text!r}: the segment column {segment.column!r} is not "
                                  "in the file")
            return segment
    known = ", ".join(f"{s.name} ({s.column!r})" for s in schema.segments) or "none"
    raise SchemaError(f"--by {text!r} is not a segment of schema '{schema.name}'; its segments: "
                      f"{known}")


def top_box_name(groups: NetScoreGroups) -> str:
    """The CSAT share's name: "top-k-box" when the positive group is the scale's top k points
    (5–7 on 1–7 is a top-3-box, not the top-2-box CX teams often quote), else the group's name.

    >>> from cx_app.survey.nps import NetScoreGroups
    >>> top_box_name(NetScoreGroups(tuple(range(1, 8)), frozenset({5, 6, 7}), frozenset({1, 2, 3})))
    'top-3-box'
    >>> top_box_name(NetScoreGroups((1, 2, 3, 4, 5), frozenset({3, 5}), frozenset({1})))
    'promoters share'
    """
    top = sorted(groups.positive)
    if top == list(range(top[0], max(groups.classes) + 1)):
        return f"top-{len(top)}-box"
    return f"{groups.positive_name} share"


def _row(result: NpsResult, groups: NetScoreGroups, csat: CsatResult | None, score: str) -> dict:
    row = {"segment": result.label, "n": result.n}
    if result.weighted:
        row["effective n"] = f"{result.n_effective:,.0f}"
    row.update({name: f"{100 * result.shares[name]:.1f}%" for name in groups.names})
    if csat is not None:
        low, high = csat.top_box.ci95
        box = top_box_name(groups)
        row[box] = f"{100 * csat.top_box.value:.1f}%"
        row[f"{box} 95% CI"] = f"[{100 * low:.1f}, {100 * high:.1f}]"
    row[score] = f"{result.value:+.1f}"
    row["95% CI"] = f"[{result.ci95[0]:+.1f}, {result.ci95[1]:+.1f}]"
    return row


def _table(rows: list[dict], first: str = "") -> str:
    return pd.DataFrame(rows).rename(columns={"segment": first}).to_string(index=False)


def _summaries(parts: list[tuple[str, pd.DataFrame]], target: str, weight: str | None,
               groups: NetScoreGroups, csat: bool) -> list[tuple[NpsResult, CsatResult | None]]:
    out = []
    for label, part in parts:
        scores = part[target].to_numpy()
        weights = None if weight is None else part[weight].to_numpy()
        if csat:
            summary = csat_summary(scores, groups=groups, label=label, weights=weights)
            out.append((summary.net, summary))
        else:
            out.append((nps_summary(scores, groups=groups, label=label, weights=weights), None))
    return out


def _comparisons(pairs: list[list[str]], tables: list) -> list[list[NpsChange]]:
    """For each ``--by`` table, the ``--compare`` changes A → B of its values."""
    if pairs and not tables:
        raise SchemaError("--compare needs a segment to compare within: add --by COL")
    out: list[list[NpsChange]] = [[] for _ in tables]
    for a, b in pairs:
        found = False
        for k, (_, results, _) in enumerate(tables):
            by_label = {normalise_header(r.label): r for r, _ in results}
            if normalise_header(a) in by_label and normalise_header(b) in by_label:
                out[k].append(nps_change(by_label[normalise_header(a)],
                                         by_label[normalise_header(b)]))
                found = True
        if not found:
            known = "; ".join(f"{segment.column}: " + ", ".join(r.label for r, _ in results)
                              for segment, results, _ in tables)
            raise SchemaError(f"--compare {a!r} {b!r}: not two values of one --by segment "
                              f"({known})")
    return out


def _change_rows(changes: list[NpsChange]) -> list[dict]:
    return [{"from": c.a_label, "to": c.b_label, "change": f"{c.delta:+.1f}",
             "95% CI": f"[{c.ci95[0]:+.1f}, {c.ci95[1]:+.1f}]", "z": f"{c.z:+.2f}",
             "p": f"{c.p:.3f}", "": "significant" if c.significant() else ""}
            for c in changes]


def _chosen_groups(schema: SurveySchema, low_up_to: int | None,
                   high_from: int | None) -> NetScoreGroups:
    """One cut point alone keeps the other side of the schema's groups."""
    groups = groups_for_schema(schema)
    if low_up_to is None and high_from is None:
        return groups
    low = max(groups.negative) if low_up_to is None else low_up_to
    high = min(groups.positive) if high_from is None else high_from
    return groups_between(groups.classes, low, high, groups.names)


def run(args: argparse.Namespace) -> int:
    survey = survey_from_args(args)
    schema, frame = survey.schema, survey.frame
    target = schema.target.name
    groups = _chosen_groups(schema, args.low_up_to, args.high_from)
    words = vocabulary(schema)
    csat = schema.target.kind == "csat"
    segments = [resolve_segment(schema, text, frame.columns) for text in args.by]

    weight = survey.weight_name
    overall = _summaries([("All", frame)], target, weight, groups, csat)[0]
    tables = []
    for segment in segments:
        results = _summaries(segment_frames(frame, segment.name, target), target, weight,
                             groups, csat)
        changes = []
        if segment.role == "wave":
            nets = [r for r, _ in results]
            changes = [nps_change(a, b) for a, b in zip(nets[:-1], nets[1:], strict=True)]
        tables.append((segment, results, changes))
    compared = _comparisons(args.compare, tables)

    # the NPS base: every respondent with a valid answer (attribute gaps do not matter here)
    excluded = survey.quality.rows_read - survey.quality.respondents
    if args.json:
        document = {
            "file": survey.source.filename,
            "sheet": survey.source.sheet,
            "schema": schema.name,
            "kind": schema.target.kind,
            "score": {"name": words.score_name, "recommend_question": words.is_nps},
            "weight": schema.weight.column if weight is not None else None,
            "groups": {side: {"name": getattr(groups, f"{side}_name"),
                              "scores": sorted(getattr(groups, side))}
                       for side in ("positive", "neutral", "negative")},
            "rows_read": survey.quality.rows_read,
            "respondents": survey.quality.respondents,
            "rows_excluded": excluded,
            "overall": {**overall[0].to_dict(),
                        **({"csat": overall[1].to_dict()} if csat else {})},
            "by": [
                {
                    "segment": segment.name, "column": segment.column, "role": segment.role,
                    "results": [{**r.to_dict(), **({"csat": t.to_dict()} if csat else {})}
                                for r, t in results],
                    "changes": [c.to_dict() for c in changes],
                    "comparisons": [c.to_dict() for c in pairs],
                }
                for (segment, results, changes), pairs in zip(tables, compared, strict=True)
            ],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False, default=str))
        return 0

    source = survey.source
    where = source.filename + (f", sheet '{source.sheet}'" if source.sheet else "")
    print(f"{where}: {survey.quality.respondents:,} respondents with a valid answer"
          + (f" ({excluded:,} rows without one left out: see cx-app validate)"
             if excluded else ""))
    score = words.title
    if weight is not None:
        print(f"weighted by {schema.weight.column!r}: shares and {score} weighted, intervals on "
              "Kish's effective sample size")
    print(f"{score} = % {groups.positive_name} ({score_span(groups.positive)}) − % "
          f"{groups.negative_name} ({score_span(groups.negative)}); 95% adjusted-Wald interval"
          + (f"; {top_box_name(groups)} ({score_span(groups.positive)}) with a Wilson interval"
             if csat else ""))
    if args.low_up_to is None and args.high_from is None:
        print(groups_note(schema, groups))
    else:
        print("Groups chosen with --low-up-to / --high-from.")
    print()
    print(_table([_row(overall[0], groups, overall[1], score)]))
    for (segment, results, changes), pairs in zip(tables, compared, strict=True):
        print(f"\nBy {segment.column!r}")
        print(_table([_row(r, groups, t, score) for r, t in results], segment.column))
        if changes:
            print(f"\nChanges between consecutive {segment.column!r} values (two-sided z test)")
            print(_table(_change_rows(changes)))
        if pairs:
            print(f"\nCompared {segment.column!r} values (change = to − from; two-sided z "
                  "test)")
            print(_table(_change_rows(pairs)))
    return 0
