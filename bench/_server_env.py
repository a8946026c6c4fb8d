"""Run a bench in a child process with the app server's environment.

``cx-app app`` starts its server with one BLAS thread (``cx_app.cli.app.SERVER_THREADS``). BLAS
fixes its thread count when it loads, so a bench that times fits as the server runs them starts
itself again as a child with that environment and returns the child's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

CHILD = "CX_BENCH_SERVER_ENV_CHILD"


def in_server_environment(script: str | Path, measure: Callable[[], str], name: str) -> str:
    """``measure()`` when this process is the child; otherwise ``script`` run as that child
    (its standard error passed on), and what it printed."""
    from cx_app.cli.app import SERVER_THREADS

    if os.environ.get(CHILD):
        return measure()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, **SERVER_THREADS, CHILD: "1"})
    sys.stderr.write(done.stderr)
    if done.returncode:
        raise RuntimeError(f"bench {name} failed:\n{done.stderr[-3000:]}")
    return done.stdout
