"""``cx-app program ...``: CX programs kept in the workspace database, for monthly automation.

The CLI is the server operator's tool, so it is unrestricted by default; ``--as EMAIL`` with a
teams file acts as that user of team mode, recorded as ``ACCOUNT (as EMAIL)``. A teams file
without ``--as`` only checks that ``--team`` names one of its teams.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from functools import partial

from cx_app.cli._common import (
    add_survey_arguments,
    add_training_arguments,
    fmt_ci,
    model_words,
    progress_printer,
    schema_from_args,
    segment_line,
    survey_from_args,
)
from cx_app.cli.app import ENV_TEAMS
from cx_app.errors import AccessDenied, CxAppError


def _add_db(parser: argparse.ArgumentParser) -> None:
    from cx_app.workspace.database import ENV_URL, default_database_path

    parser.add_argument("--db", metavar="URL",
                        help=f"workspace database URL (default: ${ENV_URL}, else "
                             f"sqlite:///{default_database_path()})")
    parser.add_argument("--teams", metavar="FILE",
                        help=f"the teams file of team mode (default: ${ENV_TEAMS}); with --as "
                             "the command is checked as that user")
    parser.add_argument("--as", dest="as_user", metavar="EMAIL",
                        help="act as this user of the teams file: only their teams' programs "
                             "and their role's actions (default: unrestricted, as the server's "
                             "operator)")


def _action(commands: argparse._SubParsersAction, action: str, func, help: str, *,
            named: bool = True, in_workspace: bool = True) -> argparse.ArgumentParser:
    """One ``program`` action's parser, with the program's ``NAME`` first when ``named``;
    ``func(ws, args)`` runs with the workspace open (``in_workspace``), else ``func(args)``."""
    parser = commands.add_parser(action, help=help)
    if named:
        parser.add_argument("name", metavar="NAME")
    parser.set_defaults(func=partial(_in_workspace, func) if in_workspace else func)
    return parser


def _in_workspace(action, args: argparse.Namespace) -> int:
    with _workspace(args) as ws:
        action(ws, args)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("program", help="CX programs in the workspace database: reference "
                                       "survey, model, waves, tracker and reports")
    commands = p.add_subparsers(dest="program_command", required=True, metavar="ACTION")

    c = _action(commands, "create", _create, "a new program: its reference survey and model",
                named=False)
    c.add_argument("name", metavar="NAME", help="the program's name (e.g. bank-nps)")
    add_survey_arguments(c)
    add_training_arguments(c)
    c.add_argument("--team", metavar="NAME", help="the team the program belongs to (team mode)")
    c.add_argument("--keep-survey", action="store_true",
                   help="store the survey file and the wave files themselves in the "
                        "workspace (default: only their names, sheets and SHA-256; respondent "
                        "data stays out)")

    a = _action(commands, "add-wave", _add_wave, "estimate and store new waves (the same file "
                                                 "twice is one wave)")
    a.add_argument("files", metavar="FILE", nargs="+", help="wave files (.xlsx, .csv, ...)")
    a.add_argument("--label", help="the wave's label (one file; default: its wave column, "
                                   "else a wave or date in its file name)")
    a.add_argument("--sheet", metavar="NAME", help="sheet name or number (default: the first "
                                                   "sheet matching the program's mapping)")
    a.add_argument("--audit", metavar="SAMPLE",
                   help="a few respondents of this wave with their answers (one wave file): "
                        "the tracker shows the audited net score (prediction-powered)")

    r = _action(commands, "remove-wave", _remove_wave, "remove a wave and its estimates")
    r.add_argument("label", metavar="LABEL")
    r.add_argument("--sha256", help="the wave file's SHA-256 (or its start), when two files "
                                    "carry the same label")

    s = _action(commands, "show", _show, "the program's waves in wave order with their "
                                         "estimated (and realized) net scores by segment")
    s.add_argument("--model", help="the model whose estimates to show (default: the one with the "
                   "smallest held-out net-score error, as the New wave page preselects)")
    s.add_argument("--json", action="store_true", help="print the program as JSON")

    rep = _action(commands, "report", _report, "report.xlsx and report.html of the program, "
                                               "with the tracker over all waves, and its deck "
                                               "NAME.pptx")
    rep.add_argument("--out", required=True, metavar="DIR", help="output folder")

    _action(commands, "list", _list, "the programs of the workspace", named=False)

    e = _action(commands, "export", _export, "write one program as a project file (.cxproj)")
    e.add_argument("out", metavar="FILE.cxproj")

    i = _action(commands, "import", _import, "add the program of a project file (.cxproj)",
                named=False)
    i.add_argument("file", metavar="FILE.cxproj")
    i.add_argument("--name", help="the program's name (default: the exported one)")
    i.add_argument("--team", metavar="NAME", help="the team the program belongs to (team mode)")

    _action(commands, "delete", _delete, "delete a program and everything stored with it (its "
                                         "audit trail stays)")

    m = _action(commands, "move", _move, "give a program to another team")
    m.add_argument("--team", required=True, metavar="NAME", help="the team it goes to")

    au = _action(commands, "audit", _audit, "the program's audit trail: who changed what, and "
                                            "when (newest first)")
    au.add_argument("--json", action="store_true", help="print the rows as JSON")

    fs = _action(commands, "forget-sign-in", _forget_sign_in, "release an address bound to a "
                 "sign-in account (team mode: the person's address or account changed)",
                 named=False, in_workspace=False)
    fs.add_argument("email", metavar="EMAIL")

    for parser in commands.choices.values():  # the database options last in each --help
        _add_db(parser)


def _workspace(args: argparse.Namespace):
    import os

    from cx_app.workspace.access import Actor
    from cx_app.workspace.audit import cli_user
    from cx_app.workspace.programs import Workspace
    from cx_app.workspace.teams import load_teams

    path = args.teams or os.environ.get(ENV_TEAMS) or None
    teams = None if path is None else load_teams(path)
    if args.as_user is None:
        if teams is not None and getattr(args, "team", None) is not None:
            Actor(cli_user(), teams).require_known_team(args.team)
        return Workspace.open(args.db)
    if teams is None:
        raise CxAppError(f"--as {args.as_user} needs the teams file that says what this user "
                         f"may do: give --teams FILE or set {ENV_TEAMS}")
    return Workspace.open(args.db, user=f"{cli_user()} (as {args.as_user})",
                          teams=teams, acting_as=args.as_user)


def _calibration_progress(algorithm: str, calibration: str):
    """The fold lines of the training; with ``auto`` each title says which calibration it
    cross-validates (they are tried in the order of ``CALIBRATION_METHODS``)."""
    from cx_app.estimate.calibration import CALIBRATION_METHODS

    printer = progress_printer([algorithm])
    if calibration != "auto":
        return printer
    titles = enumerate(CALIBRATION_METHODS, 1)

    def progress(done: int, total: int, message: str) -> None:
        if not done and (tried := next(titles, None)) is not None:
            k, m = tried
            message += (f" (calibration {k} of {len(CALIBRATION_METHODS)}: probabilities "
                        + ("as trained)" if m == "none" else f"recalibrated, {m})"))
        printer(done, total, message)

    return progress


def _create(ws, args: argparse.Namespace) -> None:
    from cx_app.reports.definitions import PLAIN_NAMES, survey_labels
    from cx_app.survey.schema import describe_schema

    ws.check_new_program(args.team)
    survey = survey_from_args(args)  # what validate prints, before the long training
    print(describe_schema(survey.schema, PLAIN_NAMES))
    print(survey.quality.to_text(labels=survey_labels(survey.schema)), flush=True)
    view = ws.create_program(
        args.name, args.file, schema=schema_from_args(args), sheet=args.sheet,
        algorithm=args.algorithm, preset=args.preset, calibration=args.calibration,
        folds=args.folds, seed=args.seed, keep_survey=args.keep_survey,
        missing_policy=args.missing_policy, team=args.team,
        progress=_calibration_progress(args.algorithm, args.calibration))
    model = view.models[0]
    print(f"created program {view.name} in {ws.database.shown_url}: "
          f"{view.survey.describe()}, model {model_words(model.algorithm, model.preset)}, "
          f"calibration {model.calibration}, trained on {model.training_n:,} respondents")


def _add_wave(ws, args: argparse.Namespace) -> None:
    for added in ws.add_waves(args.name, args.files, label=args.label, sheet=args.sheet,
                              audit_sample=args.audit):
        print(added.describe())


def _remove_wave(ws, args: argparse.Namespace) -> None:
    ws.remove_wave(args.name, args.label, sha256=args.sha256)
    print(f"removed wave {args.label} from {args.name}")


def _show(ws, args: argparse.Namespace) -> None:
    from cx_app.models.names import model_display_name
    from cx_app.survey.vocabulary import vocabulary

    view = ws.show(args.name, model=args.model)
    if args.json:
        print(json.dumps(view.to_dict(), indent=1, ensure_ascii=False))
        return
    schema = ws.schema(args.name)
    titles = {s.name: s.column for s in schema.segments}
    score = vocabulary(schema).short_name
    models = ", ".join(model_display_name(m.model_id) for m in view.models)
    print(f"program {view.name}: {view.survey.describe()}; models {models}; "
          f"{len(view.waves)} wave(s)" + (f"; team {view.team}" if view.team else ""))
    if len(view.models) > 1 and view.waves:
        print(f"estimated by {model_display_name(view.waves[0].model_id)}"
              + ("" if args.model else " (chosen by held-out net-score error, as the New wave page; --model for another)"))
    for wave in view.waves:
        est, real = wave.estimated_nps, wave.realized_nps
        line = (f"{wave.label}: {wave.respondents:,} respondents, "
                f"{'estimated' if est.audited_n is None else 'audited'} {score} "
                f"{est.value:+.1f} {fmt_ci(1, est.ci95)}"
                + ("" if est.audited_n is None else
                   f" from {est.audited_n:,} audited answers (label-free {est.label_free:+.1f})"))
        if real is not None:  # over the respondents who answered the target, said when fewer
            line += f"; realized {real.value:+.1f}" + (
                f" ({real.n:,} answered)" if real.n is not None and real.n < wave.respondents
                else "")
        print(line + f"  ({wave.filename})")
        for by, values in wave.segments.items():
            for value, figure in values.items():
                print(segment_line(titles.get(by, by), value, figure.respondents,
                                   figure.estimated_nps, figure.note))
    for wave in view.waves:
        for warning in wave.estimate.warnings:
            print(f"warning: {wave.label}: {warning}", file=sys.stderr)


def _report(ws, args: argparse.Namespace) -> None:
    from cx_app.workspace.reporting import write_program_reports

    for path in write_program_reports(ws, args.name, args.out).values():
        print(f"wrote {path}")


def _list(ws, args: argparse.Namespace) -> None:
    from cx_app.models.names import model_display_name

    programs = ws.list_programs()
    if not programs:
        print(f"no program in {ws.database.shown_url} yet (cx-app program create)")
    for p in programs:
        models = ", ".join(map(model_display_name, p.models))
        print(f"{p.name}: {p.survey.describe()}; models {models}; "
              f"{p.waves} wave(s); created {p.created:%Y-%m-%d %H:%M} UTC"
              + (f"; team {p.team}" if p.team else ""))


def _export(ws, args: argparse.Namespace) -> None:
    from cx_app.workspace.transfer import export_program

    export_program(ws, args.name, args.out)
    print(f"wrote {args.out}")


def _import(ws, args: argparse.Namespace) -> None:
    from cx_app.workspace.transfer import import_program

    name = import_program(ws, args.file, name=args.name, team=args.team)
    print(f"imported program {name} into {ws.database.shown_url}")


def _delete(ws, args: argparse.Namespace) -> None:
    ws.delete_program(args.name)
    print(f"deleted program {args.name} from {ws.database.shown_url}")


def _move(ws, args: argparse.Namespace) -> None:
    ws.move_program(args.name, args.team)
    print(f"moved program {args.name} to team {args.team}")


def _forget_sign_in(args: argparse.Namespace) -> int:
    from cx_app.workspace.identities import forget_identity

    if args.as_user is not None:
        raise AccessDenied("releasing a sign-in address is the server operator's (no --as)")
    with _workspace(args) as ws:
        removed = forget_identity(ws.database, args.email)
    print(f"released {args.email.strip().lower()}: its next sign-in binds it again"
          if removed else f"no sign-in account is bound to {args.email.strip().lower()}")
    return 0


def _audit(ws, args: argparse.Namespace) -> None:
    rows = ws.audit(args.name)
    if args.json:
        print(json.dumps([{**dataclasses.asdict(r), "created": r.created.isoformat()}
                          for r in rows], indent=1, ensure_ascii=False))
        return
    for r in rows:
        print(f"{r.created:%Y-%m-%d %H:%M:%S} UTC  {r.user}  {r.action}"
              + (f": {r.detail}" if r.detail else ""))
