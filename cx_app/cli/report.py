"""``cx-app report RESULTS.json [--new-wave ESTIMATE.json] --out FILE.xlsx|FILE.html``.

Re-renders a report from saved results without retraining anything.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cx_app.estimate.document import check_estimate_belongs, read_wave_estimate
from cx_app.models.results import read_results
from cx_app.reports import write_report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an Excel or HTML report from saved results",
                       description="Write the metric report (Excel workbook or self-contained "
                                   "HTML) from the results.json of 'cx-app evaluate --out DIR'.")
    p.add_argument("results", metavar="RESULTS.json", help="results file of 'cx-app evaluate'")
    p.add_argument("--new-wave", metavar="ESTIMATE.json",
                   help="new-wave estimate from 'cx-app estimate --json' (adds a New wave part)")
    p.add_argument("--out", metavar="FILE", required=True,
                   help="report file: FILE.xlsx (workbook) or FILE.html (self-contained page)")
    p.add_argument("--respondent-data", action="store_true",
                   help="include respondent-level values (the contents of excluded cells)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    results = read_results(args.results)
    new_wave = read_wave_estimate(args.new_wave) if args.new_wave else None
    if new_wave is not None:
        check_estimate_belongs(results, new_wave, results_name=Path(args.results).name,
                               estimate_name=Path(args.new_wave).name)
    path = write_report(results, args.out, new_wave, respondent_data=args.respondent_data,
                        source_name=Path(args.results).name)
    print(f"wrote {path}")
    return 0
