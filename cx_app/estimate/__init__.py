"""New waves without answers: ALP estimates, calibration, drift and model files.

Public API: :mod:`~cx_app.estimate.alp` (``alp_confusion_matrix`` in our rows-actual
orientation, closed forms, ``alp_gap``, ``compare_alp_cm``), :mod:`~cx_app.estimate.calibration`
(none / temperature / sigmoid / isotonic, chosen by the held-out gap score),
:mod:`~cx_app.estimate.drift` (PSI, χ², unseen and missing attributes),
:mod:`~cx_app.estimate.training` (``train_model``: the final model, re-using a cross-validation
already done when given one), :mod:`~cx_app.estimate.model_file` (``save_model``, ``load_model``,
``model_bytes``: skops with a trusted-type list; its typed metadata ``TrainingData`` and
``HeldOutFigures`` in :mod:`~cx_app.estimate.model_metadata`) and :mod:`~cx_app.estimate.new_wave`
(``estimate_wave`` → ``WaveEstimate``: ALP levels, estimated NPS with interval, realized values)
and :mod:`~cx_app.estimate.document` (``WaveEstimateDocument``: an estimate's JSON, typed),
:mod:`~cx_app.estimate.metric_intervals` (95 % intervals of every estimated metric),
:mod:`~cx_app.estimate.alerts` (alert bands on estimated accuracy and net score) and
:mod:`~cx_app.estimate.from_probabilities` (:func:`estimate_from_probabilities`: the same
estimates from any model's probabilities).
Imports: engine, survey, models.
"""

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
