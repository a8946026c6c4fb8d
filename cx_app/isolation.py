"""Untrusted input handled in a child process with limits: the one module that starts one.

The parent hands a hostile workbook, SPSS/Stata or model file to a child (:func:`run_child`: one
JSON header line, then the bytes, on its stdin); the child (:func:`child_main`) limits itself
first (``RLIMIT_AS``, ``RLIMIT_CPU``, one thread per numeric library). A child stopped by a
limit, a signal or the wall-clock bound is one :class:`ChildStopped` sentence naming the file.

>>> limits = ChildLimits(512 * 1024 * 1024, 1, "CX_APP_READER_MEMORY_MB", "CX_APP_READER_CPU_SECONDS")
>>> limits.wall_seconds(shares=2), _reason(-24, b""), _reason(OUT_OF_MEMORY, b"")
(34, 'cpu', 'memory')
>>> print(say({"subject": "the reader", "outcome": "the file was not read"}, "cpu", "a.xlsx", limits))
a.xlsx: the reader used up its CPU-time limit (1 s, CX_APP_READER_CPU_SECONDS) and was stopped; the file was not read
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cx_app.errors import CxAppError

FAILED = 2
"""The child's exit status when it refuses its input (a JSON ``{"failure": ...}`` answer)."""
OUT_OF_MEMORY = 3
"""The child's exit status after a ``MemoryError`` the work did not handle."""
WALL_MARGIN_SECONDS = 30
"""Wall-clock time a child may take beyond twice its CPU time (waiting for a core)."""
_CHILD_ENV = {**dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"), "1"),
              "MALLOC_ARENA_MAX": "2", "RUST_BACKTRACE": "0"}
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
_SAY = {
    "memory": "{where}: {subject} ran out of its memory limit ({memory}, {memory_var}) and was "
              "stopped; {outcome}",
    "cpu": "{where}: {subject} used up its CPU-time limit ({cpu} s, {cpu_var}) and was stopped; "
           "{outcome}",
    "wall": "{where}: {subject} did not finish within {wall} s and was stopped; {outcome}",
    "signal": "{where}: {subject} was killed by signal {signal}; {outcome}",
    "exit": "{where}: {subject} failed (exit status {code}); {outcome}",
    "start": "{where}: {subject} could not be started ({error}); {outcome}",
}
"""The sentence of each reason a child stops (a caller's wording may replace any)."""


@dataclass(frozen=True)
class ChildLimits:
    """What one child may use: address space, CPU time per share of the work (one file), and
    the environment variables setting them."""

    memory_bytes: int
    cpu_seconds: int
    memory_var: str
    cpu_var: str

    def wall_seconds(self, shares: int = 1) -> int:
        """The parent's wall-clock bound for ``shares`` shares of CPU time."""
        return 2 * self.cpu_seconds * shares + WALL_MARGIN_SECONDS


class ChildStopped(CxAppError):
    """A child stopped before it answered, for ``reason`` (a key of ``_SAY``); ``output`` is
    what it wrote before (its answers so far)."""

    def __init__(self, sentence: str, reason: str, output: bytes = b"") -> None:
        super().__init__(sentence)
        self.reason, self.output = reason, output


def env_number(var: str, default: float, environ: Mapping[str, str] | None = None,
               error: type[Exception] = ValueError) -> float:
    """The positive number ``var`` sets (``default`` when unset or blank); ``error`` naming it
    otherwise (a misconfigured server must not pass)."""
    text = (os.environ if environ is None else environ).get(var, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        raise error(f"{var}={text!r} is not a number") from None
    if not value > 0:
        raise error(f"{var}={text!r} must be positive")
    return value


def say(wording: Mapping[str, str], reason: str, where: str, limits: ChildLimits,
         **detail: object) -> str:
    """The sentence for a child of ``where`` stopped for ``reason``, in ``wording`` (its
    ``subject`` and ``outcome``, and any sentence of ``_SAY`` it replaces)."""
    from cx_app.archive_limits import megabytes  # in the parent only: children skip numpy

    return wording.get(reason, _SAY[reason]).format(
        where=where, subject=wording["subject"], outcome=wording["outcome"],
        cpu=limits.cpu_seconds, memory=megabytes(limits.memory_bytes),
        memory_var=limits.memory_var, cpu_var=limits.cpu_var, **detail)


def run_child(command: list[str], request: object, data: bytes, limits: ChildLimits,
              where: str, wording: Mapping[str, str], *, shares: int = 1,
              checks: Callable[[], object] | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` (whose entry is :func:`child_main`) on ``request`` and ``data`` within
    ``limits`` while ``checks`` run here (one that raises stops the child): exit status 0 or
    :data:`FAILED` and the output, or :class:`ChildStopped`."""
    header = {"limits": [limits.memory_bytes, limits.cpu_seconds, shares], "request": request}
    wall = limits.wall_seconds(shares)
    path = os.pathsep.join(filter(None, [_PACKAGE_ROOT, os.environ.get("PYTHONPATH")]))
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, cwd=_PACKAGE_ROOT,
                                 env={**os.environ, **_CHILD_ENV, "PYTHONPATH": path})
    except OSError as exc:
        raise ChildStopped(say(wording, "start", where, limits, error=exc.strerror or exc),
                           "start") from None
    with child, ThreadPoolExecutor(1) as pool:
        talk = pool.submit(child.communicate, json.dumps(header).encode() + b"\n" + data, wall)
        try:
            if checks is not None:
                checks()
            stdout, stderr = talk.result()
        except subprocess.TimeoutExpired:
            child.kill()
            raise ChildStopped(say(wording, "wall", where, limits, wall=wall), "wall") from None
        except BaseException:  # a check refused the file: the child is not needed
            child.kill()
            raise
    code = child.returncode
    if code in (0, FAILED):
        return subprocess.CompletedProcess(command, code, stdout, stderr)
    reason = _reason(code, stderr)
    name = next((s.name for s in signal.Signals if s == -code), f"number {-code}")
    raise ChildStopped(say(wording, reason, where, limits, signal=name, code=code), reason,
                       stdout)


def _reason(code: int, stderr: bytes) -> str:
    """Why a child ended with exit status ``code`` (neither 0 nor :data:`FAILED`)."""
    if code == OUT_OF_MEMORY or (code == -signal.SIGABRT and b"memory allocation" in stderr):
        return "memory"
    if code == -signal.SIGXCPU:  # the soft limit's signal (SIGKILL may come from anyone)
        return "cpu"
    if code < 0:
        return "signal"
    return "memory" if b"MemoryError" in stderr else "exit"


def child_main(work: Callable[[bytes, object], None]) -> None:
    """A child's entry: read the header, limit this process (address space; CPU time for all
    shares, the first share now), then ``work(the input's bytes, the request)``."""
    import resource

    header = json.loads(sys.stdin.buffer.readline())
    memory, seconds, shares = header["limits"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    used = _cpu_used()  # the soft limit sends SIGXCPU; the hard one, a second later, SIGKILL
    resource.setrlimit(resource.RLIMIT_CPU, (used + seconds, used + seconds * shares + 1))
    try:
        work(sys.stdin.buffer.read(), header["request"])
    except MemoryError:
        sys.exit(OUT_OF_MEMORY)


def next_cpu_share(seconds: int) -> None:
    """In a child: the next share of the work may use ``seconds`` of CPU time from now."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = _cpu_used() + seconds
    resource.setrlimit(resource.RLIMIT_CPU,
                       (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _cpu_used() -> int:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int(usage.ru_utime + usage.ru_stime)


def refuse(kind: str, **detail: object) -> None:
    """In a child: answer ``{"failure": kind, **detail}`` and exit with :data:`FAILED`."""
    sys.stdout.write(json.dumps({"failure": kind, **detail}))
    sys.stdout.flush()
    sys.exit(FAILED)
