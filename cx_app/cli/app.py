"""``cx-app app``: start the Streamlit app (the entry script and ``app_pages/`` live beside the package)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
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


STOP_GRACE_SECONDS = 5.0
"""How long the server has to stop after a forwarded signal before it is terminated."""


def _serve(command: list[str]) -> int:
    """Run the Streamlit server as a child and stop it with us: SIGTERM, SIGINT and SIGHUP
    are forwarded to it, and a server still running when we leave is terminated (then
    killed), so stopping ``cx-app app`` never leaves a server holding the port.

    A server still running :data:`STOP_GRACE_SECONDS` after a forwarded signal is terminated
    too: Streamlit listens on its port before it installs its own handlers, and a SIGINT in
    between may be swallowed (seen once in a loaded test run)."""
    child = subprocess.Popen(command, cwd=ENTRY_SCRIPT.parent, env=os.environ.copy())
    asked: list[float] = []  # when a stop signal was forwarded

    def forward(signum, _frame):
        asked.append(time.monotonic())
        if child.poll() is None:
            child.send_signal(signum)

    handled = [s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s]
    previous = {s: signal.signal(s, forward) for s in handled}
    try:
        while child.poll() is None:
            if asked and time.monotonic() - asked[0] > STOP_GRACE_SECONDS:
                break  # asked to stop, still running: ended below
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.5)
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
    code = child.returncode
    return code if code >= 0 else 128 - code  # ended by a signal: the shell's 128 + N
