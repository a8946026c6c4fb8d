"""``cx-app``: the command line over the same library the app uses.

Each subcommand lives in its own module ``cx_app.cli.<name>`` exposing ``register(subparsers)``
(which adds the subparser and sets ``func``). Errors of the library's own type are printed as
one clear sentence and exit with status 2; nothing prints a traceback to an analyst.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from cx_app import __version__
from cx_app.errors import CxAppError

SUBCOMMANDS = ("validate", "nps", "reduce", "evaluate", "train", "estimate", "report", "program",
               "app")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``cx-app`` parser; ``only``: with that subcommand alone (a command run imports
    its own module, not every command's libraries)."""
    parser = argparse.ArgumentParser(prog="cx-app", description="CX driver analytics")
    parser.add_argument("--version", action="version", version=f"cx-app {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS if only is None else (only,):
        importlib.import_module(f"cx_app.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CxAppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` or similar: stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
