"""The bounded, fair training pool (cx_app/app/job_pool.py) with fake jobs: each waits for the
test to release it, and the jobs record the order they started in and how many ran at once."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import CancelledError

import pytest

from cx_app.app.job_pool import (
    JobPool,
    JobState,
    PoolLimits,
    cores_per_job,
    default_jobs_per_server,
    limits_from_env,
)

WAIT = 10.0  # s; generous, the jobs start within milliseconds


class FakeJobs:
    """Jobs named like "A1" (user A's first) that start, wait for :meth:`release`, and end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list[str] = []
        self.running: Counter[str] = Counter()  # per user
        self.peak_user = 0
        self.peak_server = 0
        self.events: dict[str, tuple[threading.Event, threading.Event]] = {}

    def work(self, name: str, fail: bool = False):
        started, release = self.events.setdefault(name, (threading.Event(), threading.Event()))
        user = name[0]

        def run() -> str:
            with self.lock:
                self.started.append(name)
                self.running[user] += 1
                self.peak_user = max(self.peak_user, max(self.running.values()))
                self.peak_server = max(self.peak_server, sum(self.running.values()))
            started.set()
            assert release.wait(WAIT), f"{name} was never released"
            with self.lock:
                self.running[user] -= 1
            if fail:
                raise ValueError(f"{name} failed")
            return f"{name} done"

        return run

    def submit(self, pool: JobPool, name: str, fail: bool = False):
        return pool.submit(name[0], self.work(name, fail), label=name)

    def wait_started(self, name: str) -> None:
        assert self.events[name][0].wait(WAIT), f"{name} did not start; started: {self.started}"

    def release(self, name: str) -> None:
        self.events[name][1].set()


@pytest.fixture
def make_pool():
    pools: list[JobPool] = []

    def make(per_user: int, per_server: int) -> JobPool:
        pools.append(JobPool(PoolLimits(per_user=per_user, per_server=per_server)))
        return pools[-1]

    yield make
    for pool in pools:
        pool.shutdown(wait=False)


def _finish(fake: FakeJobs, jobs, name: str, then: str | None = None) -> None:
    """Release ``name``, wait until it ended (and ``then`` started)."""
    fake.release(name)
    assert jobs[name].wait(WAIT)
    if then:
        fake.wait_started(then)


def test_limits_per_user_and_per_server_and_round_robin_order(make_pool):
    pool, fake = make_pool(per_user=1, per_server=2), FakeJobs()
    jobs = {n: fake.submit(pool, n) for n in ("A1", "A2", "A3", "B1", "B2", "C1")}
    fake.wait_started("A1")
    fake.wait_started("B1")
    # A and B hold the 2 places; C was never served, so C1 is next, then A and B in turn
    assert [j.label for j in pool.queued()] == ["C1", "A2", "B2", "A3"]
    assert [jobs[n].position for n in ("C1", "A2", "B2", "A3")] == [1, 2, 3, 4]
    assert jobs["A1"].position is None and jobs["A1"].state is JobState.RUNNING
    assert jobs["C1"].state is JobState.QUEUED
    assert {j.label for j in pool.running()} == {"A1", "B1"}

    _finish(fake, jobs, "A1", then="C1")  # B is at its limit: C1, not B2
    assert [j.label for j in pool.queued()] == ["A2", "B2", "A3"]
    _finish(fake, jobs, "B1", then="A2")  # C at its limit; A served before B
    _finish(fake, jobs, "C1", then="B2")  # A at its limit
    _finish(fake, jobs, "A2", then="A3")
    for name in ("B2", "A3"):
        _finish(fake, jobs, name)
    assert fake.started == ["A1", "B1", "C1", "A2", "B2", "A3"]
    assert fake.peak_user == 1 and fake.peak_server == 2
    assert [jobs[n].result() for n in ("A1", "A3")] == ["A1 done", "A3 done"]
    assert all(j.state is JobState.DONE for j in jobs.values())
    assert pool.queued() == () and pool.running() == ()


def test_ten_queued_jobs_of_one_user_do_not_block_another_users_first(make_pool):
    pool, fake = make_pool(per_user=1, per_server=1), FakeJobs()
    jobs = {f"A{n}": fake.submit(pool, f"A{n}") for n in range(10)}
    fake.wait_started("A0")
    jobs["B0"] = fake.submit(pool, "B0")
    jobs["B1"] = fake.submit(pool, "B1")
    assert jobs["B0"].position == 1 and jobs["A1"].position == 2 and jobs["B1"].position == 3
    assert jobs["A9"].position == 11
    _finish(fake, jobs, "A0", then="B0")
    _finish(fake, jobs, "B0", then="A1")
    _finish(fake, jobs, "A1", then="B1")
    for n in range(2, 10):
        _finish(fake, jobs, "B1" if n == 2 else f"A{n - 1}", then=f"A{n}")
    _finish(fake, jobs, "A9")
    assert fake.started == ["A0", "B0", "A1", "B1", *(f"A{n}" for n in range(2, 10))]
    assert fake.peak_server == 1


def test_two_places_per_user(make_pool):
    pool, fake = make_pool(per_user=2, per_server=3), FakeJobs()
    jobs = {n: fake.submit(pool, n) for n in ("A1", "A2", "A3", "B1")}
    for name in ("A1", "A2", "B1"):
        fake.wait_started(name)
    assert [j.label for j in pool.queued()] == ["A3"]  # A has its 2, the server 3
    _finish(fake, jobs, "B1")
    assert jobs["A3"].position == 1 and jobs["A3"].state is JobState.QUEUED  # A still at 2
    _finish(fake, jobs, "A1", then="A3")
    for name in ("A2", "A3"):
        _finish(fake, jobs, name)
    assert fake.peak_user == 2 and fake.peak_server == 3


def test_a_queued_job_can_be_cancelled_a_running_one_cannot(make_pool):
    pool, fake = make_pool(per_user=1, per_server=1), FakeJobs()
    jobs = {n: fake.submit(pool, n) for n in ("A1", "A2", "B1", "B2")}
    fake.wait_started("A1")
    assert [j.label for j in pool.queued()] == ["B1", "A2", "B2"]
    assert jobs["B1"].cancel() is True
    assert jobs["B1"].state is JobState.CANCELLED and jobs["B1"].position is None
    assert jobs["B1"].wait(0) is True
    with pytest.raises(CancelledError):
        jobs["B1"].result()
    assert jobs["B1"].cancel() is False  # already out
    assert jobs["A1"].cancel() is False  # running: stopped by its own means
    # B, never served, still goes before A's second job
    assert [j.position for j in (jobs["B2"], jobs["A2"])] == [1, 2]
    jobs["A2"].future.cancel()  # a future cancelled directly is skipped too
    _finish(fake, jobs, "A1", then="B2")
    _finish(fake, jobs, "B2")
    assert fake.started == ["A1", "B2"]


def test_a_failed_job_keeps_its_error_and_the_pool_goes_on(make_pool):
    pool, fake = make_pool(per_user=1, per_server=1), FakeJobs()
    jobs = {"A1": fake.submit(pool, "A1", fail=True), "B1": fake.submit(pool, "B1")}
    fake.wait_started("A1")
    assert jobs["B1"].wait(0.05) is False
    _finish(fake, jobs, "A1", then="B1")
    assert jobs["A1"].state is JobState.FAILED
    with pytest.raises(ValueError, match="A1 failed"):
        jobs["A1"].result()
    _finish(fake, jobs, "B1")
    assert jobs["B1"].result() == "B1 done"


def test_shutdown_cancels_the_queue_and_refuses_new_jobs():
    pool, fake = JobPool(PoolLimits(per_user=1, per_server=1)), FakeJobs()
    jobs = {n: fake.submit(pool, n) for n in ("A1", "A2")}
    fake.wait_started("A1")
    # a daemon thread: a server being stopped does not wait for the training to end
    assert [t.daemon for t in threading.enumerate() if t.name == "cx-app-job-1"] == [True]
    fake.release("A1")
    pool.shutdown(wait=True)
    assert jobs["A1"].state is JobState.DONE and jobs["A2"].state is JobState.CANCELLED
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit("A", lambda: None)
    assert fake.started == ["A1"]


def test_limits_from_the_environment():
    assert limits_from_env({}) == PoolLimits(per_user=1, per_server=default_jobs_per_server())
    assert limits_from_env({"CX_APP_JOBS_PER_USER": "2", "CX_APP_JOBS_PER_SERVER": " 6 "}) \
        == PoolLimits(per_user=2, per_server=6)
    with pytest.raises(ValueError, match=r"^CX_APP_JOBS_PER_USER='two' is not a whole number$"):
        limits_from_env({"CX_APP_JOBS_PER_USER": "two"})
    with pytest.raises(ValueError, match=r"^CX_APP_JOBS_PER_SERVER='0' must be at least 1$"):
        limits_from_env({"CX_APP_JOBS_PER_SERVER": "0"})
    with pytest.raises(ValueError, match="at least 1"):
        PoolLimits(per_user=0, per_server=1)


def test_the_default_server_limit_is_the_cpus_this_process_may_use(monkeypatch):
    import joblib

    monkeypatch.setattr(joblib, "cpu_count", lambda: 2)  # a 2-CPU server (or container quota)
    assert PoolLimits() == PoolLimits(per_user=1, per_server=2) == limits_from_env({})
    monkeypatch.setattr(joblib, "cpu_count", lambda: 16)
    assert limits_from_env({"CX_APP_JOBS_PER_USER": "3"}) == PoolLimits(3, 16)


def test_a_job_uses_every_cpu_unless_the_environment_says_fewer(monkeypatch):
    import joblib

    monkeypatch.setattr(joblib, "cpu_count", lambda: 16)
    assert cores_per_job({}) == 16
    assert cores_per_job({"CX_APP_CORES_PER_JOB": " 4 "}) == 4
    with pytest.raises(ValueError, match=r"^CX_APP_CORES_PER_JOB='0' must be at least 1$"):
        cores_per_job({"CX_APP_CORES_PER_JOB": "0"})
