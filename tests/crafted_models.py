"""Crafted model files of issue 33's case 2, shared by the CLI test
(``tests/security/test_model_memory.py``) and the app's (``tests/e2e/
test_model_memory_browser.py``): the papers' small network fitted on the bundled sample, the
same network with its hidden layers replaced (one layer of 400,000 units; 40 layers of 300),
written as another machine would have written it."""

from __future__ import annotations

import copy
import dataclasses
import warnings
import zipfile
from pathlib import Path

import numpy as np
import skops.io as sio

from cx_app.estimate.drift import value_counts_by_attribute
from cx_app.estimate.model_file import TrainedModel, _payload
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.models.crossval import build_model
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

WIDE = 400_000
"""Units of the wide network's one hidden layer."""
DEEP = (300,) * 40
"""The deep network's hidden layers."""
WAVE = sample_path("telecom_nps_wave7_unlabeled")
"""The bundled unlabelled wave (1,200 respondents) the crafted models estimate."""


def honest_network() -> TrainedModel:
    """A small network (``ann``) fitted on the bundled sample: the honest model."""
    survey = load_survey(sample_path("telecom_nps"))
    classes = tuple(survey.schema.classes)
    y = np.searchsorted(classes, survey.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = build_model("ann", calibration="none").fit(survey.X, y)
    return TrainedModel(
        estimator=estimator, classes=classes,
        attribute_names=tuple(a.name for a in survey.schema.attributes),
        schema_yaml=survey.schema.to_yaml(), algorithm_id="ann", settings={},
        calibration="none", training=TrainingData(sha256="0" * 64, n=len(y)),
        cv=HeldOutFigures(), attribute_distributions=value_counts_by_attribute(survey.X))


def reshaped(model: TrainedModel, hidden: tuple[int, ...]) -> TrainedModel:
    """The model with its network's hidden layers replaced by ``hidden`` (small seeded
    weights: finite probabilities, and nothing for the zip to squeeze away)."""
    estimator = copy.deepcopy(model.estimator)
    net = estimator[-1]
    rng = np.random.default_rng(0)
    sizes = [net.coefs_[0].shape[0], *hidden, net.coefs_[-1].shape[1]]
    net.coefs_ = [rng.normal(0, 1e-3, (a, b)) for a, b in zip(sizes, sizes[1:], strict=False)]
    net.intercepts_ = [np.zeros(b) for b in sizes[1:]]
    net.hidden_layer_sizes, net.n_layers_ = hidden, len(sizes)
    return dataclasses.replace(model, estimator=estimator)


def untrusted_file(model: TrainedModel, path: Path) -> Path:
    """The model file as another machine would have written it (not through
    :func:`~cx_app.estimate.model_file.model_bytes`, which records this process's own files
    as checked)."""
    path.write_bytes(sio.dumps(_payload(model), compression=zipfile.ZIP_DEFLATED))
    return path
