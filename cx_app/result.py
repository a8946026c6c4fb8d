"""Results as frozen pydantic models; ``Estimate``, the one type of a value with its interval.

Their JSON is pydantic's; aliases, ``computed_field``, ``exclude_if`` and :func:`flattened` keep
the public keys (the golden files of ``tests/golden`` prove it).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, PlainSerializer, model_serializer

from cx_app.json_values import plain

__all__ = ["Array", "Estimate", "Finite", "Result", "flattened"]

Array = Annotated[np.ndarray, PlainSerializer(plain)]
"""A numpy array field: kept as it is, written as (nested) lists."""

Finite = Annotated[float, PlainSerializer(lambda v: v if math.isfinite(v) else None)]
"""A float written as null when it is NaN or infinite (JSON has neither)."""


class Result(BaseModel):
    """A frozen result; :meth:`to_dict` is its JSON-ready dict."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        """A numpy value in a loosely typed field (``dict``, ``Any``) as plain JSON, any other
        value pydantic does not know as its text (as ``json.dumps(default=str)`` wrote it)."""
        return self.model_dump(mode="json", by_alias=True, fallback=_plain_or_text)


def _plain_or_text(value: Any) -> Any:
    return plain(value) if isinstance(value, np.ndarray | np.generic) else str(value)


def flattened(*names: str):
    """A wrap serializer writing the fields ``names`` (results themselves) flat into their
    parent's JSON: ``{"method": ..., **gap}`` rather than ``{"method": ..., "gap": {...}}``."""

    def serialize(self: Result, handler: Any) -> dict[str, Any]:
        out = handler(self)
        for name in names:
            out.update(out.pop(name))
        return out

    return model_serializer(mode="wrap")(serialize)


class Estimate(Result):
    """An estimate with its 95 % interval and, when known, its standard error."""

    value: float
    ci95: tuple[float, float]
    se: float | None = None
