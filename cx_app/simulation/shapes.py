"""Two more survey shapes of ``shared/SURVEYS.md``, seeded, for the model-quality suite.

- :func:`simulate_skewed_six`: attributes and the overall satisfaction on a 1–6 scale skewed to
  the top (most answers 5 and 6), with routing blanks on three attributes (5 %, 20 % and 40 %
  of respondents).
- :func:`simulate_signed_agreement`: agreement statements on signed −2..2 scales (−1 is a real
  answer), the text "n/a" on half of one statement, and the overall satisfaction on 1–5.

Both follow the model of :mod:`cx_app.simulation.waves`: a latent satisfaction factor
``F ~ N(0, 1)``; each answer ``mean + loading·F + noise·e`` rounded and clipped to its scale; a
utility ``U = Σ_j w_j·z_j + u_j·[j unanswered] + σ·e`` cut at fixed thresholds into the target's
scores, with ``z_j`` the standardised answer (0 when unanswered). The ``u_j`` make some gaps
informative, as in real exports where who skips a question differs from who answers it
(customers who never called support are a little more satisfied). Rows are returned as written
in an export (blanks as ``None``, "n/a" as text), to be read back with
:func:`cx_app.survey.importing.load_survey` and an inferred layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cx_app.errors import AnalysisError

SKEWED_TARGET = "Overall satisfaction (1-6)"
SIGNED_TARGET = "Overall satisfaction (1-5)"
NA_TEXT = "n/a"


@dataclass(frozen=True)
class ShapeAttribute:
    """One attribute: header, scale, answer model, weight in the utility and its gaps."""

    column: str
    scale: tuple[int, int]
    mean: float
    loading: float
    noise: float
    weight: float
    unanswered: float = 0.0
    unanswered_effect: float = 0.0


SKEWED_ATTRIBUTES: tuple[ShapeAttribute, ...] = (
    ShapeAttribute("Store staff (1-6)", (1, 6), 5.0, 0.8, 0.7, 0.30, 0.05, 0.0),
    ShapeAttribute("Product range (1-6)", (1, 6), 4.8, 0.7, 0.8, 0.25),
    ShapeAttribute("Prices (1-6)", (1, 6), 4.3, 0.8, 0.9, 0.30),
    ShapeAttribute("Home delivery (1-6)", (1, 6), 5.1, 0.7, 0.8, 0.15, 0.20, -0.10),
    ShapeAttribute("Phone support (1-6)", (1, 6), 4.6, 0.8, 0.9, 0.20, 0.40, 0.25),
)
"""The 1–6 survey's attributes, in column order."""

SKEWED_THRESHOLDS = (-1.9, -1.3, -0.7, -0.05, 0.75)
"""Utility cut-points into the scores 1..6 (most respondents answer 5 or 6)."""

SIGNED_ATTRIBUTES: tuple[ShapeAttribute, ...] = (
    ShapeAttribute("The staff were friendly (-2 to 2)", (-2, 2), 0.9, 0.8, 0.7, 0.30),
    ShapeAttribute("My problem was solved (-2 to 2)", (-2, 2), 0.4, 0.9, 0.8, 0.40),
    ShapeAttribute("The wait was acceptable (-2 to 2)", (-2, 2), -0.1, 0.8, 0.9, 0.25),
    ShapeAttribute("The invoice was clear (-2 to 2)", (-2, 2), 0.3, 0.7, 0.9, 0.15, 0.50, 0.20),
    ShapeAttribute("The website was easy to use (-2 to 2)", (-2, 2), 0.6, 0.7, 0.8, 0.10),
)
"""The signed survey's attributes; "The invoice was clear" is "n/a" for half of them."""

SIGNED_THRESHOLDS = (-1.1, -0.45, 0.2, 0.9)
"""Utility cut-points into the scores 1..5."""

UTILITY_NOISE = 0.45


def _simulate(attributes: tuple[ShapeAttribute, ...], thresholds: tuple[float, ...],
              target: str, first_score: int, n: int, seed: int, gap) -> pd.DataFrame:
    if n < 1:
        raise AnalysisError("a simulated survey needs at least one respondent")
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=n)
    utility = UTILITY_NOISE * rng.normal(size=n)
    written: dict[str, np.ndarray] = {}
    for a in attributes:
        lo, hi = a.scale
        scores = np.clip(np.rint(a.mean + a.loading * factor + a.noise * rng.normal(size=n)),
                         lo, hi).astype(np.int64)
        unanswered = rng.random(n) < a.unanswered
        z = (scores - a.mean) / float(np.hypot(a.loading, a.noise))
        utility += np.where(unanswered, a.unanswered_effect, a.weight * z)
        column = scores.astype(object)
        column[unanswered] = gap
        written[a.column] = column
    frame = pd.DataFrame({"Respondent ID": [f"R{i:05d}" for i in range(1, n + 1)]})
    frame[target] = first_score + np.searchsorted(np.asarray(thresholds), utility, side="right")
    return frame.assign(**written)


def simulate_skewed_six(n: int = 1500, *, seed: int = 31) -> pd.DataFrame:
    """The 1–6 survey (module docstring): id, overall satisfaction, five attributes with
    routing blanks (``None``)."""
    return _simulate(SKEWED_ATTRIBUTES, SKEWED_THRESHOLDS, SKEWED_TARGET, 1, n, seed, None)


def simulate_signed_agreement(n: int = 1500, *, seed: int = 32) -> pd.DataFrame:
    """The signed −2..2 survey (module docstring): id, overall satisfaction 1–5, five
    statements, one of them "n/a" for half of the respondents."""
    return _simulate(SIGNED_ATTRIBUTES, SIGNED_THRESHOLDS, SIGNED_TARGET, 1, n, seed, NA_TEXT)
