"""Surviving a page reload: an in-memory snapshot of each browser session's analysis.

A reload starts a new Streamlit session with empty state; the address bar is what survives.
Each session gets a token of its own from the server (:meth:`RecoveryStore.issue`), kept in the
page's address (``?session=…``), and at the end of every script run — after the page has made
its change — a copy of the session's analysis is saved under it in a :class:`RecoveryStore` (one
per server process). After a reload the new session finds the snapshot by the token in its
address and offers it back. Nothing is written to disk, and the store is bounded like the result
store: entries, approximate bytes and age (:func:`cx_app.app.store.cache_limits`).

Three rules keep one session's analysis its own (issue 24):

- **Only tokens this server issued count.** A token is 128 random bits and their HMAC-SHA-256
  under a key only this server process holds (:meth:`RecoveryStore.issued`): a token made up by
  anyone else is never offered anything and never saved under.
- **A session never adopts the token in its address.** Its own token is always a fresh one; the
  token in the address only names the snapshot to offer. A link carrying someone else's token
  (session fixation) therefore never leads the work of whoever opens it to that token.
- **Nothing is shared.** A snapshot is a copy of the session's analysis and page state taken in
  the session's own thread, and a restore gets another copy (:meth:`Snapshot.copy`): two
  sessions restored from one address never see each other's later uploads, models or choices.
  What the copies share is read-only by contract: the survey, the trained models'
  cross-validation arrays and fitted final models (already shared through the content-keyed
  result store) and uploaded file bytes (immutable ``bytes``); derived values are recomputed.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cx_app.app.store import CacheLimits, ResultStore

__all__ = ["Snapshot", "RecoveryStore", "valid_token", "snapshot_nbytes"]

_NONCE_BYTES = 16  # 128 random bits
_MAC_BYTES = 16  # the first half of an HMAC-SHA-256
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # 32 bytes, URL-safe base64 without padding


def valid_token(text: object) -> bool:
    """Whether ``text`` has the shape of a token (anything else is ignored unread); whether
    this server issued it is :meth:`RecoveryStore.issued`.

    >>> valid_token("A" * 43), valid_token("../etc"), valid_token(None)
    (True, False, False)
    """
    return isinstance(text, str) and bool(_TOKEN.match(text))


def _copy_containers(analysis: Any) -> Any:
    """A new analysis (a dataclass) whose dicts, sets and lists are new containers holding the
    same (read-only) values: adding a model or a trained key to one never shows in the other.
    Private containers (``_memo``: derived values, recomputed on demand) start empty."""
    values = {f.name: getattr(analysis, f.name) for f in dataclasses.fields(analysis) if f.init}
    return dataclasses.replace(analysis, **{
        name: type(value)() if name.startswith("_") else copy.copy(value)
        for name, value in values.items() if isinstance(value, dict | set | list)})


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A session's analysis and the page state needed to show it again (``state``:
    session-state entries by key)."""

    analysis: Any  # cx_app.app.session.Analysis
    state: Mapping[str, Any] = field(default_factory=dict)

    def copy(self) -> Snapshot:
        """A snapshot sharing no mutable object with this one (see the module docstring)."""
        return Snapshot(_copy_containers(self.analysis), copy.deepcopy(dict(self.state)))

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
    """Token → a copy of the latest :class:`Snapshot` of that browser session (bounded LRU),
    for tokens this store issued only."""

    def __init__(self, limits: CacheLimits) -> None:
        self._key = secrets.token_bytes(32)  # never leaves the process: a restart forgets all
        self._store = ResultStore(limits.result_items, max_bytes=limits.result_bytes,
                                  ttl_seconds=limits.ttl_seconds, sizeof=snapshot_nbytes)

    def _mac(self, nonce: bytes) -> bytes:
        return hmac.new(self._key, nonce, hashlib.sha256).digest()[:_MAC_BYTES]

    def issue(self) -> str:
        """A fresh token for a new session (URL-safe, 43 characters)."""
        nonce = secrets.token_bytes(_NONCE_BYTES)
        return base64.urlsafe_b64encode(nonce + self._mac(nonce)).decode("ascii").rstrip("=")

    def issued(self, token: object) -> bool:
        """Whether ``token`` is one this store issued (checked in constant time)."""
        if not valid_token(token):
            return False
        raw = base64.urlsafe_b64decode(f"{token}=")
        return hmac.compare_digest(raw[_NONCE_BYTES:], self._mac(raw[:_NONCE_BYTES]))

    def save(self, token: str, snapshot: Snapshot) -> None:
        """Keep a copy of ``snapshot`` under ``token`` (ignored unless this store issued it)."""
        if self.issued(token):
            self._store.put(token, snapshot.copy())

    def get(self, token: object) -> Snapshot | None:
        """The snapshot kept under ``token``, to describe (read it, never change it)."""
        return self._store.get(token) if self.issued(token) else None

    def restore(self, token: object) -> Snapshot | None:
        """A copy of the snapshot under ``token`` for a session to take as its own."""
        snapshot = self.get(token)
        return None if snapshot is None else snapshot.copy()

    def __len__(self) -> int:
        return len(self._store)
