"""``cx-app app``: start the Streamlit app (the entry script and ``pages/`` live beside the package)."""

from __future__ import annotations

import argparse
import os
import signal
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
    return _serve(command)


def _serve(command: list[str]) -> int:
    """Run the Streamlit server as a child and stop it with us: SIGTERM, SIGINT and SIGHUP
    are forwarded to it, and a server still running when we leave is terminated (then
    killed), so stopping ``cx-app app`` never leaves a server holding the port."""
    child = subprocess.Popen(command, cwd=ENTRY_SCRIPT.parent, env=os.environ.copy())

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signum)

    handled = [s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s]
    previous = {s: signal.signal(s, forward) for s in handled}
    try:
        return child.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
