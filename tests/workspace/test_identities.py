"""Issue 33: a person is (issuer, subject), bound to one address at its first sign-in; the audit
trail records subject and address; a foreign or damaged database file is never written; one
name check for every way a program gets a name."""

from __future__ import annotations

import contextlib
import hashlib
import io
import sqlite3

import pytest

from cx_app.cli import main
from cx_app.errors import AccessDenied, WorkspaceError
from cx_app.workspace.audit import AuditAction, events
from cx_app.workspace.database import open_database
from cx_app.workspace.identities import SignIn, bind_identity, forget_identity
from cx_app.workspace.names import program_name
from cx_app.workspace.programs import Workspace

ISSUER = "https://idp.example.com"
ALICE = SignIn(issuer=ISSUER, subject="alice-1", email="Alice@Example.com")


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def database(tmp_path):
    found = open_database(f"sqlite:///{tmp_path / 'ws.db'}")
    yield found
    found.dispose()


def test_the_first_sign_in_binds_the_subject_to_its_address(database):
    assert bind_identity(database, ALICE).email == "alice@example.com"
    assert bind_identity(database, ALICE) == bind_identity(database, ALICE)  # again: accepted
    second = SignIn(issuer=ISSUER, subject="mallory-2", email="alice@example.com ")
    with pytest.raises(AccessDenied, match="already belongs to another sign-in account"):
        bind_identity(database, second)
    other_provider = SignIn(issuer="https://social.example.org", subject="alice-1",
                            email="alice@example.com")
    with pytest.raises(AccessDenied, match="already belongs to another sign-in account"):
        bind_identity(database, other_provider)
    moved = SignIn(issuer=ISSUER, subject="alice-1", email="alice@elsewhere.org")
    with pytest.raises(AccessDenied, match="first signed in as alice@example.com"):
        bind_identity(database, moved)
    assert bind_identity(database, ALICE).subject == "alice-1"  # alice still signs in
    assert forget_identity(database, "ALICE@example.com") == 1
    assert bind_identity(database, second).subject == "mallory-2"  # released: bound anew
    with pytest.raises(AccessDenied, match="already belongs"):
        bind_identity(database, ALICE)


def test_a_sign_in_without_subject_or_address_is_refused(database):
    with pytest.raises(AccessDenied, match="cannot tell who you are"):
        bind_identity(database, SignIn(issuer=ISSUER, subject="", email="a@example.com"))


def test_the_audit_trail_records_subject_and_address(database, tmp_path):
    signed = SignIn(issuer=ISSUER, subject="alice-1", email="alice@example.com")
    workspace = Workspace(database, user="alice@example.com", sign_in=signed)
    workspace.record_change(None, AuditAction.REPORT_EXPORTED, "North NPS", "report.xlsx")
    Workspace(database, user="ops").record_change(None, AuditAction.REPORT_EXPORTED,
                                                  "North NPS", "by the operator")
    rows = events(database, "North NPS")
    assert [(r.user, r.issuer, r.subject) for r in rows] == [
        ("ops", None, None), ("alice@example.com", ISSUER, "alice-1")]
    code, out, _ = cli("program", "forget-sign-in", "nobody@example.com", "--db", database.url)
    assert (code, out) == (0, "no sign-in account is bound to nobody@example.com\n")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_foreign_sqlite_file_is_refused_and_left_unchanged(tmp_path):
    foreign = tmp_path / "crm.sqlite"
    with contextlib.closing(sqlite3.connect(foreign)) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO customers (name) VALUES ('Ada')")
        connection.commit()
    before = _sha(foreign)
    code, out, err = cli("program", "list", "--db", f"sqlite:///{foreign}")
    assert (code, out) == (2, "")
    assert "another application's SQLite database (its tables: customers)" in err
    assert _sha(foreign) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crm.sqlite"]  # no -wal, no -shm


def test_a_damaged_file_is_refused_and_left_unchanged(tmp_path):
    damaged = tmp_path / "workspace.db"
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20)
    before = _sha(damaged)
    with pytest.raises(WorkspaceError, match="is not a cx-app workspace"):
        open_database(f"sqlite:///{damaged}")
    assert _sha(damaged) == before


def test_an_empty_file_becomes_a_workspace(tmp_path):
    empty = tmp_path / "new.db"
    empty.touch()
    code, out, _ = cli("program", "list", "--db", f"sqlite:///{empty}")
    assert code == 0 and out.startswith("no program in ")


@pytest.mark.parametrize(("given", "kept"), [
    ("  bank-nps  ", "bank-nps"), ("bank\nnps", "bank nps"), ("bank\u202enps", "banknps"),
    ("a\u2066b\u2069", "ab")])
def test_one_name_check_cleans_every_name(given, kept):
    assert program_name(given) == kept


@pytest.mark.parametrize("given", ["", "   ", "\n\t", "\u202e", "x" * 201])
def test_one_name_check_refuses_blank_and_long_names(given):
    with pytest.raises(WorkspaceError, match="a program needs a name of 1 to 200 characters"):
        program_name(given)
