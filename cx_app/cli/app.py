"""``cx-app app``: start the Streamlit app (the entry script and ``pages/`` live beside the package)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from cx_app.errors import CxAppError

ENTRY_SCRIPT = Path(__file__).resolve().parents[2] / "streamlit_app.py"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("app", help="start the web app (Streamlit)")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="localhost")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not ENTRY_SCRIPT.exists():
        raise CxAppError(
            f"the app's entry script {ENTRY_SCRIPT} is missing: run the app from a source checkout"
        )
    command = [
        sys.executable, "-m", "streamlit", "run", str(ENTRY_SCRIPT),
        "--server.port", str(args.port), "--server.address", args.address,
    ]
    return subprocess.call(command, cwd=ENTRY_SCRIPT.parent, env=os.environ.copy())
