"""The app's process-wide, bounded result store and the content keys it is read by.

One store per server process, so that the same training on the same upload is never repeated.
It offers no way to list what it holds: a session can only get a result back by presenting the
content key of data it loaded itself. Its bounds come from ``CX_APP_*`` variables
(:func:`cache_limits`).
"""

from __future__ import annotations

import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cx_app.isolation import env_number
from cx_app.provenance import digest, survey_key, training_key

__all__ = ["CacheLimits", "ResultStore", "approximate_nbytes", "cache_limits", "digest",
           "survey_key", "training_key"]


@dataclass(frozen=True)
class CacheLimits:
    result_items: int = 32
    result_bytes: int = 512 * 2**20
    ttl_seconds: float = 3600.0
    memo_items: int = 256


def cache_limits() -> CacheLimits:
    d = CacheLimits()
    return CacheLimits(
        result_items=int(env_number("CX_APP_RESULT_CACHE_ITEMS", d.result_items)),
        result_bytes=int(env_number("CX_APP_RESULT_CACHE_MB", d.result_bytes / 2**20) * 2**20),
        ttl_seconds=env_number("CX_APP_CACHE_TTL_MINUTES", d.ttl_seconds / 60) * 60,
        memo_items=int(env_number("CX_APP_ANALYSIS_MEMO_ITEMS", d.memo_items)),
    )


class _ByteCounter:
    def __init__(self) -> None:
        self.n = 0

    def write(self, chunk: bytes) -> int:
        self.n += len(chunk)
        return len(chunk)


def approximate_nbytes(value: Any) -> int:
    """The size of ``value`` as pickled, without building the pickle: array buffers are counted,
    not copied, so a 1 GB random forest is measured in milliseconds."""
    counter = _ByteCounter()
    buffers: list = []
    pickle.Pickler(counter, protocol=5, buffer_callback=buffers.append).dump(value)
    return counter.n + sum(memoryview(b).nbytes for b in buffers)


class ResultStore:
    """A bounded (entries, approximate bytes, age), thread-safe LRU of content keys to results;
    deliberately no way to list keys or values."""

    def __init__(self, max_items: int = 32, *, max_bytes: int | None = None,
                 ttl_seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sizeof: Callable[[Any], int] = approximate_nbytes) -> None:
        if max_items < 1:
            raise ValueError("max_items must be at least 1")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._sizeof = sizeof
        self._items: OrderedDict[str, tuple[Any, int, float]] = OrderedDict()  # value, bytes, t
        self._bytes = 0
        self._lock = threading.Lock()

    @classmethod
    def from_limits(cls, limits: CacheLimits) -> ResultStore:
        return cls(limits.result_items, max_bytes=limits.result_bytes,
                   ttl_seconds=limits.ttl_seconds)

    def _drop(self, key: str) -> None:
        _value, size, _t = self._items.pop(key)
        self._bytes -= size

    def _expire(self) -> None:
        if self.ttl_seconds is None:
            return
        limit = self._clock() - self.ttl_seconds
        for key in [k for k, (_v, _s, t) in self._items.items() if t < limit]:
            self._drop(key)

    def get(self, key: str) -> Any | None:
        with self._lock:
            self._expire()
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key][0]

    def put(self, key: str, value: Any) -> None:
        size = self._sizeof(value) if self.max_bytes is not None else 0
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._expire()
            if self.max_bytes is not None and size > self.max_bytes:
                return  # too big to share; the user's own session still holds it
            self._items[key] = (value, size, self._clock())
            self._bytes += size
            while len(self._items) > self.max_items or (
                    self.max_bytes is not None and self._bytes > self.max_bytes):
                self._drop(next(iter(self._items)))

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._items)
