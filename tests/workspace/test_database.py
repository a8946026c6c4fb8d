"""Opening the workspace database: which URL, SQLite's settings for several processes, the
retry of a locked transaction, and one sentence for a database that cannot be used."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from cx_app.errors import WorkspaceError
from cx_app.workspace import database as db_module
from cx_app.workspace.database import (
    ENV_URL,
    database_url,
    default_database_path,
    open_database,
)
from cx_app.workspace.programs import Workspace


def test_the_url_is_the_argument_then_the_environment_then_the_users_file(monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv(ENV_URL, raising=False)
    assert default_database_path() == tmp_path / "data" / "cx-app" / "workspace.db"
    assert database_url() == f"sqlite:///{tmp_path}/data/cx-app/workspace.db"
    monkeypatch.setenv(ENV_URL, "sqlite:///from-env.db")
    assert database_url() == "sqlite:///from-env.db"
    assert database_url("sqlite:///given.db") == "sqlite:///given.db"
    monkeypatch.delenv(ENV_URL)
    with Workspace.open() as ws:  # the default file is created with its folder
        assert ws.list_programs() == []
    assert (tmp_path / "data" / "cx-app" / "workspace.db").is_file()


def test_sqlite_is_set_up_for_several_processes(tmp_path):
    database = open_database(f"sqlite:///{tmp_path / 'w.db'}")
    with database.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() == 30_000
    database.dispose()


def test_a_write_waits_for_another_processes_lock(tmp_path):
    path = tmp_path / "w.db"
    database = open_database(f"sqlite:///{path}")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock for a second
    threading.Timer(1.0, lambda: other.execute("COMMIT")).start()
    started = time.monotonic()
    database.write(lambda s: s.execute(text(
        "INSERT INTO reports (program_id, kind, filename, sha256, size, waves, created) "
        "SELECT 1, 'x', 'f', 'h', 0, 0, '2026-01-01' WHERE 0")))
    assert time.monotonic() - started >= 0.9
    other.close()
    database.dispose()


def _locked() -> OperationalError:
    return OperationalError("INSERT ...", {}, sqlite3.OperationalError("database is locked"))


def test_a_locked_transaction_is_run_again(monkeypatch):
    monkeypatch.setattr(db_module.time, "sleep", lambda _s: None)
    calls = []

    def work():
        calls.append(1)
        if len(calls) < 3:
            raise _locked()
        return "done"

    assert db_module._with_retries("sqlite:///w.db", work) == "done"
    assert len(calls) == 3


def test_a_lock_that_stays_and_other_failures_are_one_sentence(monkeypatch):
    monkeypatch.setattr(db_module, "RETRY_SECONDS", 0.05)

    def locked():
        raise _locked()

    with pytest.raises(WorkspaceError, match=r"^the workspace database sqlite:///w.db stayed "
                                             r"locked by another process for 0 s"):
        db_module._with_retries("sqlite:///w.db", locked)

    def broken():
        raise OperationalError("SELECT", {}, sqlite3.OperationalError("disk I/O error"))

    with pytest.raises(WorkspaceError, match=r"^the workspace database sqlite:///w.db failed: "
                                             r"disk I/O error$"):
        db_module._with_retries("sqlite:///w.db", broken)


def test_a_database_that_cannot_be_used_is_one_sentence_without_its_password(tmp_path):
    with pytest.raises(WorkspaceError, match="is not a database URL"):
        open_database("not a url")
    with pytest.raises(WorkspaceError) as refused:
        open_database("postgresql+psycopg://analyst:s3cret@127.0.0.1:1/cx")
    message = str(refused.value)
    assert message.startswith("cannot open the workspace database "
                              "postgresql+psycopg://analyst:***@127.0.0.1:1/cx: ")
    assert "s3cret" not in message and "\n" not in message
    with pytest.raises(WorkspaceError, match="needs a database driver that is not installed"):
        open_database("mysql+notadriver://host/db")
