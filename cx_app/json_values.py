"""numpy values as plain JSON: the one encoder the project's documents use.

:func:`plain` turns a numpy scalar or array into plain Python (what ``json.dumps`` accepts);
:func:`json_default` is the ``default=`` hook of ``json.dumps`` for documents that may hold numpy
values, tuples or sets, and refuses anything else by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["json_default", "plain"]


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
    sets as lists; TypeError naming the type of anything else.

    >>> import json
    >>> json.dumps({"n": np.int64(2), "pair": (1, 2)}, default=json_default)
    '{"n": 2, "pair": [1, 2]}'
    """
    if isinstance(value, np.ndarray | np.generic):
        return plain(value)
    if isinstance(value, tuple | set):
        return list(value)
    raise TypeError(f"{type(value).__name__} cannot be written as JSON")
