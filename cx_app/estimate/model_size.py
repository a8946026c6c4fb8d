"""A model's size and the memory of one prediction batch, from its arrays (issue 33).

The child-process check predicts only a few rows: a hidden layer of 400,000 units passes it and
then needs gigabytes for a wave. So the parameter count is bounded, and the widest intermediate
(the widest layer, the support vectors, a k-NN model's training rows) sets the rows of one
prediction batch (limits: docs/deployment.md); a model whose one row alone needs more is refused.

>>> import numpy as np
>>> from sklearn.neural_network import MLPClassifier
>>> net = MLPClassifier(hidden_layer_sizes=(50,), solver="lbfgs", max_iter=200)
>>> net = net.fit(np.eye(4), [0, 1, 0, 1])
>>> size = model_size(net)
>>> size.parameters  # 2 × (4×50 + 50 in, 50×1 + 1 out: its layers and their best copy) + 2
604
>>> size.widest
50
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from cx_app.errors import ModelFileError
from cx_app.isolation import env_number

__all__ = ["DEFAULT_BATCH_MB", "DEFAULT_MAX_PARAMETERS", "ModelSize", "batch_rows",
           "check_model_size", "model_size"]

DEFAULT_MAX_PARAMETERS = 20_000_000
DEFAULT_BATCH_MB = 64
MAX_BATCH_ROWS = 4096
"""The largest batch, even for a small model (a wave of 4,096 rows or fewer: one batch)."""
WORKING_COPIES = 4
"""Arrays of the widest size one prediction holds per row at once (a layer's input, its
output, the activation's copy, the next product), in float64."""
_WIDE = ("support_vectors_", "_fit_X")
"""Attributes whose rows each prediction row is compared with (kernel machines, k-NN)."""
_MB = 1024 * 1024


class ModelSize(BaseModel):
    """The numbers of a fitted model: its parameters and its widest per-row intermediate."""

    model_config = ConfigDict(frozen=True)

    parameters: int
    """Every number of its fitted arrays."""
    widest: int
    """The most numbers one row of a prediction needs at once in one step."""

    @property
    def row_bytes(self) -> int:
        """The memory one row of a prediction needs (float64, :data:`WORKING_COPIES`)."""
        return max(1, self.widest) * 8 * WORKING_COPIES


def limits(environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """(largest parameter count, bytes of one prediction batch) from the environment."""
    return (int(env_number("CX_APP_MODEL_MAX_PARAMETERS", DEFAULT_MAX_PARAMETERS, environ,
                           ModelFileError)),
            int(env_number("CX_APP_PREDICT_BATCH_MB", DEFAULT_BATCH_MB, environ,
                           ModelFileError) * _MB))


def _parts(obj: Any, seen: set[int], depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(attribute name, value) of every fitted attribute of ``obj`` and of the estimators in
    it (pipeline steps, calibrated copies, lists, dicts), each object once."""
    if depth > 50 or id(obj) in seen or isinstance(obj, np.ndarray | str | bytes):
        return
    seen.add(id(obj))
    if isinstance(obj, list | tuple):
        items = [("", item) for item in obj]
    elif isinstance(obj, dict):
        items = [(str(key), item) for key, item in obj.items()]
    else:
        attributes = getattr(obj, "__dict__", None)
        if not isinstance(attributes, dict) or not type(obj).__module__.startswith(
                ("sklearn", "xgboost")):
            return
        items = list(attributes.items())
    for key, item in items:
        yield key, item
        yield from _parts(item, seen, depth + 1)


def model_size(estimator: Any) -> ModelSize:
    """The :class:`ModelSize` of a fitted scikit-learn estimator or pipeline."""
    parameters, widest, counted = 0, 1, set()
    for key, value in _parts(estimator, set()):
        if (isinstance(value, np.ndarray) and value.dtype.kind in "fiub"
                and id(value) not in counted):  # an array held twice counts once
            counted.add(id(value))
            parameters += int(value.size)
            if key in _WIDE and value.ndim == 2:
                widest = max(widest, int(value.shape[0]))
            elif value.ndim == 2:
                widest = max(widest, int(value.shape[1]))
    return ModelSize(parameters=parameters, widest=widest)


def check_model_size(estimator: Any, label: str, environ: Mapping[str, str] | None = None
                     ) -> ModelSize:
    """The model's size, or :class:`ModelFileError` (one sentence naming ``label``) when its
    parameters or one row of its prediction exceed the limits."""
    size = model_size(estimator)
    max_parameters, batch_bytes = limits(environ)
    if size.parameters > max_parameters:
        raise ModelFileError(
            f"{label}: the model holds {size.parameters:,} numbers, more than the "
            f"{max_parameters:,} this server predicts with (CX_APP_MODEL_MAX_PARAMETERS); "
            "it was not used.")
    if size.row_bytes > batch_bytes:
        raise ModelFileError(
            f"{label}: one respondent's prediction would need {size.row_bytes / _MB:,.0f} MB "
            f"(a layer of {size.widest:,} units), more than the {batch_bytes // _MB:,} MB of "
            "one prediction batch (CX_APP_PREDICT_BATCH_MB); it was not used.")
    return size


def batch_rows(size: ModelSize, environ: Mapping[str, str] | None = None) -> int:
    """How many rows one prediction batch of a model of ``size`` holds (at least 1)."""
    _, batch_bytes = limits(environ)
    return max(1, min(MAX_BATCH_ROWS, batch_bytes // size.row_bytes))
