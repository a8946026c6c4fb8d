"""The expected time of a cross-validation from the data size, said before a slow model starts.

A cost model per algorithm, with constants measured by ``bench/bench_timing.py`` on the
project's reference machine (2 cores, shared; the app's Train button path: cross-validation
keeping the fold models, then the permutation importance)::

    seconds ≈ folds × c × (n_train / 1000) ** b × (attributes / 10) × work
    n_train = rows × (folds − 1) / folds

``b`` is how the fit grows with the training rows (about 1 for most; the SVM's probability
estimates, an internal 5-fold fit, grow faster), ``c`` the seconds of one fold of 1,000
training rows and 10 attributes. ``work`` scales with the settings that set the amount of work
(trees for forests and boosting, epochs for the networks). A calibrated model fits
``calibration_folds`` models on (k − 1)/k of each training fold. The constants are a quiet
machine's (load average about 1); a busy one is slower by about its load per core
(:func:`load_factor`, which the estimates said before training multiply by), and while a
training runs its time left is refined from the folds already finished
(:func:`remaining_seconds`); ``bench/bench_time_estimate.py`` measures both.

``cnn`` (Keras on JAX; ``CX_BENCH_TIMING_ALGORITHMS=cnn``) times are erratic — 27.5 s, 12.1 s
and 3.2 s for the three runs, larger first: JIT compilation and early stopping — so its
constant is an order of magnitude only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cx_app.errors import AnalysisError

__all__ = ["COSTS", "FAST_FACTOR", "Cost", "expected_seconds", "format_duration", "load_factor",
           "remaining_seconds", "settings_factor"]


@dataclass(frozen=True)
class Cost:
    """Seconds of one fold of 1,000 training rows and 10 attributes (``c``), the growth
    exponent in training rows (``b``) and the setting that scales the work (its value at
    ``c``)."""

    c: float
    b: float
    work_setting: str | None = None
    work_reference: float = 1.0


COSTS: dict[str, Cost] = {
    "lr": Cost(0.088, 0.3),  # fixed costs dominate at these sizes (one BLAS thread)
    "svm": Cost(1.35, 1.57),
    "knn": Cost(1.01, 0.95),  # the permutation importance's predictions dominate
    "nb": Cost(0.10, 0.32),
    "dt": Cost(0.062, 0.3),
    "rf": Cost(1.15, 0.71, "n_estimators", 100),
    "ann": Cost(1.71, 1.01, "max_iter", 100),
    "xgb": Cost(0.59, 0.47, "n_estimators", 100),
    "ordinal": Cost(0.85, 0.46),
    "cnn": Cost(4.8, 0.3, "epochs", 100),  # erratic: JIT compilation, early stopping
}
"""Constants per algorithm id, measured by ``bench/bench_timing.py`` (``bench/RESULTS.md``,
section ``timing``): a least-squares fit of log seconds per fold on log training rows over its
three runs (1,000, 3,000 and 4,000 training rows per fold, 9 attributes, ``papers`` preset), in
the app server's environment (one BLAS thread, XGBoost on one thread) on the 2-core reference
machine at a load average of about 1. A busy server is slower: the fits of
:mod:`cx_app.workspace.fits` replace these constants as soon as the workspace has measured its
own. The lower bound of ``b`` is 0.3 (the fastest models are dominated by fixed costs).
``cnn`` (from an earlier run, two BLAS threads under load): see the module docstring's note."""


FAST_FACTOR: dict[str, float] = {"svm": 0.16, "ann": 0.07}
"""The ``fast`` preset's time over the papers' for the algorithms whose fast preset changes the
solver (svm: bench ``models``, the sample's 10 folds, 33.7 s against 217.5 s in the same run;
ann: bench ``training_times``, where 0.03 — from 12.0 s against 464.8 s in the ``models``
bench, under load with two BLAS threads — put the fast network at 0.44 of its actual time on
one thread); the CNN's fast preset is counted by its epochs (30 of 100)."""


def expected_seconds(algorithm_id: str, *, rows: int, attributes: int, folds: int = 10,
                     settings: Mapping[str, Any] | None = None, calibration: str = "none",
                     calibration_folds: int = 3, preset: str = "papers") -> float:
    """The expected seconds of one cross-validation of ``algorithm_id`` on ``rows``
    respondents and ``attributes`` attributes (see the module docstring).

    >>> c, b = COSTS["lr"].c, COSTS["lr"].b  # 11 folds, n_train 10 (thousand)
    >>> expected_seconds("lr", rows=11_000, attributes=10, folds=11) == 11 * c * 10 ** b
    True
    >>> expected_seconds("rf", rows=1_000, attributes=10, settings={"n_estimators": 200}) == (
    ...     2 * expected_seconds("rf", rows=1_000, attributes=10))
    True
    >>> round(expected_seconds("svm", rows=1_000, attributes=10, preset="fast")
    ...       / expected_seconds("svm", rows=1_000, attributes=10), 2)
    0.16
    """
    cost = COSTS.get(algorithm_id)
    if cost is None:
        raise AnalysisError(f"no time estimate for the algorithm {algorithm_id!r}; known: "
                            f"{', '.join(COSTS)}")
    if rows < 1 or attributes < 1 or folds < 2:
        raise AnalysisError("a time estimate needs at least 1 row, 1 attribute and 2 folds")
    n_train = rows * (folds - 1) / folds / 1000
    work = 1.0
    if cost.work_setting and settings and cost.work_setting in settings:
        work = float(settings[cost.work_setting]) / cost.work_reference
    per_fold = cost.c * n_train ** cost.b * (attributes / 10) * work
    if preset == "fast":
        per_fold *= FAST_FACTOR.get(algorithm_id, 1.0)
    if calibration != "none":
        k = calibration_folds
        per_fold *= k * ((k - 1) / k) ** cost.b
    return folds * per_fold


def settings_factor(algorithm_id: str, *, settings: Mapping[str, Any] | None = None,
                    calibration: str = "none", calibration_folds: int = 3,
                    preset: str = "papers") -> float:
    """How many times longer ``settings`` and ``calibration`` make a training of
    ``algorithm_id`` than its reference settings without calibration, by the cost model (the
    same at any size): the work setting's ratio times the calibration's factor. Learned
    estimates (:mod:`cx_app.workspace.fits`) keep their fits in reference seconds with it.

    >>> round(settings_factor("rf", settings={"n_estimators": 300}), 9)  # 300 trees / 100
    3.0
    >>> b = COSTS["lr"].b  # sigmoid calibration: 3 fits on 2/3 of the rows each
    >>> round(settings_factor("lr", calibration="sigmoid"), 9) == round(3 * (2 / 3) ** b, 9)
    True
    >>> settings_factor("lr", settings={"C": 0.5}, preset="fast")
    1.0
    """
    size = {"rows": 1_000, "attributes": 10, "folds": 10, "preset": preset}
    return (expected_seconds(algorithm_id, settings=settings, calibration=calibration,
                             calibration_folds=calibration_folds, **size)
            / expected_seconds(algorithm_id, **size))


def format_duration(seconds: float) -> str:
    """A rounded duration for a sentence: "under 1 s", "about 40 s", "about 3 min".

    >>> [format_duration(s) for s in (0.4, 7.2, 44, 95, 3600)]
    ['under 1 s', 'about 7 s', 'about 40 s', 'about 2 min', 'about 60 min']
    """
    if seconds < 1:
        return "under 1 s"
    if seconds < 10:
        return f"about {round(seconds)} s"
    if seconds < 60:
        return f"about {round(seconds, -1):.0f} s"
    return f"about {round(seconds / 60):.0f} min"


def load_factor(load: float | None = None, cpus: int | None = None) -> float:
    """How many times slower than on a quiet machine a training runs now: the 1-minute load
    average per core when above 1 (the cores are shared among that many runnable processes),
    else 1. ``load``/``cpus``: this machine's now when ``None`` (1 where the platform has no
    load average).

    >>> load_factor(6.4, 2), load_factor(0.7, 2), load_factor(3.0, 4)
    (3.2, 1.0, 1.0)
    """
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # Windows: no load average
            return 1.0
    return max(1.0, load / (cpus or os.cpu_count() or 1))


PRIOR_WEIGHT = 0.2
"""How much the estimate said before training counts against the pace measured since (as a
share of the whole expected time): with a fifth of the expected work done, the two weigh the
same."""


def remaining_seconds(expected: Sequence[float], share: float, elapsed: float) -> float:
    """The seconds left of a training of ``len(expected)`` models one after the other
    (``expected``: each one's expected seconds, said before it started), ``share`` (0..1) of
    their folds done — each model's folds count equally, as on the progress bar — after
    ``elapsed`` seconds. The estimates are rescaled by the pace measured so far, as a
    progress bar does: pace = (elapsed + w) / (expected work done + w), w =
    :data:`PRIOR_WEIGHT` × the expected total, so the first folds move it a little and the
    later ones a lot (a busy machine is found out by its own folds).

    >>> remaining_seconds([10.0, 30.0], 0.0, 0.0)  # nothing done: the estimate
    40.0
    >>> remaining_seconds([10.0, 30.0], 0.5, 10.0)  # on time: 30 s left
    30.0
    >>> remaining_seconds([10.0, 30.0], 0.5, 30.0)  # 3× slower so far: (30+8)/(10+8) × 30
    63.333333333333336
    >>> remaining_seconds([10.0, 30.0], 1.0, 55.0)
    0.0
    """
    expected = [max(0.0, float(e)) for e in expected]
    total = sum(expected)
    if not expected or total <= 0 or share >= 1:
        return 0.0
    position = max(0.0, share) * len(expected)
    current = min(int(position), len(expected) - 1)
    done = sum(expected[:current]) + (position - current) * expected[current]
    weight = PRIOR_WEIGHT * total
    pace = (max(0.0, elapsed) + weight) / (done + weight)
    return pace * (total - done)
