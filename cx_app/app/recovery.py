"""Surviving a page reload: an in-memory snapshot of each browser session's analysis.

A reload starts a new Streamlit session with empty state; the address bar is what survives.
The app keeps a random token in the page's address (``?session=…``) and, on every run, a
reference to the session's analysis under that token in a :class:`RecoveryStore` (one per
server process). After a reload the new session finds the snapshot by the token in its address
and offers it back. Nothing is written to disk, the token is 128 random bits (a snapshot can
only be found by the browser tab that holds its address), and the store is bounded like the
result store: entries, approximate bytes and age (:func:`cx_app.app.store.cache_limits`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cx_app.app.store import CacheLimits, ResultStore

__all__ = ["Snapshot", "RecoveryStore", "new_token", "valid_token", "snapshot_nbytes"]

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")


def new_token() -> str:
    """A fresh session token (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def valid_token(text: object) -> bool:
    """Whether ``text`` looks like a token of :func:`new_token` (anything else is ignored).

    >>> valid_token(new_token()), valid_token("../etc"), valid_token(None)
    (True, False, False)
    """
    return isinstance(text, str) and bool(_TOKEN.match(text))


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A session's analysis (by reference: it follows the session's later changes) and the
    page state needed to show it again (``state``: session-state entries by key)."""

    analysis: Any  # cx_app.app.session.Analysis
    state: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        a = self.analysis
        models = f"{len(a.models)} trained model(s)" if a.models else "no trained model"
        return f"{a.survey.source.filename} with {models}"


def snapshot_nbytes(snapshot: Snapshot) -> int:
    """What a snapshot keeps alive beyond the shared caches: the models' out-of-fold arrays
    and permutation importance, and uploaded file bytes in its state."""
    total = 0
    for model in snapshot.analysis.models.values():
        cv = model.cv
        total += sum(getattr(cv, k).nbytes for k in ("y_true", "y_pred", "proba", "fold"))
        if model.permutation is not None:
            total += model.permutation.per_fold.nbytes
    for value in snapshot.state.values():
        if isinstance(value, Mapping):
            total += sum(len(v) for v in value.values() if isinstance(v, bytes | bytearray))
    return total


class RecoveryStore:
    """Token → the latest :class:`Snapshot` of that browser session (bounded LRU)."""

    def __init__(self, limits: CacheLimits) -> None:
        self._store = ResultStore(limits.result_items, max_bytes=limits.result_bytes,
                                  ttl_seconds=limits.ttl_seconds, sizeof=snapshot_nbytes)

    def save(self, token: str, snapshot: Snapshot) -> None:
        if valid_token(token):
            self._store.put(token, snapshot)

    def get(self, token: object) -> Snapshot | None:
        return self._store.get(token) if valid_token(token) else None

    def __len__(self) -> int:
        return len(self._store)
