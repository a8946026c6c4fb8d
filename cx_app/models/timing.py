"""The expected time of a training, said before it starts and refined while it runs.

A training has two phases, each counted on the progress bar fold by fold: the
cross-validation and then the permutation importance (``cx-app evaluate``: of its best model
only). Their seconds on a quiet 2-core machine (the reference server, 2 worker processes)::

    folds phase      = folds × c × (n_train / 1000) ** b × (attributes / 10) × work
    importance phase = (attributes / 10) × (folds × o + r × (rows / 1000) × (n_train / 1000) ** g)
    n_train = rows × (folds − 1) / folds

``c``/``b``: the seconds of one fold's fit on 1,000 training rows and how it grows with them;
``o``: the importance's fixed cost per fold (scorer calls, loading the fold model: most of the
fast models' time); ``r``/``g``: its predictions (seconds per 1,000 predicted rows; how a
prediction grows with the training rows, kNN's searching them). ``work`` scales with the
setting that sets the amount of work (trees, epochs); a calibrated model fits
``calibration_folds`` models on (k − 1)/k of each training fold. The constants are the
``fast`` preset's; :data:`PAPERS_FACTOR` scales the papers preset's fit.

A busy machine is slower by :func:`load_factor`; while a training runs its time left is
refined from the steps finished (:func:`remaining_seconds`); ``bench/bench_time_estimate.py``
measures both. The workspace's own fits replace the constants' level
(:mod:`cx_app.workspace.fits`).

Not counted: a server's first training (or the first after its worker processes idled 5
minutes) starts the worker processes, about 3 s of CPU each (their imports).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cx_app.errors import AnalysisError

__all__ = ["COSTS", "PAPERS_FACTOR", "Cost", "Phases", "expected_phases", "expected_seconds",
           "format_duration", "load_factor", "one_shot_seconds", "remaining_seconds",
           "settings_factor"]


@dataclass(frozen=True)
class Cost:
    """The constants of one algorithm (module docstring); ``work_reference``: the value of
    ``work_setting`` at which ``c`` was measured."""

    c: float
    b: float
    o: float = 0.0
    r: float = 0.0
    g: float = 0.0
    work_setting: str | None = None
    work_reference: float = 1.0


COSTS: dict[str, Cost] = {
    "lr": Cost(0.0225, 0.31, 0.095, 0.0171),  # mostly the importance's cost per fold
    "svm": Cost(0.796, 0.20, 1.24, 0.219),  # the importance's cost per fold: its predictions
    "knn": Cost(0.0172, 0.61, 0.172, 0.399, 0.95),  # predictions search the training rows
    "nb": Cost(0.0109, 0.31, 0.101, 0.0399),
    "dt": Cost(0.0114, 0.23, 0.0917, 0.0163),
    "rf": Cost(0.301, 0.40, 0.521, 0.389, 0.51, "n_estimators", 100),
    "ann": Cost(0.398, 0.36, 0.105, 0.0153, 0.15, "max_iter", 200),
    "xgb": Cost(0.142, 0.39, 0.143, 0.305, 0.09, "n_estimators", 100),
    "ordinal": Cost(1.24, 0.19, 0.115, 0.00847, 1.01),
    "cnn": Cost(1.44, 0.3, 0.0, 0.0, 0.0, "epochs", 30),  # erratic: JIT compilation, early stopping
}
"""Constants per algorithm id (default preset, one BLAS thread), fitted by least squares by
``CX_BENCH_TIME_ESTIMATE_CALIBRATE=1 python bench/bench_time_estimate.py`` on CPU seconds (the
main process's plus the 2 workers' halved: CPU time does not grow with the load, so a busy
machine can measure them). ``cnn``: an order of magnitude only, its importance in its fit."""


POOL_START_SECONDS = 3.0
"""A one-shot run starting its worker processes, each importing scikit-learn side by side
(2.9 s for 2 workers on the reference server: ``bench/device/pool_start.py 2``)."""
REPORT_SECONDS = (4.0, 0.3)
"""``cx-app evaluate`` writing its workbook and HTML report: seconds, and seconds a model (the
first report of a process also bundles the chart libraries; measured: nine models 6.8 s)."""


def one_shot_seconds(models: int, *, workers: int) -> float:
    """The quiet seconds a one-shot ``cx-app evaluate`` adds to its models' phases: starting
    ``workers`` processes (none for one) and writing the reports.

    >>> one_shot_seconds(9, workers=2) == POOL_START_SECONDS + 4.0 + 0.3 * 9
    True
    >>> one_shot_seconds(1, workers=1)
    4.3
    """
    start = POOL_START_SECONDS if workers > 1 else 0.0
    return start + REPORT_SECONDS[0] + REPORT_SECONDS[1] * models


PAPERS_FACTOR: dict[str, float] = {"svm": 6.25, "ann": 14.3}
"""The papers preset's fit time over the fast one's where it changes the solver (svm: bench
``models``, 217.5 s against 33.7 s; ann: bench ``training_times``); the CNN's is counted by its
epochs."""


class Phases(NamedTuple):
    """The expected seconds of a training's two phases."""

    folds: float
    importance: float

    @property
    def total(self) -> float:
        return self.folds + self.importance

    def times(self, factor: float) -> Phases:
        return Phases(self.folds * factor, self.importance * factor)


def expected_phases(algorithm_id: str, *, rows: int, attributes: int, folds: int = 10,
                    settings: Mapping[str, Any] | None = None, calibration: str = "none",
                    calibration_folds: int = 3, preset: str = "fast") -> Phases:
    """The expected quiet seconds of the two phases of one training (module docstring).

    >>> k = COSTS["lr"]  # 11 folds of 11,000 rows: n_train 10 (thousand), 20 attributes
    >>> phases = expected_phases("lr", rows=11_000, attributes=20, folds=11)
    >>> phases.folds == 11 * k.c * 10 ** k.b * 2
    True
    >>> phases.importance == 2 * (11 * k.o + k.r * 11 * 10 ** k.g)
    True
    >>> expected_phases("rf", rows=1_000, attributes=10, settings={"n_estimators": 200}
    ...                 ).folds == 2 * expected_phases("rf", rows=1_000, attributes=10).folds
    True
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
    fit = cost.c * n_train ** cost.b * (attributes / 10) * work
    if preset == "papers":
        fit *= PAPERS_FACTOR.get(algorithm_id, 1.0)
    if calibration != "none":
        k = calibration_folds
        fit *= k * ((k - 1) / k) ** cost.b
    importance = (attributes / 10) * (folds * cost.o + cost.r * rows / 1000 * n_train ** cost.g)
    return Phases(folds * fit, importance)


def expected_seconds(algorithm_id: str, **size_and_settings: Any) -> float:
    """The expected quiet seconds of one training: both phases of :func:`expected_phases`."""
    return expected_phases(algorithm_id, **size_and_settings).total


def settings_factor(algorithm_id: str, *, settings: Mapping[str, Any] | None = None,
                    calibration: str = "none", calibration_folds: int = 3,
                    preset: str = "fast", rows: int = 1_000, attributes: int = 10,
                    folds: int = 10) -> float:
    """How many times longer ``settings``, ``calibration`` and ``preset`` make a training
    than the default preset's without calibration (they scale the fit, not the importance);
    learned estimates (:mod:`cx_app.workspace.fits`) keep their fits in reference seconds by it.

    >>> settings_factor("lr", settings={"C": 0.5})
    1.0
    >>> p = expected_phases("rf", rows=1_000, attributes=10)  # 300 trees: 3 times the fit
    >>> round(settings_factor("rf", settings={"n_estimators": 300}), 9) == round(
    ...     (3 * p.folds + p.importance) / p.total, 9)
    True
    """
    size = {"rows": rows, "attributes": attributes, "folds": folds}
    return (expected_seconds(algorithm_id, settings=settings, calibration=calibration,
                             calibration_folds=calibration_folds, preset=preset, **size)
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


def load_factor(load: float | None = None, cpus: int | None = None, workers: int = 0) -> float:
    """How many times slower than on a quiet machine a training runs now: the 1-minute load
    average plus the ``workers`` it is about to start (not yet in the load average), per core,
    when above 1. ``load``/``cpus``: this machine's when ``None`` (1 without a load average).
    A fit's time is recorded at ``workers=0``: the load after it counts its workers already.

    >>> load_factor(6.4, 2), load_factor(0.7, 2), load_factor(3.0, 4)
    (3.2, 1.0, 1.0)
    >>> load_factor(6.4, 2, workers=2), load_factor(0.0, 2, workers=2), load_factor(1.0, 2, 2)
    (4.2, 1.0, 1.5)
    """
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # Windows: no load average
            return 1.0
    return max(1.0, (load + workers) / (cpus or os.cpu_count() or 1))


PRIOR_WEIGHT = 0.2
"""The weight of the estimate said before training against the pace measured since, as a
share of the expected time: with a fifth of the work done, the two weigh the same."""


def remaining_seconds(expected: Sequence[Phases], share: float, elapsed: float) -> float:
    """The seconds left of a training of ``len(expected)`` models one after the other with
    ``share`` (0..1) of the progress bar's steps done after ``elapsed`` seconds. Each model
    has a step per fold in each phase (all steps count equally, as on the bar). The estimate
    is rescaled by the pace so far: (elapsed + w) / (expected work done + w), w =
    :data:`PRIOR_WEIGHT` × the expected total, so the first steps move it a little.

    >>> two = [Phases(2.0, 8.0), Phases(30.0, 0.0)]
    >>> remaining_seconds(two, 0.0, 0.0)  # nothing done: the estimate
    40.0
    >>> remaining_seconds(two, 0.25, 2.0)  # the first model's folds done, on time: 38 s left
    38.0
    >>> remaining_seconds(two, 0.5, 30.0)  # the first model done in 3× its time: (30+8)/(10+8) × 30
    63.333333333333336
    >>> remaining_seconds(two, 1.0, 55.0)
    0.0
    """
    total = sum(max(0.0, p.folds) + max(0.0, p.importance) for p in expected)
    if not expected or total <= 0 or share >= 1:
        return 0.0
    position = max(0.0, share) * len(expected)
    current = min(int(position), len(expected) - 1)
    within = 2 * (position - current)  # 0..1: its folds, 1..2: its importance
    done = (sum(p.total for p in expected[:current])
            + min(within, 1.0) * expected[current].folds
            + max(within - 1.0, 0.0) * expected[current].importance)
    weight = PRIOR_WEIGHT * total
    pace = (max(0.0, elapsed) + weight) / (done + weight)
    return pace * (total - done)
