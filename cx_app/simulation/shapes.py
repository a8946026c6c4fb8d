"""Two more survey shapes of ``shared/SURVEYS.md``, seeded, for the model-quality suite.

:func:`simulate_skewed_six`: a 1–6 scale skewed to the top with routing blanks on three
attributes; :func:`simulate_signed_agreement`: signed −2..2 statements (−1 is a real answer),
"n/a" on half of one, satisfaction 1–5. The model of :mod:`cx_app.simulation.waves`, with
``U = Σ_j w_j·z_j + u_j·[j unanswered] + σ·e``: the ``u_j`` make some gaps informative, as in
real exports (who never called support is a little more satisfied). Rows as written in an
export (blanks as ``None``, "n/a" as text).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cx_app.errors import AnalysisError
from cx_app.simulation.waves import AttributeTruth

SKEWED_TARGET = "Overall satisfaction (1-6)"
SIGNED_TARGET = "Overall satisfaction (1-5)"
NA_TEXT = "n/a"


SKEWED_ATTRIBUTES: tuple[AttributeTruth, ...] = (
    AttributeTruth("staff", "Store staff (1-6)", 0.30, 5.0, 0.8, 0.7, 0.05, (1, 6)),
    AttributeTruth("range", "Product range (1-6)", 0.25, 4.8, 0.7, 0.8, 0.0, (1, 6)),
    AttributeTruth("prices", "Prices (1-6)", 0.30, 4.3, 0.8, 0.9, 0.0, (1, 6)),
    AttributeTruth("delivery", "Home delivery (1-6)", 0.15, 5.1, 0.7, 0.8, 0.20, (1, 6),
                   unanswered_effect=-0.10),
    AttributeTruth("phone", "Phone support (1-6)", 0.20, 4.6, 0.8, 0.9, 0.40, (1, 6),
                   unanswered_effect=0.25),
)
"""The 1–6 survey's attributes, in column order."""

SKEWED_THRESHOLDS = (-1.9, -1.3, -0.7, -0.05, 0.75)
"""Utility cut-points into the scores 1..6 (most respondents answer 5 or 6)."""

SIGNED_ATTRIBUTES: tuple[AttributeTruth, ...] = (
    AttributeTruth("staff", "The staff were friendly (-2 to 2)", 0.30, 0.9, 0.8, 0.7, 0.0, (-2, 2)),
    AttributeTruth("solved", "My problem was solved (-2 to 2)", 0.40, 0.4, 0.9, 0.8, 0.0, (-2, 2)),
    AttributeTruth("wait", "The wait was acceptable (-2 to 2)", 0.25, -0.1, 0.8, 0.9, 0.0, (-2, 2)),
    AttributeTruth("invoice", "The invoice was clear (-2 to 2)", 0.15, 0.3, 0.7, 0.9, 0.50, (-2, 2),
                   unanswered_effect=0.20),
    AttributeTruth("website", "The website was easy to use (-2 to 2)", 0.10, 0.6, 0.7, 0.8, 0.0,
                   (-2, 2)),
)
"""The signed survey's attributes; "The invoice was clear" is "n/a" for half of them."""

SIGNED_THRESHOLDS = (-1.1, -0.45, 0.2, 0.9)
"""Utility cut-points into the scores 1..5."""

UTILITY_NOISE = 0.45


def _simulate(attributes: tuple[AttributeTruth, ...], thresholds: tuple[float, ...],
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
        unanswered = rng.random(n) < a.not_used
        z = (scores - a.mean) / a.sd
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
