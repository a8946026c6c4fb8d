"""One BLAS thread while a fold is fitted or scored: :func:`one_blas_thread`.

Why: a survey's model works on narrow matrices (respondents × a few dozen attributes), where a
second BLAS thread saves nothing, and the app is a server whose cores other analysts' trainings
(and other programs) use too. OpenBLAS's threads spin at every call's barrier waiting for each
other; when another process holds the second core, every one of the thousands of small products
of an L-BFGS fit waits for a time slice. Measured on the shared 2-core server (bench
``training_times``, ``bench/RESULTS.md``): a logistic regression of 7,500 respondents × 4
folds took 0.4 s with either setting when the machine was quiet, and 14.5 s with two BLAS
threads against 5.8 s with one under a load average of 9 (2,500 × 3 folds: 1.5 s against
0.65 s). XGBoost's own threads (OpenMP) are the same story and are set by its ``n_jobs``
(:mod:`cx_app.models.algorithms`, fast preset).

What it does: OpenBLAS's thread count is one setting of the whole process (not of a thread),
and threadpoolctl lets only the thread that set it put it back. So the first fit to enter
:func:`one_blas_thread` (no other inside) sets it to 1 with threadpoolctl's context manager
and puts back what was there when it leaves; a fit that enters while another holds the setting
changes nothing and restores nothing. Two trainings overlapping in one server therefore cannot
leave it at 1 for good (two plain ``threadpool_limits`` blocks in two threads, left in the
order they were entered, do: the second one "restores" the 1 it found); the price is that a
fit still running when the one that set it leaves finishes with the process's own setting.
Nothing is set at import. The results do not change beyond floating rounding (the same
products, summed in one thread).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

__all__ = ["blas_threads", "one_blas_thread"]

_lock = threading.Lock()
_holder: Any = None
"""The limit in force, entered by the fit that set it (None: no fit holds one)."""


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """The BLAS libraries (OpenBLAS, MKL, …) on one thread for the block, unless another fit
    holds that setting already: see the module docstring. Safe from several threads at once
    and nested."""
    global _holder
    with _lock:
        mine = _holder is None
        if mine:
            _holder = _controller().limit(limits=1, user_api="blas")
            _holder.__enter__()
    try:
        yield
    finally:
        if mine:
            with _lock:
                _holder.__exit__(None, None, None)
                _holder = None


@cache
def _controller() -> Any:
    """threadpoolctl's view of the libraries loaded at the first fit (numpy's and scipy's
    BLAS are loaded by then: scikit-learn imports them); found once, as finding them reads the
    process's memory map (6 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def blas_threads() -> int:
    """The most threads any loaded BLAS library uses now (1 when none is loaded)."""
    from threadpoolctl import threadpool_info

    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"),
               default=1)
