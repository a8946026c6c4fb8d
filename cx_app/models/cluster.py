"""Scale-out on a Dask cluster: connect, check the workers, route joblib's work there.

Everything parallel in :mod:`cx_app.models` and :mod:`cx_app.estimate` (folds, 5×2cv halves,
permutation-importance folds, learning-curve fits) goes through ``joblib.Parallel``. Inside
:func:`on_cluster` those calls run on the cluster through joblib's Dask backend; outside it
nothing changes, and ``dask`` is never imported (the app and the CLI stay local by default).

Same numbers: tasks are the very functions the local run calls, with the same seeds, in
submission order. The survey's arrays go through :func:`share` (scattered once per run to
every worker), fold models through :func:`place` (each once, to one worker), nested joblib
work stays inside its task (:func:`task`). :func:`connect` refuses, with one sentence, a
scheduler it cannot reach and workers whose package versions differ from this machine's.
Setting up the cluster: ``docs/scale-out.md``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from cx_app.errors import ClusterError
from cx_app.provenance import library_versions

SCHEDULER_ENV = "CX_APP_DASK_SCHEDULER"
CONNECT_TIMEOUT = 10.0
"""Seconds to reach the scheduler before giving up with one sentence."""
SHORT_IDLE_SECONDS = 1.0
"""How long a one-shot run's idle loky workers (about 230 MB each) stay
(:func:`short_lived_workers`); a server keeps joblib's 300 s to reuse them warm."""
_IDLE_SECONDS: ContextVar[float] = ContextVar("cx_app_idle_worker_seconds", default=300.0)


def idle_worker_seconds() -> float:
    """joblib's ``idle_worker_timeout`` for the pools started in this context."""
    return _IDLE_SECONDS.get()


@contextlib.contextmanager
def short_lived_workers(seconds: float = SHORT_IDLE_SECONDS) -> Iterator[None]:
    """Pools started inside let their idle workers leave after ``seconds`` (one-shot runs)."""
    token = _IDLE_SECONDS.set(seconds)
    try:
        yield
    finally:
        _IDLE_SECONDS.reset(token)


CHECKED_PACKAGES: tuple[str, ...] = (
    "cx_app", "python", "numpy", "pandas", "sklearn", "scipy", "statsmodels", "xgboost",
    "joblib", "cloudpickle",
)  # fmt: skip
"""What must be the same on every worker as here: the code behind the numbers and the
pickling of tasks."""

SHOWN_NAMES = {"sklearn": "scikit-learn", "cx_app": "cx-app", "xgboost": "xgboost"}


@dataclass(frozen=True)
class ClusterInfo:
    """Which cluster a run used: the scheduler's address, its workers and their threads."""

    address: str
    workers: int
    threads: int

    def describe(self) -> str:
        """One line for the app and the CLI.

        >>> ClusterInfo("tcp://10.0.0.5:8786", 2, 4).describe()
        'running on cluster tcp://10.0.0.5:8786, 2 workers (4 threads)'
        """
        plural = "" if self.workers == 1 else "s"
        return (f"running on cluster {self.address}, {self.workers} worker{plural} "
                f"({self.threads} threads)")


@dataclass
class _Route:
    client: Any
    shared: dict[str, Any] = field(default_factory=dict)


_ROUTE: ContextVar[_Route | None] = ContextVar("cx_app_cluster_route", default=None)


def scheduler_address(flag: str | None = None, environ: Mapping[str, str] | None = None,
                      ) -> str | None:
    """The scheduler: ``flag`` (``--dask-scheduler``), else ``CX_APP_DASK_SCHEDULER``, else None.

    >>> scheduler_address("tcp://a:8786", {"CX_APP_DASK_SCHEDULER": "tcp://b:8786"})
    'tcp://a:8786'
    >>> scheduler_address(None, {"CX_APP_DASK_SCHEDULER": " tcp://b:8786 "})
    'tcp://b:8786'
    >>> scheduler_address(None, {}) is None
    True
    """
    environ = os.environ if environ is None else environ
    value = flag if flag else environ.get(SCHEDULER_ENV, "")
    return value.strip() or None


def environment() -> dict[str, str]:
    """The versions of :data:`CHECKED_PACKAGES` here (run on the workers by :func:`check_versions`)."""
    versions = library_versions()
    out = {k: versions[k] for k in CHECKED_PACKAGES if k in versions}
    for name in ("joblib", "cloudpickle"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def version_mismatches(local: Mapping[str, str], workers: Mapping[str, Mapping[str, str]],
                       ) -> list[tuple[str, str, str, str]]:
    """``(worker, package, worker's version, local version)`` of every difference.

    >>> version_mismatches({"numpy": "2.4.6"}, {"tcp://w1": {"numpy": "2.4.6"},
    ...                                          "tcp://w2": {"numpy": "2.3.0"}})
    [('tcp://w2', 'numpy', '2.3.0', '2.4.6')]
    """
    return [(worker, package, theirs.get(package, "absent"), mine)
            for worker, theirs in sorted(workers.items()) for package, mine in local.items()
            if theirs.get(package, "absent") != mine]


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError(
            "a Dask scheduler was given but dask.distributed is not installed here: "
            "pip install 'cx-app[cluster]' (or unset CX_APP_DASK_SCHEDULER to run locally)"
        ) from None
    return distributed


def check_versions(client: Any, *, local: Mapping[str, str] | None = None) -> None:
    """Refuse (ClusterError) workers whose :func:`environment` differs from ``local``."""
    local = environment() if local is None else local
    try:
        workers = client.run(environment)
    except ImportError as exc:
        raise ClusterError(
            f"the workers of {client.scheduler.address} cannot import cx_app ({exc}): install "
            f"cx-app {local.get('cx_app', '')} and its dependencies on every worker"
        ) from None
    bad = version_mismatches(local, workers)
    if bad:
        worker, package, theirs, mine = bad[0]
        name = SHOWN_NAMES.get(package, package)
        more = f" (and {len(bad) - 1} more difference(s))" if len(bad) > 1 else ""
        raise ClusterError(
            f"worker {worker} has {name} {theirs} but this machine has {name} {mine}{more}: "
            "install the same versions on every worker (docs/scale-out.md) so that the cluster "
            "gives the same numbers"
        )


def connect(address: str, *, timeout: float = CONNECT_TIMEOUT, check: bool = True) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address`` with at least one worker and
    (``check``) the same package versions as here; ClusterError otherwise."""
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({_reason(exc)}): "
            f"start it with `dask scheduler`, or fix --dask-scheduler / {SCHEDULER_ENV}"
        ) from None
    try:
        if not client.scheduler_info().get("workers"):
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (TimeoutError, OSError):
                raise ClusterError(
                    f"the Dask scheduler at {address} has no workers after {timeout:g} s: start "
                    f"some with `dask worker {address}`"
                ) from None
        if check:
            check_versions(client)
    except BaseException:
        client.close()
        raise
    return client


class SharedClient:
    """The server process's one Dask client, shared by its sessions; a new address closes the
    old client before connecting."""

    def __init__(self) -> None:
        self._address: str | None = None
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self, address: str) -> Any:
        """The client of ``address`` (:func:`connect`; ClusterError when it cannot be had)."""
        with self._lock:
            if address != self._address:
                old, self._client, self._address = self._client, None, None
                if old is not None:
                    old.close()
                self._client = connect(address)
                self._address = address
            return self._client


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def cluster_info(client: Any) -> ClusterInfo:
    """Address, worker count and thread count of ``client``'s cluster now."""
    workers = client.scheduler_info().get("workers", {})
    return ClusterInfo(client.scheduler.address, len(workers),
                       sum(int(w.get("nthreads", 0)) for w in workers.values()))


def active() -> bool:
    """Whether joblib work is routed to a cluster here (inside :func:`on_cluster`)."""
    return _ROUTE.get() is not None


def share(*arrays: Any) -> tuple[Any, ...]:
    """The arrays as tasks should receive them: unchanged locally; inside :func:`on_cluster`,
    futures of copies scattered to every worker once per run per content."""
    route = _ROUTE.get()
    if route is None:
        return arrays
    from dask.base import tokenize

    def scattered(a: Any) -> Any:
        key = tokenize(a)
        if key not in route.shared:
            route.shared[key] = route.client.scatter(a, broadcast=True, hash=False)
        return route.shared[key]

    return tuple(None if a is None else scattered(a) for a in arrays)


def place(objects: Sequence[Any]) -> tuple[Any, ...]:
    """Objects each task gets one of (fold models), as tasks should receive them: unchanged
    locally; inside :func:`on_cluster`, futures of copies scattered once, each to one worker.
    joblib's Dask backend scatters an argument itself only when Dask's ``sizeof`` says it is
    large, and that is ``sys.getsizeof`` for a fitted pipeline (tens of bytes): a 160 MB
    forest would otherwise travel inside every task's graph, through the scheduler."""
    route = _ROUTE.get()
    if route is None:
        return tuple(objects)
    futures = route.client.scatter(list(objects), hash=False)
    for f in futures:
        route.shared[f.key] = f
    return tuple(futures)


def _alone(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    from joblib import parallel_config

    with parallel_config(backend="sequential"):
        return fn(*args, **kwargs)


def task(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a joblib task: itself locally; on a cluster, run with joblib's sequential
    backend inside, so that its own nested joblib loops stay in its worker."""
    return fn if _ROUTE.get() is None else functools.partial(_alone, fn)


@contextlib.contextmanager
def on_cluster(client: Any, *, wait_for_workers: float = CONNECT_TIMEOUT) -> Iterator[ClusterInfo]:
    """Run every ``joblib.Parallel`` call of this block on ``client``'s cluster; a lost
    scheduler or a task Dask gave up on ends the block with one ClusterError (callers write
    after the block, so a failed run writes nothing)."""
    distributed = _distributed()
    from joblib import parallel_config
    from joblib.parallel import get_active_backend

    info = cluster_info(client)
    route = _Route(client)
    token = _ROUTE.set(route)
    lost = (distributed.client.FutureCancelledError, distributed.comm.CommClosedError,
            distributed.scheduler.KilledWorker)
    stop = threading.Event()
    try:
        with parallel_config(backend="dask", client=client,
                             wait_for_workers_timeout=wait_for_workers):
            # every Parallel of the block uses this one backend instance
            watchdog = threading.Thread(target=_watch, daemon=True,
                                        args=(client, get_active_backend()[0], info, stop))
            watchdog.start()
            yield info
    except lost as exc:
        raise _lost(info, _what(exc)) from None
    finally:
        stop.set()
        _ROUTE.reset(token)
        futures = list(route.shared.values())
        route.shared.clear()
        if client.status == "running":
            with contextlib.suppress(Exception):
                client.cancel(futures)


def _what(exc: BaseException) -> str:
    """What happened, in words, from the exception Dask gave a task."""
    name = type(exc).__name__
    if name == "KilledWorker":
        return "a task killed every worker that ran it"
    if "connection-lost" in str(exc) or name == "CommClosedError":
        return "the scheduler is gone"
    if name in ("FutureCancelledError", "CancelledError"):
        # every worker holding the run's scattered data died, or the scheduler dropped the task
        return "the workers holding the run's data were lost"
    return f"{name}: {_reason(exc)}"


def _lost(info: ClusterInfo, what: str) -> ClusterError:
    return ClusterError(
        f"the run on the Dask cluster at {info.address} failed ({what}): the scheduler or its "
        "workers were lost; nothing was written, run it again"
    )


def _watch(client: Any, backend: Any, info: ClusterInfo, stop: threading.Event,
           poll: float = 0.2) -> None:
    """Fail the waiting joblib tasks when Dask gives up on them: joblib's Dask backend reports
    a task only when it returns, so a task Dask gave up on or a scheduler gone for good would
    leave ``Parallel`` waiting forever."""
    while not stop.wait(poll):
        gone = client.status not in ("running", "connecting", "newly-created")
        parallel = getattr(backend, "parallel", None)  # the Parallel call now running
        for job in list(getattr(parallel, "_jobs", ())):
            future = getattr(job, "job", None)  # joblib's concurrent Future of that task
            if gone:  # after the client's reconnection timeout; some tasks never reached Dask
                what = "the scheduler is gone"
            elif future is not None and future.done() and future.exception() is not None:
                what = _what(future.exception())
            else:
                continue
            with contextlib.suppress(Exception):
                job(_lost(info, what))  # joblib raises it from Parallel


@contextlib.contextmanager
def scheduler(address: str | None, *, timeout: float = CONNECT_TIMEOUT,
              ) -> Iterator[ClusterInfo | None]:
    """``with scheduler(address) as info:`` runs the block on that cluster (connected, checked,
    closed afterwards); with ``address`` None it yields None and runs locally."""
    if address is None:
        yield None
        return
    client = connect(address, timeout=timeout)
    try:
        with on_cluster(client) as info:
            yield info
    finally:
        client.close()
