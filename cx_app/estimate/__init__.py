"""New waves without answers: ALP estimates, calibration, drift and model files.

Each module's job is in docs/architecture.md's module map; ``estimate_from_probabilities`` (the
same estimates from any model's probabilities) is exported here.
Imports: engine, survey, models."""

from __future__ import annotations

from typing import Any

__all__ = ["estimate_from_probabilities"]


def __getattr__(name: str) -> Any:
    """``estimate_from_probabilities``, imported on first use: importing any
    ``cx_app.estimate`` module stays as light as before (no scikit-learn until needed)."""
    if name == "estimate_from_probabilities":
        from cx_app.estimate.from_probabilities import estimate_from_probabilities

        return estimate_from_probabilities
    raise AttributeError(f"module 'cx_app.estimate' has no attribute {name!r}")
