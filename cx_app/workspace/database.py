"""Opening the workspace database: its URL, the engine, sessions with retries, migrations.

SQLite's settings for several processes at once and the retries: docs/workspace.md. Migrations
run when a database is opened, under the write lock (SQLite) or an advisory lock (PostgreSQL),
so that two processes opening it migrate once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError

__all__ = ["ENV_URL", "RETRY_SECONDS", "Database", "current_revision", "database_url",
           "default_database_path", "head_revision", "migrate", "open_database", "serialize"]

ENV_URL = "CX_APP_DATABASE_URL"
BUSY_TIMEOUT_MS = 30_000  # SQLite's own wait before it answers "database is locked"
RETRY_SECONDS = 60.0  # how long a locked transaction is run again before giving up
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_MIGRATION_LOCK = 0x6378_6170_7077  # an arbitrary, fixed advisory-lock key ("cxappw")

T = TypeVar("T")


def default_database_path() -> Path:
    """``$XDG_DATA_HOME/cx-app/workspace.db`` (``~/.local/share`` when it is not set)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cx-app" / "workspace.db"


def database_url(url: str | None = None) -> str:
    chosen = url or os.environ.get(ENV_URL)
    return chosen if chosen else f"sqlite:///{default_database_path()}"


def _shown(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(not a database URL)"


def _is_locked(exc: BaseException) -> bool:
    message = str(getattr(exc, "orig", exc)).lower()
    return isinstance(exc, OperationalError) and ("database is locked" in message
                                                  or "database table is locked" in message
                                                  or "database is busy" in message)


@dataclass(frozen=True, eq=False)
class Database:
    """``read`` and ``write`` run a unit of work in one transaction, retried while locked."""

    url: str
    engine: Engine
    writer: Engine  # the same engine, its transactions taking the write lock first (SQLite)

    @property
    def shown_url(self) -> str:
        return _shown(self.url)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def read(self, work: Callable[[Session], T]) -> T:
        return self._run(self.engine, work)

    def write(self, work: Callable[[Session], T]) -> T:
        return self._run(self.writer, work)

    def _run(self, engine: Engine, work: Callable[[Session], T]) -> T:
        def once() -> T:
            with Session(engine, expire_on_commit=False) as session, session.begin():
                return work(session)

        return _with_retries(self.shown_url, once)

    def dispose(self) -> None:
        self.engine.dispose()


def serialize(session: Session, subject: str) -> None:
    """Inside a write transaction: wait until no other transaction works on ``subject`` (a
    look-up then an insert that must not run twice at once). SQLite's write transactions are
    one at a time already; PostgreSQL takes an advisory lock on the subject's hash."""
    if session.get_bind().dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(subject.encode("utf-8")).digest()[:8], "big",
                             signed=True)
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def _first_line(exc: BaseException) -> str:
    text_ = str(getattr(exc, "orig", None) or exc).strip()
    return text_.splitlines()[0] if text_ else type(exc).__name__


def _with_retries(shown_url: str, work: Callable[[], T]) -> T:
    deadline = time.monotonic() + RETRY_SECONDS
    pause = 0.05
    while True:
        try:
            return work()
        except OperationalError as exc:
            if not _is_locked(exc):
                raise WorkspaceError(f"the workspace database {shown_url} failed: "
                                     f"{_first_line(exc)}") from None
            if time.monotonic() > deadline:
                raise WorkspaceError(
                    f"the workspace database {shown_url} stayed locked by another process for "
                    f"{RETRY_SECONDS:.0f} s; try again when it has finished") from None
        time.sleep(pause * (1 + random.random()))
        pause = min(pause * 2, 1.0)


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        write = connection.get_execution_options().get("cx_app_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _check_sqlite_file(path: Path, shown: str) -> None:
    """Refuse, before anything writes to it, a non-empty file that is not a cx-app workspace
    (not SQLite, or another application's tables); read read-only, so its bytes stay as they are."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
    except OSError:
        return
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro",
                                                uri=True)) as connection:
            tables = {row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise WorkspaceError(f"{shown} is not a cx-app workspace ({exc}); it was not changed: "
                             "give another file with --db or CX_APP_DATABASE_URL") from None
    if tables and "alembic_version" not in tables:
        raise WorkspaceError(
            f"{shown} is another application's SQLite database (its tables: "
            f"{', '.join(sorted(tables)[:5])}{', ...' if len(tables) > 5 else ''}), not a "
            "cx-app workspace; it was not changed: give another file with --db or "
            "CX_APP_DATABASE_URL")


def _engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise WorkspaceError(f"{url!r} is not a database URL (e.g. sqlite:///path/workspace.db "
                             "or postgresql://user@host/db)") from None
    sqlite = parsed.get_backend_name() == "sqlite"
    if sqlite and parsed.database and parsed.database != ":memory:":
        _check_sqlite_file(Path(parsed.database), _shown(url))
        try:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create the folder of the workspace database "
                                 f"{parsed.database}: {exc.strerror or exc}") from None
    try:
        engine = create_engine(parsed, pool_pre_ping=not sqlite)
    except (NoSuchModuleError, ModuleNotFoundError) as exc:
        extra = (" (pip install 'cx-app[postgresql]')"
                 if parsed.get_backend_name() == "postgresql" else "")
        raise WorkspaceError(f"the workspace URL {_shown(url)} needs a database driver that is "
                             f"not installed{extra}: {exc}") from None
    if sqlite:
        _sqlite_setup(engine)
    return engine


def _alembic_config(connection: Connection | None = None) -> Any:
    """Without an ``alembic.ini``; ``env.py`` takes the connection from ``attributes``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    config.attributes["connection"] = connection
    return config


@cache
def _scripts() -> Any:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config())


def head_revision() -> str:
    return str(_scripts().get_current_head())


def current_revision(database: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _upgrade_sqlite(database: Database, run: Callable[[Connection], None]) -> None:
    """As SQLite's manual prescribes for table rebuilds: foreign keys off (a rebuilt parent
    table would cascade its drop to every child row), then ``foreign_key_check`` before commit."""
    with database.writer.connect() as connection:
        raw = connection.connection.driver_connection
        raw.execute("PRAGMA foreign_keys = OFF")  # outside a transaction, as it must be
        try:
            with connection.begin():
                run(connection)
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise WorkspaceError(f"the migration of {database.shown_url} would leave "
                                         f"{len(broken)} row(s) pointing nowhere; nothing changed")
        finally:
            raw.execute("PRAGMA foreign_keys = ON")


def migrate(database: Database, revision: str = "head") -> None:
    """Upgrade the schema to ``revision``, under a lock so that concurrent openers migrate once."""
    from alembic import command
    from alembic.util import CommandError

    current = current_revision(database)
    known = {script.revision for script in _scripts().walk_revisions()}
    if current is not None and current not in known:
        raise WorkspaceError(
            f"the workspace database {database.shown_url} was written by a newer cx-app (schema "
            f"revision {current}); update cx-app to open it.")
    if current is not None and current == (head_revision() if revision == "head" else revision):
        return  # nothing to do: no write lock taken

    def upgrade() -> None:
        if database.dialect == "sqlite":
            _upgrade_sqlite(database, lambda c: command.upgrade(_alembic_config(c), revision))
            return
        with database.writer.begin() as connection:
            if database.dialect == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                   {"key": _PG_MIGRATION_LOCK})
            command.upgrade(_alembic_config(connection), revision)

    try:
        _with_retries(database.shown_url, upgrade)
    except CommandError as exc:
        raise WorkspaceError(f"cannot migrate the workspace database {database.shown_url}: "
                             f"{exc}") from None


def open_database(url: str | None = None, *, migrate_schema: bool = True) -> Database:
    """Open the workspace at ``url`` (:func:`database_url`), its schema upgraded."""
    chosen = database_url(url)
    engine = _engine(chosen)
    database = Database(chosen, engine, engine.execution_options(cx_app_write=True))
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
            break
        except DBAPIError as exc:
            # a new SQLite file switching to WAL in another process answers "locked": wait
            if _is_locked(exc) and time.monotonic() < deadline:
                time.sleep(0.05 + 0.1 * random.random())
                continue
            engine.dispose()
            raise WorkspaceError(f"cannot open the workspace database {database.shown_url}: "
                                 f"{_first_line(exc)}") from None
    if migrate_schema:
        migrate(database)
    return database
