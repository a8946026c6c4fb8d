"""Run a command in a process of its own and measure its peak memory from outside.

``ru_maxrss`` of a child forked from the test process counts the pages it shared with its
parent before ``exec``: after a long test session the pytest process holds well over 1 GB, and
every child it forks then "peaks" at that size. So the command is started by a small Python
wrapper (a fresh process of about 10 MB), which reports its own children's peak: the
command's, with no inherited pages.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[2:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(json.dumps({'returncode': done.returncode, 'peak_kb': peak}))\n"
)


@dataclass(frozen=True)
class Measured:
    """A finished command: its exit code (negative: the signal that ended it), output, wall
    time and peak resident memory."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float


def run_measured(args: list[str], *, cwd: str | Path | None = None, env: dict | None = None,
                 timeout: float = 300) -> Measured:
    """Run ``args`` and measure it (see the module docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "usage.json"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _WRAPPER, str(report), *args], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - started
        usage = json.loads(report.read_text())
    return Measured(usage["returncode"], done.stdout, done.stderr, seconds,
                    usage["peak_kb"] / 1024)
