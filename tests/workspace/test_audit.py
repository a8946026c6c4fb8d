"""The audit trail (cx_app/workspace/audit.py) on a new SQLite and a new PostgreSQL workspace."""

from __future__ import annotations

import datetime as dt
import getpass
import os
import shutil
import subprocess

import pytest
from workspace_helpers import BACKENDS, new_database

from cx_app.errors import WorkspaceError
from cx_app.workspace import audit
from cx_app.workspace.audit import AuditAction, AuditRecord, cli_user, events, record
from cx_app.workspace.database import open_database
from cx_app.workspace.tables import AuditEvent


@pytest.fixture(params=BACKENDS)
def database(request, tmp_path):
    """A new workspace on SQLite, and on the session's PostgreSQL server."""
    db = open_database(new_database(request.param, tmp_path, request))
    yield db
    db.dispose()


def test_rows_come_back_newest_first_with_who_what_and_when(database):
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    first = record(database, "alice@example.com", AuditAction.PROGRAM_CREATED, "North NPS",
                   "from telecom_wave7.xlsx")
    record(database, "dana@example.com", AuditAction.MODEL_TRAINED, "North NPS", "lr, svm")
    record(database, "bob@example.com", AuditAction.WAVE_ADDED, "South CSAT", "2025-03")
    after = dt.datetime.now(dt.UTC)
    assert first == AuditRecord(created=first.created, user="alice@example.com",
                                action="program created", program="North NPS",
                                detail="from telecom_wave7.xlsx")
    rows = events(database)
    assert [(r.user, r.action, r.program, r.detail) for r in rows] == [
        ("bob@example.com", "wave added", "South CSAT", "2025-03"),
        ("dana@example.com", "model trained", "North NPS", "lr, svm"),
        ("alice@example.com", "program created", "North NPS", "from telecom_wave7.xlsx")]
    for row in rows:
        assert row.created.tzinfo is not None and before <= row.created <= after
    assert rows[2] == first


def test_filters_and_limit(database):
    for n in range(5):
        record(database, f"user{n % 2}@example.com", AuditAction.REPORT_EXPORTED, "North NPS",
               f"report {n}")
    record(database, "user0@example.com", AuditAction.PROGRAM_DELETED, "Old")
    assert [r.detail for r in events(database, "North NPS")] == [
        "report 4", "report 3", "report 2", "report 1", "report 0"]
    assert [r.detail for r in events(database, "North NPS", limit=2)] == ["report 4", "report 3"]
    assert [r.detail for r in events(database, user="user1@example.com")] == [
        "report 3", "report 1"]
    assert [(r.action, r.program) for r in events(database, "Old")] == [
        ("program deleted", "Old")]
    assert events(database, "Nobody's program") == ()
    assert events(database, limit=0) == ()


def test_a_record_in_the_change_transaction_is_rolled_back_with_it(database):
    def change_that_fails(session):
        record(database, "alice@example.com", AuditAction.PROGRAM_DELETED, "North NPS",
               session=session)
        assert len(events(database)) == 0  # not visible before the change commits
        raise WorkspaceError("the change failed")

    with pytest.raises(WorkspaceError, match="the change failed"):
        database.write(change_that_fails)
    assert events(database) == ()
    database.write(lambda s: record(database, "alice@example.com",
                                    AuditAction.PROGRAM_DELETED, "North NPS", session=s))
    assert [r.user for r in events(database)] == ["alice@example.com"]


def test_an_action_of_a_newer_cx_app_is_read_as_text(database):
    database.write(lambda s: s.add(AuditEvent(user="ops", action="program archived",
                                              program="P")))
    assert [(r.user, r.action) for r in events(database)] == [("ops", "program archived")]


def test_who_must_be_named_and_fit_the_table(database):
    with pytest.raises(WorkspaceError, match="needs the user who made the change"):
        record(database, "  ", AuditAction.PROGRAM_CREATED, "P")
    with pytest.raises(WorkspaceError, match="longer than 320 characters"):
        record(database, "a" * 321, AuditAction.PROGRAM_CREATED, "P")
    with pytest.raises(WorkspaceError, match="longer than 200 characters"):
        record(database, "ana", AuditAction.PROGRAM_CREATED, "P" * 201)
    assert events(database) == ()


def test_the_cli_records_the_operating_system_user(monkeypatch):
    monkeypatch.setenv("LOGNAME", "ana")  # getpass.getuser() reads LOGNAME first
    assert cli_user() == "ana" == getpass.getuser()

    def no_name():
        raise KeyError("getpwuid(): uid not found")

    monkeypatch.setattr(audit.getpass, "getuser", no_name)
    assert cli_user() == f"uid {os.getuid()}"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 command is not installed")
def test_the_documented_sqlite_backup_keeps_the_trail(tmp_path):
    """docs/deployment.md, Backups: ``sqlite3 FILE ".backup 'COPY'"`` while the workspace is
    open (WAL mode), and the copy opens with its audit rows."""
    live = open_database(f"sqlite:///{tmp_path / 'workspace.db'}")
    try:
        record(live, "alice@example.com", AuditAction.PROGRAM_CREATED, "North NPS")
        record(live, "dana@example.com", AuditAction.MODEL_TRAINED, "North NPS", "lr")
        copy = tmp_path / "backup" / "workspace-copy.db"
        copy.parent.mkdir()
        subprocess.run(["sqlite3", str(tmp_path / "workspace.db"), f".backup '{copy}'"],
                       check=True, timeout=60)
        record(live, "alice@example.com", AuditAction.PROGRAM_DELETED, "North NPS")
    finally:
        live.dispose()
    restored = open_database(f"sqlite:///{copy}")
    try:
        assert [(r.user, r.action) for r in events(restored)] == [
            ("dana@example.com", "model trained"), ("alice@example.com", "program created")]
    finally:
        restored.dispose()
