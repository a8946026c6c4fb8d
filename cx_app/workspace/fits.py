"""Expected training times learned from this workspace's own measured fits (the ``fits`` table).

Each row is one training's *reference seconds*: the measured time divided by
:func:`cx_app.models.timing.settings_factor` and by the machine's load when it ended
(:func:`cx_app.models.timing.load_factor`), so that fits with other settings, or made while the
machine was busy, teach a quiet machine's rate of the same algorithm. A new training's estimate::

    size = folds × (n_train / 1000) ** b × attributes / 10,  n_train = respondents × (folds − 1) / folds
    rate = median over the most recent fits of seconds / size      (seconds per unit of size)
    expected = rate × size(new training) × settings_factor(settings, calibration) × load factor now

Why: from one machine (or load) to another mostly the *level* of the cost changes (a load of 28
on 2 cores ran the constants' trainings 5–20× slower, ``bench/RESULTS.md`` ``time_estimate``),
while the *shape* in the rows is the algorithm's own. So ``b`` is the constants'
(``bench/bench_timing.py``) and the level is learned here; once the recent fits span
:data:`SPREAD` in training rows (at least :data:`FITS_FOR_SHAPE` of them) ``b`` is learned too,
as the Theil–Sen slope of log seconds per fold on log training rows (robust to a fit slowed by
a busy moment), kept within :data:`EXPONENTS`. Without a fit the constants' estimate is said
as a first guess. The query is one bounded select on the indexed ``algorithm`` column: the
Models page runs it on every rerun.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import median
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError
from cx_app.models import timing
from cx_app.workspace.database import Database
from cx_app.workspace.tables import Fit

__all__ = ["EXPONENTS", "FITS_FOR_SHAPE", "RECENT", "SPREAD", "Estimate", "ExpectedTimes",
           "MeasuredFit", "expected_seconds", "expected_times", "first_guess", "fit_recorder",
           "learned_seconds", "recent_fits", "recent_query", "record_fit"]

RECENT = 20
"""How many of the most recent fits of an algorithm (and preset) an estimate learns from."""
SPREAD = 2.0
"""Largest over smallest training rows of the recent fits it takes to learn the exponent."""
FITS_FOR_SHAPE = 3
EXPONENTS = (0.3, 1.5)
"""The range of a learned growth exponent (0.3: fixed costs dominate; 1.5: faster than any
algorithm measured)."""


@dataclass(frozen=True)
class MeasuredFit:
    respondents: int
    attributes: int
    folds: int
    seconds: float

    def n_train(self) -> float:
        """Training rows per fold, in thousands."""
        return self.respondents * (self.folds - 1) / self.folds / 1000


@dataclass(frozen=True)
class Estimate:
    """An expected training time, learned from ``fits`` measured fits (0: a first guess)."""

    seconds: float
    fits: int

    @property
    def learned(self) -> bool:
        return self.fits > 0


def _checked(algorithm: str, preset: str, respondents: int, attributes: int,
             folds: int) -> None:
    if not algorithm or not preset:
        raise WorkspaceError("a fit needs its algorithm and preset")
    if respondents < 1 or attributes < 1 or folds < 2:
        raise WorkspaceError(f"a fit of {algorithm} needs at least 1 respondent, 1 attribute "
                             f"and 2 folds (got {respondents}, {attributes} and {folds})")


def record_fit(database: Database, *, algorithm: str, preset: str, respondents: int,
               attributes: int, folds: int, seconds: float) -> None:
    """Keep one measured training (``seconds``: reference seconds) for later estimates."""
    _checked(algorithm, preset, respondents, attributes, folds)
    if not (math.isfinite(seconds) and seconds > 0):
        raise WorkspaceError(f"a fit of {algorithm} needs a positive time in seconds "
                             f"(got {seconds!r})")

    def work(session: Session) -> None:
        session.add(Fit(algorithm=algorithm, preset=preset, respondents=int(respondents),
                        attributes=int(attributes), folds=int(folds), seconds=float(seconds)))

    database.write(work)


def fit_recorder(database: Database, load: Callable[[], float] = timing.load_factor,
                 ) -> Callable[[str, str, int, int, int, float], None]:
    """:func:`record_fit` taking its values in order, the seconds divided by the machine's
    ``load`` factor then: the ``record_fit`` callback of :class:`cx_app.app.training.TrainingJob`."""

    def record(algorithm: str, preset: str, respondents: int, attributes: int, folds: int,
               seconds: float) -> None:
        record_fit(database, algorithm=algorithm, preset=preset, respondents=respondents,
                   attributes=attributes, folds=folds, seconds=seconds / load())

    return record


def recent_query(algorithm: str, preset: str, limit: int = RECENT) -> Select:
    return (select(Fit.respondents, Fit.attributes, Fit.folds, Fit.seconds)
            .where(Fit.algorithm == algorithm, Fit.preset == preset)
            .order_by(Fit.id.desc()).limit(limit))


def recent_fits(database: Database, algorithm: str, preset: str,
                limit: int = RECENT) -> list[MeasuredFit]:
    """Newest first."""

    def work(session: Session) -> list[MeasuredFit]:
        return [MeasuredFit(*row)
                for row in session.execute(recent_query(algorithm, preset, limit)).all()]

    return database.read(work)


def _exponent(algorithm: str, fits: Sequence[MeasuredFit]) -> float:
    """The growth exponent ``b``: learned from ``fits`` when they span enough sizes, else the
    constants' (1 for an algorithm without constants)."""
    from scipy.stats import theilslopes

    cost = timing.COSTS.get(algorithm)
    b = cost.b if cost is not None else 1.0
    sizes = [f.n_train() for f in fits]
    if len(fits) < FITS_FOR_SHAPE or max(sizes) < SPREAD * min(sizes):
        return b
    per_fold = [math.log(f.seconds / f.folds / (f.attributes / 10)) for f in fits]
    slope = float(theilslopes(per_fold, [math.log(s) for s in sizes])[0])
    return min(max(slope, EXPONENTS[0]), EXPONENTS[1])


def learned_seconds(algorithm: str, fits: Sequence[MeasuredFit], *, respondents: int,
                    attributes: int, folds: int) -> float:
    """The reference seconds of a training learned from ``fits`` (at least one).

    >>> one = [MeasuredFit(respondents=2_000, attributes=10, folds=5, seconds=8.0)]
    >>> b = timing.COSTS["ann"].b  # one fit: the constants' growth exponent (about 1)
    >>> seconds = learned_seconds("ann", one, respondents=4_000, attributes=10, folds=5)
    >>> round(seconds, 9) == round(8.0 * 2 ** b, 9)  # twice the training rows
    True
    """
    if not fits:
        raise ValueError("learned_seconds needs at least one fit")
    b = _exponent(algorithm, fits)

    def size(respondents_: int, attributes_: int, folds_: int) -> float:
        n_train = respondents_ * (folds_ - 1) / folds_ / 1000
        return folds_ * n_train ** b * attributes_ / 10

    rate = median(f.seconds / size(f.respondents, f.attributes, f.folds) for f in fits)
    return rate * size(respondents, attributes, folds)


def first_guess(algorithm: str, *, preset: str, respondents: int, attributes: int, folds: int,
                settings: Mapping[str, Any] | None = None, calibration: str = "none",
                load: float = 1.0) -> Estimate:
    """The constants' estimate (:func:`cx_app.models.timing.expected_seconds`) × ``load``."""
    return Estimate(load * timing.expected_seconds(
        algorithm, rows=respondents, attributes=attributes, folds=folds, settings=settings,
        calibration=calibration, preset=preset), 0)


def expected_seconds(database: Database, algorithm: str, *, preset: str, respondents: int,
                     attributes: int, folds: int, settings: Mapping[str, Any] | None = None,
                     calibration: str = "none", load: float = 1.0) -> Estimate:
    """The expected seconds of a training as the app's Train button runs it (cross-validation
    and permutation importance), learned from the recent fits, else :func:`first_guess`."""
    _checked(algorithm, preset, respondents, attributes, folds)
    fits = recent_fits(database, algorithm, preset)
    if not fits:
        return first_guess(algorithm, preset=preset, respondents=respondents,
                           attributes=attributes, folds=folds, settings=settings,
                           calibration=calibration, load=load)
    factor = timing.settings_factor(algorithm, settings=settings, calibration=calibration,
                                    preset=preset) if algorithm in timing.COSTS else 1.0
    seconds = learned_seconds(algorithm, fits, respondents=respondents,
                              attributes=attributes, folds=folds)
    return Estimate(seconds * factor * load, len(fits))


@dataclass(frozen=True)
class ExpectedTimes:
    """The expected time of each algorithm of one click of Train, and its sentence."""

    estimates: Mapping[str, Estimate]
    respondents: int
    attributes: int
    folds: int
    load: float = 1.0

    @property
    def total(self) -> float:
        return sum(e.seconds for e in self.estimates.values())

    @property
    def seconds(self) -> dict[str, float]:
        return {k: e.seconds for k, e in self.estimates.items()}

    def sentence(self, slow: float = 10.0) -> str:
        """The algorithms of ``slow`` seconds or more named, where the figures come from, and
        the machine's load when it is busy.

        >>> times = ExpectedTimes({"lr": Estimate(4.2, 3), "xgb": Estimate(31.0, 0)}, 5_000, 9, 10,
        ...                       load=2.5)
        >>> times.sentence()[:72]
        'Expected time: about 40 s (xgb about 30 s) for 5,000 respondents × 9 att'
        >>> times.sentence()[72:]  # doctest: +ELLIPSIS
        "...fits for lr (3); a first guess for xgb (...); 2.5× a quiet machine's..."
        """
        named = ", ".join(f"{k} {timing.format_duration(e.seconds)}"
                          for k, e in self.estimates.items() if e.seconds >= slow)
        learned = [f"{k} ({e.fits})" for k, e in self.estimates.items() if e.learned]
        guessed = [k for k, e in self.estimates.items() if not e.learned]
        sources = ([f"learned from this machine's fits for {', '.join(learned)}"]
                   if learned else [])
        if guessed:
            sources.append(f"a first guess for {', '.join(guessed)} (measured on a quiet 2-core "
                           "server, until a training here teaches it)")
        if self.load > 1.05:
            sources.append(f"{self.load:.1f}× a quiet machine's time, as this machine is busy "
                           "now (load average per core)")
        return (f"Expected time: {timing.format_duration(self.total)}"
                + (f" ({named})" if named else "")
                + f" for {self.respondents:,} respondents × {self.attributes} attributes × "
                  f"{self.folds} folds; {'; '.join(sources)}. Refined from the folds as they "
                  "finish.")


def expected_times(database: Database | None, algorithms: Mapping[str, Mapping[str, Any]], *,
                   preset: str | None, respondents: int, attributes: int, folds: int,
                   calibration: str = "none", load: float | None = None) -> ExpectedTimes:
    """:func:`expected_seconds` of each algorithm (``{algorithm id: settings}``) that has a
    time estimate; ``database`` None: the constants'; ``load`` None: the load now."""
    from cx_app.models.algorithms import resolve_preset

    load = timing.load_factor() if load is None else load
    estimates: dict[str, Estimate] = {}
    for algorithm, settings in algorithms.items():
        if algorithm not in timing.COSTS:
            continue
        chosen = resolve_preset(algorithm, preset)
        estimate = first_guess if database is None else partial(expected_seconds, database)
        estimates[algorithm] = estimate(algorithm, preset=chosen, respondents=respondents,
                                        attributes=attributes, folds=folds, settings=settings,
                                        calibration=calibration, load=load)
    return ExpectedTimes(estimates, respondents, attributes, folds, load)
