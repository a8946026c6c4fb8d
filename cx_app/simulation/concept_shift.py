"""Waves with a concept shift: P(answer | attributes) changes, the attributes do not.

Checks audit samples (:mod:`cx_app.estimate.audit`): no label-free estimate can see such a change,
a few labelled respondents can. Respondents as in :mod:`cx_app.simulation.drift_waves` (one
segment, same file layout and schema), but the utility of wave ``w`` is
``U = Σ_j weight_j·(1 + reweight_j)·z_j + offset + σ·e`` (``offset`` −0.1 ≈ −5 NPS points).
:class:`ShiftedWave` carries the true probabilities after the shift and before it (a perfect
model of the reference), so a check needs no trained model.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from cx_app.simulation.drift_waves import ATTRIBUTES, SimulatedWave, answers, labelled_wave
from cx_app.simulation.waves import ordered_probit

__all__ = ["ConceptShift", "ShiftedWave", "shifted_wave"]


class ConceptShift(BaseModel):
    """How P(answer | attributes) changes (module docstring); the default changes nothing."""

    model_config = ConfigDict(frozen=True)

    offset: float = 0.0
    reweight: tuple[float, ...] = (0.0,) * len(ATTRIBUTES)
    """Relative change of each attribute's weight, in the order of ``ATTRIBUTES``."""


class ShiftedWave(BaseModel):
    """One wave as written, its true probabilities after the shift and before it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    wave: SimulatedWave
    reference_proba: np.ndarray
    shift: ConceptShift


def shifted_wave(n: int, *, index: int = 1, seed: int = 0,
                 shift: ConceptShift | None = None) -> ShiftedWave:
    """Wave ``index`` of ``n`` respondents under ``shift`` (module docstring)."""
    sc = shift or ConceptShift()
    if len(sc.reweight) != len(ATTRIBUTES):
        raise ValueError(f"reweight needs {len(ATTRIBUTES)} values, got {len(sc.reweight)}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    frame, centred = answers(index, rng.normal(0.0, 1.0, size=n), np.full(n, "Bank A"), rng)
    before = np.zeros(n)
    after = np.full(n, sc.offset)
    for (_name, weight, *_), change, (deviation, sd) in zip(ATTRIBUTES, sc.reweight, centred,
                                                            strict=True):
        z = deviation / sd
        before += weight * z
        after += weight * (1.0 + change) * z
    wave = labelled_wave(index, frame, after, rng)
    return ShiftedWave(wave=wave, reference_proba=ordered_probit(before), shift=sc)
