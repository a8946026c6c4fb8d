"""The audit trail: one row per change made to a program, with who made it and when.

Rows outlive the program they name (they hold its name, not its row). Who: in the app, the
signed-in user's e-mail or :data:`LOCAL_APP_USER`; in the CLI, the operating-system account.

>>> AuditAction.MODEL_TRAINED == "model trained"
True
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError
from cx_app.workspace.database import Database
from cx_app.workspace.records import as_utc
from cx_app.workspace.tables import AuditEvent, utc_now

__all__ = ["LOCAL_APP_USER", "AuditAction", "AuditRecord", "cli_user", "events", "record"]

LOCAL_APP_USER = "local user"  # single-user mode: nobody signs in
USER_CHARS = 320
PROGRAM_CHARS = 200
DEFAULT_LIMIT = 200


class AuditAction(StrEnum):
    PROGRAM_CREATED = "program created"
    PROGRAM_DELETED = "program deleted"
    PROGRAM_MOVED = "program moved"
    PROGRAM_IMPORTED = "program imported"
    PROGRAM_EXPORTED = "program exported"
    WAVE_ADDED = "wave added"
    WAVE_REMOVED = "wave removed"
    MODEL_TRAINED = "model trained"
    REPORT_EXPORTED = "report exported"
    MAPPING_CHANGED = "mapping changed"
    GROUPING_CHANGED = "grouping changed"


@dataclass(frozen=True)
class AuditRecord:
    """``action`` stays text: a newer cx-app may write an action this one does not know."""

    created: dt.datetime
    user: str
    action: str
    program: str | None
    detail: str | None
    issuer: str | None = None  # None: CLI, local app
    subject: str | None = None


def _record_of(row: AuditEvent) -> AuditRecord:
    return AuditRecord(created=as_utc(row.created), user=row.user, action=row.action,
                       program=row.program, detail=row.detail, issuer=row.issuer,
                       subject=row.subject)


def cli_user() -> str:
    """The operating-system account; ``uid N`` without a name (a container user)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return name.strip() or f"uid {os.getuid()}"


def record(database: Database, user: str, action: AuditAction, program: str | None = None,
           detail: str | None = None, *, session: Session | None = None,
           issuer: str | None = None, subject: str | None = None) -> AuditRecord:
    """Add one row; ``session``: in that write transaction, so that it commits with the change
    it records."""
    user = user.strip()
    if not user:
        raise WorkspaceError("an audit record needs the user who made the change")
    if len(user) > USER_CHARS:
        raise WorkspaceError(f"the user name {user[:40]!r}... is longer than {USER_CHARS} "
                             "characters; the audit trail cannot record it")
    if program is not None and len(program) > PROGRAM_CHARS:
        raise WorkspaceError(f"the program name {program[:40]!r}... is longer than "
                             f"{PROGRAM_CHARS} characters")
    row = AuditEvent(created=utc_now(), user=user, action=AuditAction(action).value,
                     program=program, detail=detail,
                     issuer=None if issuer is None else issuer[:500],
                     subject=None if subject is None else subject[:255])

    def add(s: Session) -> AuditRecord:
        s.add(row)
        s.flush()
        return _record_of(row)

    return add(session) if session is not None else database.write(add)


def events(database: Database, program: str | None = None, *, user: str | None = None,
           since: dt.datetime | None = None, limit: int = DEFAULT_LIMIT
           ) -> tuple[AuditRecord, ...]:
    """The audit trail, newest first."""
    query = select(AuditEvent).order_by(AuditEvent.created.desc(), AuditEvent.id.desc())
    if program is not None:
        query = query.where(AuditEvent.program == program)
    if since is not None:
        query = query.where(AuditEvent.created >= since)
    if user is not None:
        query = query.where(AuditEvent.user == user)
    query = query.limit(max(0, int(limit)))
    return database.read(lambda s: tuple(_record_of(r) for r in s.scalars(query)))
