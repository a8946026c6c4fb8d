"""numpy values as plain JSON: the one encoder the project's documents use."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

__all__ = ["json_default", "plain", "plain_document"]


def plain(value: Any) -> Any:
    """A numpy scalar or array as plain Python (int/float/str/list); other values unchanged.

    Integral floats stay floats; integer dtypes become ``int``: what ``json.dumps`` accepts.

    >>> plain(np.int64(3)), plain(np.array([1.5, 2.0])), plain("a")
    (3, [1.5, 2.0], 'a')
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def json_default(value: Any) -> Any:
    """``json.dumps(..., default=json_default)``: numpy values via :func:`plain`, tuples and
    sets as lists, a dataclass instance as the dict of its fields; TypeError naming the type of
    anything else.

    >>> import json
    >>> json.dumps({"n": np.int64(2), "pair": (1, 2)}, default=json_default)
    '{"n": 2, "pair": [1, 2]}'
    >>> @dataclasses.dataclass
    ... class Point:
    ...     x: int
    >>> json.dumps([Point(1)], default=json_default)
    '[{"x": 1}]'
    """
    if isinstance(value, np.ndarray | np.generic):
        return plain(value)
    if isinstance(value, tuple | set):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseModel):  # a result (cx_app.result.Result): its own JSON
        return value.model_dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} cannot be written as JSON")


def plain_document(value: Any) -> Any:
    """A nested document (mappings, lists, tuples, numpy values) as plain JSON values: mapping
    keys as text, sequences and arrays as lists, numpy scalars as Python numbers, and a NaN or
    infinity as None (strict JSON has no NaN).

    >>> plain_document({1: (np.float64(0.5), np.nan), "a": np.array([1, 2])})
    {'1': [0.5, None], 'a': [1, 2]}
    """
    if isinstance(value, Mapping):
        return {str(k): plain_document(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [plain_document(v) for v in value]
    value = plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
