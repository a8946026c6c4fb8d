"""``cx-app report``: the Excel or HTML report of saved results, an estimate or a project.

Nothing is retrained. A new-wave estimate must belong to the results (its model trained on the
same survey, classes and attributes; with a project, one of the project's model files).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cx_app.atomic_files import write_text_atomic
from cx_app.errors import CxAppError
from cx_app.estimate.document import check_estimate_belongs, read_wave_estimate
from cx_app.models.results import Results, read_results
from cx_app.reports import write_report, write_reports


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an Excel or HTML report from saved results",
                       description="Write the metric report (Excel workbook or self-contained "
                                   "HTML) from the results.json of 'cx-app evaluate --out DIR', "
                                   "or every report and results.json from a project file.")
    p.add_argument("results", metavar="RESULTS.json", nargs="?",
                   help="results file of 'cx-app evaluate'")
    p.add_argument("--project", metavar="FILE.cxproj",
                   help="a project file ('cx-app evaluate --project' or the app's Save project) "
                        "instead of RESULTS.json; --out is then a folder")
    p.add_argument("--new-wave", metavar="ESTIMATE.json",
                   help="new-wave estimate from 'cx-app estimate --json' (adds a New wave part)")
    p.add_argument("--out", metavar="FILE", required=True,
                   help="report file: FILE.xlsx (workbook) or FILE.html (self-contained page); "
                        "with --project, a folder")
    p.add_argument("--respondent-data", action="store_true",
                   help="include respondent-level values (the contents of excluded cells)")
    p.set_defaults(func=run)


def _project_results(path: str) -> tuple[Results, str, list[str]]:
    import json

    from cx_app.project import read_project

    project = read_project(path)
    if project.results is None:
        raise CxAppError(f"{Path(path).name} holds no results (no model was evaluated when it "
                         "was saved): train models, then save the project again.")
    return (Results.from_dict(json.loads(project.results), source=Path(path).name),
            project.results, project.final_model_sha256())


def run(args: argparse.Namespace) -> int:
    if (args.results is None) == (args.project is None):
        raise CxAppError("give either RESULTS.json or --project FILE.cxproj (one of them)")
    models = None
    if args.project:
        results, text, models = _project_results(args.project)
        source = Path(args.project).name
    else:
        results, text, source = read_results(args.results), None, Path(args.results).name
    new_wave = read_wave_estimate(args.new_wave) if args.new_wave else None
    if new_wave is not None:
        check_estimate_belongs(results, new_wave, results_name=source,
                               estimate_name=Path(args.new_wave).name,
                               model_sha256=models or None)
    if text is not None:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_text_atomic(out / "results.json", text)
        except OSError as exc:
            raise CxAppError(f"cannot write into {out}: {exc.strerror or exc}") from None
        paths = write_reports(results, out, new_wave, respondent_data=args.respondent_data)
        for path in (out / "results.json", *paths.values()):
            print(f"wrote {path}")
        return 0
    path = write_report(results, args.out, new_wave, respondent_data=args.respondent_data,
                        source_name=source)
    print(f"wrote {path}")
    return 0
