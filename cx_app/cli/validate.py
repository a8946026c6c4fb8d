"""``cx-app validate FILE``: read a survey and print its data-quality report.

Exit status 0 when the file is usable (at least one respondent row used), 2 when it is not.
``--save-schema PATH`` writes the layout in use as a schema file: the way to confirm a mapping.
"""

from __future__ import annotations

import argparse
import json

from cx_app.cli._common import add_survey_arguments, survey_from_args
from cx_app.reports.definitions import PLAIN_NAMES, survey_labels
from cx_app.survey.importing import SurveyData
from cx_app.survey.schema import describe_schema, save_schema


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a survey file and print its data-quality report")
    add_survey_arguments(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--unlabeled", action="store_true",
                   help="accept a file without the target column (a new, unlabeled wave)")
    p.add_argument("--save-schema", metavar="PATH",
                   help="write the layout in use (inferred or from the mapping flags) as a "
                        "schema file (YAML) for --schema")
    p.set_defaults(func=run)


def report_dict(survey: SurveyData, *, inferred: bool) -> dict:
    schema = survey.schema
    return {
        "file": survey.source.filename,
        "sheet": survey.source.sheet,
        "header_row": survey.source.header_row,
        "schema": schema.name,
        "inferred": inferred,
        "usable": survey.quality.rows_used > 0,
        "target": {
            "name": schema.target.name,
            "column": schema.target.column,
            "kind": schema.target.kind,
            "scale": [schema.target.scale.min, schema.target.scale.max],
            "present": survey.has_target,
        },
        "attributes": [
            {"name": a.name, "column": a.column, "scale": [a.scale.min, a.scale.max]}
            for a in schema.attributes
        ],
        "segments": [{"name": s.name, "column": s.column, "role": s.role}
                     for s in schema.segments if s.name in survey.frame.columns],
        **survey.quality.to_dict(),
        "source": survey.source.to_dict(),
    }


def run(args: argparse.Namespace) -> int:
    inferred = not args.schema and not any(
        getattr(args, f, None) for f in ("target", "scale", "attributes"))
    survey = survey_from_args(args, require_target=not args.unlabeled)
    usable = survey.quality.rows_used > 0
    saved = save_schema(survey.schema, args.save_schema) if args.save_schema else None
    if args.json:
        print(json.dumps(report_dict(survey, inferred=inferred), indent=2, ensure_ascii=False,
                         default=str))
        return 0 if usable else 2
    source = survey.source
    where = source.filename + (f", sheet '{source.sheet}'" if source.sheet else "")
    print(f"{where}: {source.rows_read}")
    if inferred:
        print("no schema given: using the inferred layout below (confirm it with "
              "--save-schema PATH, edit it if needed, then use --schema PATH)")
    print(describe_schema(survey.schema, PLAIN_NAMES))
    print(survey.quality.to_text(labels=survey_labels(survey.schema)))
    if saved is not None:
        print(f"schema saved to {saved} (use it with --schema {saved})")
    if not usable:
        print("not usable: no respondent row passed the checks")
    return 0 if usable else 2
