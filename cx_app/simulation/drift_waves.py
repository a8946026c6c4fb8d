"""A reference survey and drifting unlabeled waves whose true P(y | x, segment) is known.

Checks the estimated net score of new waves and of their segments against an oracle. Respondent
of wave ``w`` (reference: 0) in segment ``s``: a factor ``F ~ N(mu_s + shift·w, 1)``; five
attributes ``round(mean_j + loading_j·F + noise_j·e_j)`` on 1–10; the utility
``U = Σ_j w_j·z_j + effect_s,w + σ·e`` (``z_j`` the standardised rounded score; ``effect_s,w``
the segment effect the attributes do not explain, ``N(0, segment_effect_sd)`` plus a random walk
of ``segment_drift_sd`` per wave) cut at :data:`cx_app.simulation.waves.NPS_THRESHOLDS`. So the
true class probabilities are closed-form and :meth:`SimulatedWave.oracle` gives ``E[NPS | x]``
and its 95 % half-width, the narrowest honest interval. Streams: ``SeedSequence([seed, w])``
per wave, ``SeedSequence([seed])`` for the segment effects and the drift's sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cx_app.errors import AnalysisError
from cx_app.simulation.waves import NPS_THRESHOLDS, UTILITY_NOISE, ordered_probit

__all__ = ["DriftScenario", "DriftSimulation", "OracleNetScore", "SimulatedWave",
           "drift_schema_yaml", "simulate_drift_waves"]

ID_COLUMN = "Respondent ID"
WAVE_COLUMN = "Wave"
SEGMENT_COLUMN = "Bank"
TARGET_COLUMN = "Likelihood to recommend (0-10)"
Z95 = 1.959963984540054

# name, weight in the utility, answer mean, loading on F, noise (answers on 1-10)
ATTRIBUTES: tuple[tuple[str, float, float, float, float], ...] = (
    ("price", 0.30, 6.2, 1.4, 1.5),
    ("service", 0.25, 7.1, 1.2, 1.4),
    ("product", 0.18, 6.8, 1.2, 1.5),
    ("digital", 0.15, 7.4, 1.0, 1.5),
    ("billing", 0.10, 7.0, 0.9, 1.6),
)


@dataclass(frozen=True)
class DriftScenario:
    """How segments differ and how waves drift (utility units; σ = 0.65)."""

    segments: int = 3
    segment_effect_sd: float = 0.12
    """SD of the segment effects the attributes do not explain (≈ 5 NPS points)."""
    segment_drift_sd: float = 0.01
    """SD per wave of each segment effect's random walk."""
    segment_factor_sd: float = 0.25
    """SD of the segments' factor means (differences the attributes do show)."""
    attribute_shift: float = 0.06
    """Factor-mean change per wave (its sign is drawn per seed)."""


@dataclass(frozen=True)
class OracleNetScore:
    """The realized net score's distribution given the respondents' answers (true model)."""

    mean: float
    sd: float
    n: int

    @property
    def half_width95(self) -> float:
        """1.96·SD: the oracle's 95 % half-width (points)."""
        return Z95 * self.sd


@dataclass(frozen=True, eq=False)
class SimulatedWave:
    """One wave as written (``frame``) with its true class probabilities (n × 11)."""

    index: int
    frame: pd.DataFrame
    true_proba: np.ndarray

    @property
    def label(self) -> str:
        """``"W00"`` (the reference), ``"W01"``, …"""
        return f"W{self.index:02d}"

    def oracle(self, segment: str | None = None) -> OracleNetScore:
        """E[NPS | answers] and its SD under the true model, for the wave or one segment."""
        rows = (np.ones(len(self.frame), dtype=bool) if segment is None
                else (self.frame[SEGMENT_COLUMN] == segment).to_numpy())
        if not rows.any():
            raise AnalysisError(f"wave {self.label} has no respondent of segment {segment!r}")
        p = self.true_proba[rows]
        promoter, detractor = p[:, 9:].sum(axis=1), p[:, :7].sum(axis=1)
        n = int(rows.sum())
        var = promoter + detractor - (promoter - detractor) ** 2
        return OracleNetScore(100.0 * float(np.mean(promoter - detractor)),
                              100.0 * float(np.sqrt(var.sum())) / n, n)

    def realized(self, segment: str | None = None) -> float:
        """The realized NPS of the wave or of one segment (points)."""
        frame = self.frame if segment is None else self.frame[self.frame[SEGMENT_COLUMN]
                                                              == segment]
        y = frame[TARGET_COLUMN].to_numpy()
        return 100.0 * float(np.mean(y >= 9) - np.mean(y <= 6))

    def unlabeled(self) -> pd.DataFrame:
        """The wave without its target column (what is estimated)."""
        return self.frame.drop(columns=[TARGET_COLUMN])


@dataclass(frozen=True, eq=False)
class DriftSimulation:
    """The labelled reference (wave 0) and the later waves."""

    reference: SimulatedWave
    waves: tuple[SimulatedWave, ...]
    segments: tuple[str, ...]


def segment_names(count: int) -> tuple[str, ...]:
    """``("Bank A", "Bank B", …)``."""
    if not 1 <= count <= 26:
        raise AnalysisError(f"between 1 and 26 segments, got {count}")
    return tuple(f"Bank {chr(ord('A') + i)}" for i in range(count))


def drift_schema_yaml() -> str:
    """The schema of the simulated files as YAML (NPS target, five attributes, bank and wave;
    ``cx_app.survey.schema.schema_from_yaml_text`` reads it: this layer is below survey)."""
    attributes = "\n".join(
        f"  - {{name: {name}, column: \"{name.capitalize()}\", scale: {{min: 1, max: 10}}}}"
        for name, *_ in ATTRIBUTES)
    return f"""
name: drift_waves
target: {{name: nps, column: "{TARGET_COLUMN}", kind: nps, scale: {{min: 0, max: 10}}}}
attributes:
{attributes}
respondent_id: {{name: respondent_id, column: "{ID_COLUMN}"}}
segments:
  - {{name: bank, column: "{SEGMENT_COLUMN}", role: brand}}
  - {{name: wave, column: "{WAVE_COLUMN}", role: wave}}
"""


def answers(index: int, factor: np.ndarray, segments: np.ndarray,
            rng: np.random.Generator) -> tuple[pd.DataFrame, list[tuple[np.ndarray, float]]]:
    """Wave ``index``'s file without its target, and each attribute's ``(score − mean)/sd``."""
    n = len(factor)
    frame = pd.DataFrame({ID_COLUMN: [f"W{index:02d}-{i:05d}" for i in range(1, n + 1)],
                          WAVE_COLUMN: f"W{index:02d}", SEGMENT_COLUMN: segments})
    centred = []
    for name, _weight, mean, loading, noise in ATTRIBUTES:
        score = np.clip(np.rint(mean + loading * factor + noise * rng.normal(size=n)), 1, 10)
        frame[name.capitalize()] = score.astype(np.int64)
        centred.append((score - mean, np.hypot(loading, noise)))
    return frame, centred


def labelled_wave(index: int, frame: pd.DataFrame, utility: np.ndarray,
                  rng: np.random.Generator) -> SimulatedWave:
    """The wave with its recommend score drawn around ``utility`` and its true probabilities."""
    frame[TARGET_COLUMN] = np.searchsorted(
        np.asarray(NPS_THRESHOLDS), utility + UTILITY_NOISE * rng.normal(size=len(utility)),
        side="right")
    return SimulatedWave(index, frame, ordered_probit(utility))


def segment_utility(effects: np.ndarray, segment: np.ndarray,
                    centred: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """``effect_s + Σ_j w_j·z_j``, summed in attribute order."""
    utility = effects[segment].copy()
    for (_name, weight, *_), (deviation, sd) in zip(ATTRIBUTES, centred, strict=True):
        utility += weight * deviation / sd
    return utility


def segment_wave(index: int, n: int, seed: int, means: np.ndarray, effects: np.ndarray,
                 names: tuple[str, ...], shares: np.ndarray | None = None) -> SimulatedWave:
    """Wave ``index``: segments drawn uniformly (or by ``shares``), factor means ``means``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    segment = (rng.integers(0, len(names), size=n) if shares is None
               else rng.choice(len(names), size=n, p=shares))
    frame, centred = answers(index, rng.normal(means[segment], 1.0), np.asarray(names)[segment],
                             rng)
    return labelled_wave(index, frame, segment_utility(effects, segment, centred), rng)


def simulate_drift_waves(n_reference: int = 2400, n_per_wave: int = 1200, *, waves: int = 10,
                         seed: int = 0, scenario: DriftScenario | None = None,
                         ) -> DriftSimulation:
    """The reference survey (wave 0, labelled) and ``waves`` later waves (module docstring).

    Every wave keeps its target column (the realized NPS); estimate from
    :meth:`SimulatedWave.unlabeled`.
    """
    sc = scenario or DriftScenario()
    if n_reference < 1 or n_per_wave < 1 or waves < 0:
        raise AnalysisError("simulate_drift_waves needs respondents and a non-negative number "
                            "of waves")
    names = segment_names(sc.segments)
    rng = np.random.default_rng(np.random.SeedSequence([seed]))
    factor_means = rng.normal(0.0, sc.segment_factor_sd, size=sc.segments)
    effects = rng.normal(0.0, sc.segment_effect_sd, size=sc.segments)
    shift = sc.attribute_shift * rng.choice([-1.0, 1.0])
    steps = rng.normal(0.0, sc.segment_drift_sd, size=(waves, sc.segments))
    walk = np.vstack([np.zeros(sc.segments), np.cumsum(steps, axis=0)])
    reference = segment_wave(0, n_reference, seed, factor_means, effects, names)
    later = tuple(segment_wave(w, n_per_wave, seed, factor_means + shift * w, effects + walk[w],
                               names) for w in range(1, waves + 1))
    return DriftSimulation(reference, later, names)
