"""A bounded, fair pool for training jobs on a shared server (no streamlit import).

The limits and the queue's order (round-robin over users): docs/deployment.md ("Training
pool"); each job runs in a daemon thread of its own. Why these defaults: one job is a whole
"Train" click, so a user's second click waits instead of halving everyone's share; training is
CPU-bound, so more jobs than CPUs would only be slower and add their peak memory together.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import Counter, deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

__all__ = ["ENV_CORES_PER_JOB", "ENV_PER_SERVER", "ENV_PER_USER", "JobPool", "JobState",
           "PoolLimits", "PooledJob", "cores_per_job", "default_jobs_per_server",
           "limits_from_env"]

ENV_PER_USER = "CX_APP_JOBS_PER_USER"
ENV_PER_SERVER = "CX_APP_JOBS_PER_SERVER"
ENV_CORES_PER_JOB = "CX_APP_CORES_PER_JOB"

T = TypeVar("T")


def default_jobs_per_server() -> int:
    """The CPUs this process may use (affinity and cgroup quotas)."""
    from joblib import cpu_count

    return max(1, int(cpu_count()))


def cores_per_job(environ: Mapping[str, str] | None = None) -> int:
    """Worker processes of one training job: ``CX_APP_CORES_PER_JOB``, else every CPU."""
    return _whole(ENV_CORES_PER_JOB, environ) or default_jobs_per_server()


def _whole(var: str, environ: Mapping[str, str] | None) -> int | None:
    """The whole number ``var`` sets (None when unset or blank)."""
    text = (os.environ if environ is None else environ).get(var, "").strip()
    if not text:
        return None
    try:
        number = int(text)
    except ValueError:
        raise ValueError(f"{var}={text!r} is not a whole number") from None
    if number < 1:
        raise ValueError(f"{var}={text!r} must be at least 1")
    return number


@dataclass(frozen=True)
class PoolLimits:
    per_user: int = 1
    per_server: int = field(default_factory=default_jobs_per_server)

    def __post_init__(self) -> None:
        if self.per_user < 1 or self.per_server < 1:
            raise ValueError(f"the job limits must be at least 1 (per user {self.per_user}, "
                             f"per server {self.per_server})")


def limits_from_env(environ: Mapping[str, str] | None = None) -> PoolLimits:
    """The default limits with ``CX_APP_JOBS_PER_USER`` / ``CX_APP_JOBS_PER_SERVER`` applied
    (a misconfiguration raises, never passes silently)."""
    values = {name: _whole(var, environ) for name, var in (("per_user", ENV_PER_USER),
                                                           ("per_server", ENV_PER_SERVER))}
    return PoolLimits(**{name: n for name, n in values.items() if n is not None})


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class PooledJob(Generic[T]):
    def __init__(self, pool: JobPool, number: int, user: str, label: str,
                 work: Callable[[], T]) -> None:
        self.number = number
        self.user = user
        self.label = label
        self.future: Future[T] = Future()
        self._pool = pool
        self._work = work
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"PooledJob({self.number}, user={self.user!r}, label={self.label!r}, {self.state})"

    @property
    def state(self) -> JobState:
        future = self.future
        if future.cancelled():
            return JobState.CANCELLED
        if future.done():
            return JobState.FAILED if future.exception() is not None else JobState.DONE
        return JobState.RUNNING if future.running() else JobState.QUEUED

    @property
    def position(self) -> int | None:
        """1 for the next job to start; None once not queued. Exact while every user with
        queued jobs is below their limit."""
        return self._pool.position(self)

    def cancel(self) -> bool:
        return self._pool.cancel(self)

    def wait(self, timeout: float | None = None) -> bool:
        try:
            self.future.exception(timeout)
        except TimeoutError:
            return False
        except Exception:  # cancelled: concurrent.futures.CancelledError
            pass
        return True

    def result(self, timeout: float | None = None) -> T:
        return self.future.result(timeout)


class JobPool:
    """One per server process; :meth:`shutdown` when the process ends."""

    def __init__(self, limits: PoolLimits | None = None, *, name: str = "cx-app-job") -> None:
        self.limits = limits if limits is not None else limits_from_env()
        self._name = name
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._turns = itertools.count(1)
        self._queues: dict[str, deque[PooledJob[Any]]] = {}
        self._last_turn: Counter[str] = Counter()  # 0: never served
        self._running: Counter[str] = Counter()
        self._started: list[PooledJob[Any]] = []
        self._closed = False

    # ------------------------------------------------------------------ submitting, cancelling

    def submit(self, user: str, work: Callable[[], T], label: str = "") -> PooledJob[T]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the job pool is shut down")
            job: PooledJob[T] = PooledJob(self, next(self._numbers), user, label, work)
            self._queues.setdefault(user, deque()).append(job)
            self._start_what_fits()
        return job

    def cancel(self, job: PooledJob[Any]) -> bool:
        with self._lock:
            queue = self._queues.get(job.user)
            if queue is None or job not in queue:
                return False
            queue.remove(job)
            if not queue:
                del self._queues[job.user]
            return job.future.cancel()

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            self._closed = True
            queued = [job for queue in self._queues.values() for job in queue]
            self._queues.clear()
            threads = [job._thread for job in self._started if job._thread is not None]
        for job in queued:
            job.future.cancel()
        if wait:
            for thread in threads:
                thread.join()

    # ------------------------------------------------------------------ what the pages show

    def queued(self) -> tuple[PooledJob[Any], ...]:
        with self._lock:
            return self._queue_order()

    def running(self) -> tuple[PooledJob[Any], ...]:
        with self._lock:
            return tuple(self._started)

    def position(self, job: PooledJob[Any]) -> int | None:
        with self._lock:
            order = self._queue_order()
        return order.index(job) + 1 if job in order else None

    # ------------------------------------------------------------------ scheduling

    def _queue_order(self) -> tuple[PooledJob[Any], ...]:
        """The queue in the order it empties when the per-user limits allow: each simulated
        start is a turn after every real one."""
        queues = {user: list(queue) for user, queue in self._queues.items()}
        turns = dict(self._last_turn)
        last_real_turn = max(turns.values(), default=0)
        order: list[PooledJob[Any]] = []
        while queues:
            user = min(queues, key=lambda u: (turns.get(u, 0), queues[u][0].number))
            order.append(queues[user].pop(0))
            turns[user] = last_real_turn + len(order)
            if not queues[user]:
                del queues[user]
        return tuple(order)

    def _start_what_fits(self) -> None:
        """Called with the lock held."""
        while sum(self._running.values()) < self.limits.per_server:
            job = next((j for j in self._queue_order()
                        if self._running[j.user] < self.limits.per_user), None)
            if job is None:
                return
            user = job.user
            self._queues[user].popleft()  # the first of a user's jobs in the order is their head
            if not self._queues[user]:
                del self._queues[user]
            if not job.future.set_running_or_notify_cancel():
                continue  # its future was cancelled directly
            self._last_turn[user] = next(self._turns)
            self._running[user] += 1
            self._started.append(job)
            job._thread = threading.Thread(target=self._run, args=(job,), daemon=True,
                                           name=f"{self._name}-{job.number}")
            job._thread.start()

    def _run(self, job: PooledJob[Any]) -> None:
        try:
            value = job._work()
        except BaseException as exc:  # the job's error is its result; the pool goes on
            outcome: tuple[bool, Any] = (False, exc)
        else:
            outcome = (True, value)
        with self._lock:
            self._running[job.user] -= 1
            self._started.remove(job)
            if not self._closed:
                self._start_what_fits()
        # set after the next job was started: whoever waits on this one sees the pool moved on
        if outcome[0]:
            job.future.set_result(outcome[1])
        else:
            job.future.set_exception(outcome[1])
