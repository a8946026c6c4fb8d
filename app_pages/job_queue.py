"""The server's training queue: one :class:`~cx_app.app.job_pool.JobPool` per server process
(``st.cache_resource``), limits from ``CX_APP_JOBS_PER_USER`` / ``CX_APP_JOBS_PER_SERVER``
(:func:`~cx_app.app.job_pool.limits_from_env`). Every "Train" of every session runs through it
as the job of the person the app acts for (:func:`app_pages.team_mode.current_user`), so one
user's many clicks cannot starve the others; a queued job's page says how many are ahead."""

from __future__ import annotations

import streamlit as st

from app_pages import common, team_mode
from cx_app.app.job_pool import JobPool, PoolLimits, limits_from_env
from cx_app.app.training import TrainingJob


@st.cache_resource(max_entries=1, show_spinner=False)  # no TTL: one pool for the server's life
def training_pool() -> JobPool:
    """The process-wide pool every session's training runs through."""
    return JobPool(limits_from_env(), name="cx-app-training")


def start(job: TrainingJob) -> TrainingJob | None:
    """Start ``job`` in the server's pool as the current user's; None (and the reason on the
    page) when the server's job limits are misconfigured."""
    try:
        pool = training_pool()
    except ValueError as exc:  # limits_from_env: a bad CX_APP_JOBS_* value, named
        st.error(common.md_escape(f"Training is not available on this server: {exc}."))
        return None
    return job.start(pool=pool, user=team_mode.current_user())


def waiting_sentence(position: int, limits: PoolLimits) -> str:
    """What a queued job's page says: its place in the queue and the server's limits."""
    return (f"Waiting for the server: {position - 1} training job(s) ahead of yours in the "
            f"queue (yours is number {position}); the server trains {limits.per_server} "
            f"job(s) at a time, {limits.per_user} per person.")


def waiting(job: TrainingJob) -> str | None:
    """:func:`waiting_sentence` of a queued job; None when it is not queued."""
    position = job.position
    return None if position is None else waiting_sentence(position, training_pool().limits)
