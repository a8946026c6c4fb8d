"""The child process that opens a model file and makes its first prediction, within limits.

Started by :mod:`cx_app.estimate.model_sandbox` (the parent's side) as
``python -m cx_app.estimate.model_check_child`` through :mod:`cx_app.isolation`; it opens each
file as :func:`cx_app.estimate.model_file.open_checked_model` does and predicts a few synthetic
respondents, one JSON line per file.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from cx_app.errors import ModelFileError
from cx_app.estimate.model_file import open_checked_model
from cx_app.isolation import child_main, next_cpu_share

__all__ = ["synthetic_rows"]


def synthetic_rows(model: Any, n_random: int = 5, seed: int = 0) -> np.ndarray:
    """A few respondents on the model's attribute scales: every score at its scale's minimum,
    maximum and middle, ``n_random`` seeded random rows, and a row of unanswered scores (NaN)
    when the model fills gaps itself."""
    try:
        scales = {a.name: (a.scale.min, a.scale.max) for a in model.schema.attributes}
    except Exception:  # a schema this cx-app cannot parse: a 0–10 scale for every attribute
        scales = {}
    low, high = (np.array([scales.get(name, (0, 10))[i] for name in model.attribute_names],
                          dtype=float) for i in (0, 1))
    rng = np.random.default_rng(seed)
    rows = [low, high, np.round((low + high) / 2),
            *(rng.integers(low, high, endpoint=True).astype(float) for _ in range(n_random))]
    if model.fills_gaps:
        rows.append(np.full(len(low), np.nan))
    return np.vstack(rows)


def _check(data: bytes, request: dict[str, Any]) -> None:
    """The work: ``request`` = ``{"label", "trusted", "sizes", "seconds"}`` for the files
    whose bytes are ``data`` one after the other; open each, predict, and print one JSON line
    per file."""
    start = 0
    for size in request["sizes"]:
        next_cpu_share(request["seconds"])
        try:
            answer = _first_prediction(data[start:start + size], str(request["label"]),
                                       list(request["trusted"]))
        except MemoryError:
            answer = {"limit": "memory"}
        start += size
        print(json.dumps(answer), flush=True)


def _first_prediction(data: bytes, label: str, trusted: list[str]) -> dict[str, Any]:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = open_checked_model(data, label, trusted)
            rows = synthetic_rows(model)
            proba = model.predict_proba(rows)
    except ModelFileError as exc:
        return {"refused": str(exc)}
    except MemoryError:
        raise
    except Exception as exc:  # anything the model raises is the model's failure
        return {"failed": " ".join(f"{type(exc).__name__}: {exc}".split())[:300]}
    if proba.shape != (len(rows), len(model.classes)) or not np.all(np.isfinite(proba)):
        return {"failed": f"probabilities of shape {proba.shape}, not all finite"}
    return {"ok": True}


if __name__ == "__main__":
    child_main(_check)
