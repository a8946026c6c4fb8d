"""Waves with planted events: which segment truly moved in which wave is known.

Measures whether the alerts of :mod:`cx_app.estimate.alerts` are true. Respondents follow the
true model of :mod:`cx_app.simulation.drift_waves`, with segments of their own levels and
unequal sizes, a slow drift of the whole (not an event of any segment), and in a share
``event_rate`` of the later waves one drawn segment moved by ``±event_size`` in that wave only
(some 25–30 net-score points: three standard errors of a segment of a few hundred respondents,
the issue's "truly unusual"). :attr:`AlertSimulation.moved` is the truth against the reference
level, :attr:`AlertSimulation.changed` against the previous wave (a one-wave event changes twice).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cx_app.errors import AnalysisError
from cx_app.simulation.drift_waves import DriftSimulation, segment_names, segment_wave

__all__ = ["AlertScenario", "AlertScore", "AlertSimulation", "alert_truth", "score_alerts",
           "simulate_alert_waves"]


@dataclass(frozen=True)
class AlertScenario:
    """Segments, drift and planted events (factor units: the factor's SD is 1)."""

    levels: tuple[float, ...] = (-0.9, -0.4, 0.0, 0.3, 0.6)
    """Each segment's factor mean in the reference (its own level)."""
    shares: tuple[float, ...] = (0.3, 0.25, 0.2, 0.15, 0.1)
    """Each segment's share of a wave's respondents."""
    segment_effect_sd: float = 0.12
    """SD of the segment effects the attributes do not explain (≈ 5 NPS points)."""
    drift: float = 0.002
    """Every segment's factor-mean change per wave (the whole drifts: some 5 net-score points
    over 60 waves)."""
    event_rate: float = 0.3
    """Share of the waves after the reference in which one segment truly moves."""
    event_size: float = 1.1
    """A planted move of a segment's factor mean (sign drawn per event)."""


@dataclass(frozen=True, eq=False)
class AlertSimulation(DriftSimulation):
    """The labelled reference (wave 0), the later waves, and where the truth moved."""

    shift: np.ndarray
    """Waves × segments: the planted factor shift of each later wave's segment (0: none)."""

    @property
    def moved(self) -> np.ndarray:
        """Waves × segments: True where the segment's state differs from the reference's."""
        return self.shift != 0

    @property
    def changed(self) -> np.ndarray:
        """Waves × segments: True where the state differs from the previous wave's."""
        before = np.vstack([np.zeros((1, self.shift.shape[1])), self.shift[:-1]])
        return self.shift != before


def simulate_alert_waves(n_reference: int = 4000, n_per_wave: int = 1500, *, waves: int = 60,
                         seed: int = 0, scenario: AlertScenario | None = None,
                         ) -> AlertSimulation:
    """The reference survey (wave 0, labelled, no event) and ``waves`` later waves with planted
    events (module docstring). Every wave keeps its target column; estimate from
    :meth:`SimulatedWave.unlabeled`."""
    sc = scenario or AlertScenario()
    if len(sc.levels) != len(sc.shares) or not np.isclose(sum(sc.shares), 1.0):
        raise AnalysisError("AlertScenario: one share per segment level, shares summing to 1")
    if n_reference < 1 or n_per_wave < 1 or waves < 1:
        raise AnalysisError("simulate_alert_waves needs respondents and at least one wave")
    names = segment_names(len(sc.levels))
    rng = np.random.default_rng(np.random.SeedSequence([seed]))
    effects = rng.normal(0.0, sc.segment_effect_sd, size=len(names))
    shift = np.zeros((waves, len(names)))
    events = rng.random(waves) < sc.event_rate
    who = rng.integers(0, len(names), size=waves)
    sign = rng.choice([-1.0, 1.0], size=waves)
    shift[events, who[events]] = sc.event_size * sign[events]
    levels, shares = np.asarray(sc.levels, dtype=float), np.asarray(sc.shares, dtype=float)
    reference = segment_wave(0, n_reference, seed, levels, effects, names, shares)
    later = tuple(segment_wave(w, n_per_wave, seed, levels + sc.drift * w + shift[w - 1],
                               effects, names, shares) for w in range(1, waves + 1))
    return AlertSimulation(reference, later, names, shift)


@dataclass(frozen=True)
class AlertScore:
    """Raised alerts against the truth over segment-waves: counts, precision and recall."""

    checked: int
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        """Share of the raised alerts that are true (1.0 when none was raised)."""
        raised = self.true_positives + self.false_positives
        return 1.0 if raised == 0 else self.true_positives / raised

    @property
    def recall(self) -> float:
        """Share of the true events that raised an alert (1.0 when there was none)."""
        events = self.true_positives + self.false_negatives
        return 1.0 if events == 0 else self.true_positives / events


def alert_truth(oracle: np.ndarray, reference: np.ndarray, unit_sd: np.ndarray,
                n: np.ndarray, moved: np.ndarray, changed: np.ndarray,
                sigmas: float = 3.0) -> np.ndarray:
    """Per segment-wave (waves × segments): 1 where the segment truly moved, 0 where nothing
    happened, −1 where an event was planted but moved this metric too little to call (left
    out of precision and recall, and counted).

    ``oracle``: the metric's expected value given the wave's answers under the true model (no
    answer noise); ``reference``: the same for each segment of the reference; ``unit_sd``: one
    respondent's SD of the metric in each segment; ``n``: the segment-waves' respondents. A
    segment-wave truly moved when a planted event (``moved`` or ``changed``) moved the metric
    by more than ``sigmas`` standard errors at its size: from the reference (SE =
    unit_sd/√n, the issue's "truly unusual") or from the previous wave (SE of the difference).
    Segment-waves with no planted event are 0 whatever the drift of the whole did.

    >>> alert_truth(np.array([[10.0, 0.0], [0.0, 4.0]]), np.zeros(2), np.array([4.0, 4.0]),
    ...             np.full((2, 2), 4.0), np.array([[True, False], [False, True]]),
    ...             np.array([[True, False], [True, True]])).tolist()
    [[1, 0], [1, -1]]
    """
    o, ref, u = np.asarray(oracle, float), np.asarray(reference, float), np.asarray(unit_sd)
    size = np.asarray(n, dtype=float)
    from_reference = moved & (np.abs(o - ref[None, :]) > sigmas * u[None, :] / np.sqrt(size))
    before = np.vstack([np.broadcast_to(ref, o[:1].shape), o[:-1]])
    size_before = np.vstack([size[:1], size[:-1]])
    se_change = u[None, :] * np.sqrt(1 / size + 1 / size_before)
    from_previous = changed & (np.abs(o - before) > sigmas * se_change)
    out = np.where(moved | changed, -1, 0)
    out[from_reference | from_previous] = 1
    return out


def score_alerts(raised: np.ndarray, truth: np.ndarray) -> AlertScore:
    """Precision and recall of ``raised`` (booleans, one per segment-wave) against ``truth``
    (booleans, or :func:`alert_truth`'s 1/0/−1: the −1 are left out).

    >>> s = score_alerts(np.array([True, True, False, False]), np.array([True, False, True, False]))
    >>> s.precision, s.recall, s.checked
    (0.5, 0.5, 4)
    """
    r, t = np.asarray(raised, dtype=bool).ravel(), np.asarray(truth).astype(int).ravel()
    r, t = r[t >= 0], t[t >= 0].astype(bool)
    return AlertScore(int(r.size), int((r & t).sum()), int((r & ~t).sum()), int((~r & t).sum()))
