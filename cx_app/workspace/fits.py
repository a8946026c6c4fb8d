"""Expected training times learned from this workspace's own measured fits (the ``fits`` table).

A fit's seconds are stored as *reference seconds*: divided by
:func:`cx_app.models.timing.settings_factor` (so settings of one algorithm teach one rate) and by
the machine's :func:`~cx_app.models.timing.load_factor` when it ended. Only the *level* is
learned; the shape of the cost (each phase's growth with rows and folds) is the algorithm's own::

    level    = median over the RECENT fits of seconds / timing.expected_seconds(fit's size)
    expected = level × timing.expected_phases(new size, settings, calibration) × load factor now

Without a fit, the constants' first guess. One bounded select on the indexed ``algorithm``
column: the Models page runs it on every rerun.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError
from cx_app.models import timing
from cx_app.workspace.database import Database
from cx_app.workspace.tables import Fit

__all__ = ["RECENT", "Estimate", "ExpectedTimes", "MeasuredFit", "expected_seconds",
           "expected_times", "fit_recorder", "learned_level", "recent_fits",
           "recent_query", "record_fit"]

RECENT = 20
"""How many of the most recent fits of an algorithm (and preset) an estimate learns from."""


@dataclass(frozen=True)
class MeasuredFit:
    respondents: int
    attributes: int
    folds: int
    seconds: float


@dataclass(frozen=True)
class Estimate:
    """An expected training time: its two ``phases`` (the folds, the permutation importance),
    learned from ``fits`` measured fits of this workspace (0: the constants' first guess)."""

    phases: timing.Phases
    fits: int

    @property
    def seconds(self) -> float:
        return self.phases.total

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


def learned_level(algorithm: str, preset: str, fits: Sequence[MeasuredFit]) -> float:
    """How many times the constants' time this machine takes (module docstring): the median
    of ``fits``' seconds over the constants' for their sizes (at least one fit).

    >>> fit = MeasuredFit(respondents=2_000, attributes=9, folds=5, seconds=8.0)
    >>> constants = timing.expected_seconds("nb", rows=2_000, attributes=9, folds=5)
    >>> learned_level("nb", "fast", [fit]) == 8.0 / constants
    True
    """
    return median(f.seconds / timing.expected_seconds(
        algorithm, rows=f.respondents, attributes=f.attributes, folds=f.folds, preset=preset)
        for f in fits)


def expected_seconds(database: Database | None, algorithm: str, *, preset: str,
                     respondents: int, attributes: int, folds: int,
                     settings: Mapping[str, Any] | None = None, calibration: str = "none",
                     load: float = 1.0) -> Estimate:
    """The expected seconds of a training (cross-validation and permutation importance, as the
    app's Train button runs it): the constants' (:func:`cx_app.models.timing.expected_phases`)
    times the level learned from this workspace's recent fits of ``algorithm`` under ``preset``
    (:func:`learned_level`; ``database`` None or no fit: the first guess, level 1), times the
    machine's ``load`` factor now (:func:`cx_app.models.timing.load_factor`)."""
    if database is not None:
        _checked(algorithm, preset, respondents, attributes, folds)
    guess = timing.expected_phases(
        algorithm, rows=respondents, attributes=attributes, folds=folds, settings=settings,
        calibration=calibration, preset=preset).times(load)
    fits = [] if database is None else recent_fits(database, algorithm, preset)
    if not fits:
        return Estimate(guess, 0)
    return Estimate(guess.times(learned_level(algorithm, preset, fits)), len(fits))


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
    def phases(self) -> dict[str, timing.Phases]:
        """Each algorithm's expected phases (a :class:`~cx_app.app.training.TrainingJob`
        refines them from its steps as it runs)."""
        return {k: e.phases for k, e in self.estimates.items()}

    def sentence(self, slow: float = 10.0) -> str:
        """The algorithms of ``slow`` seconds or more named, where the figures come from, and
        the machine's load when it is busy.

        >>> times = ExpectedTimes({"lr": Estimate(timing.Phases(1.2, 3.0), 3),
        ...                        "xgb": Estimate(timing.Phases(25.0, 6.0), 0)}, 5_000, 9, 10,
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
                  f"{self.folds} folds; {'; '.join(sources)}. Refined from the folds and the "
                  "permutation importance as they finish.")


def expected_times(database: Database | None, algorithms: Mapping[str, Mapping[str, Any]], *,
                   preset: str | None, respondents: int, attributes: int, folds: int,
                   calibration: str = "none", load: float | None = None) -> ExpectedTimes:
    """:func:`expected_seconds` of each algorithm (``{algorithm id: settings}``) with a time
    estimate; ``preset`` ``None``: each algorithm's default; ``database`` ``None`` (no
    workspace): the constants'; ``load``: the machine's load factor (``None``: now, by
    :func:`cx_app.models.timing.load_factor` with the training's workers, one per core)."""
    from cx_app.models.algorithms import resolve_preset

    load = timing.load_factor(workers=os.cpu_count() or 1) if load is None else load
    estimates: dict[str, Estimate] = {}
    for algorithm, settings in algorithms.items():
        if algorithm not in timing.COSTS:
            continue
        estimates[algorithm] = expected_seconds(
            database, algorithm, preset=resolve_preset(algorithm, preset),
            respondents=respondents, attributes=attributes, folds=folds, settings=settings,
            calibration=calibration, load=load)
    return ExpectedTimes(estimates, respondents, attributes, folds, load)
