"""Schema migrations: the tables of ``tables.py`` are what the migrations build (SQLite and
PostgreSQL); a database written at the first revision, with a program in it, opens after the
upgrade to the newest revision with its data intact and usable; a database from a newer cx-app
is refused with one sentence."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, insert, inspect, select, text
from workspace_helpers import BACKENDS, copy_of, new_database

from cx_app.errors import WorkspaceError
from cx_app.workspace.database import current_revision, head_revision, migrate, open_database
from cx_app.workspace.programs import Workspace
from cx_app.workspace.tables import Base

TABLES_0001 = ("programs", "models", "crossval", "waves", "estimates")


@pytest.fixture(scope="module")
def written(tmp_path_factory, program_file, survey_files):
    """A SQLite workspace at the newest revision with a program and two waves (the rows the
    first-revision database is filled with)."""
    url = copy_of(program_file, tmp_path_factory.mktemp("head"))
    with Workspace.open(url) as ws:
        ws.add_waves("telecom", [survey_files["W03"], survey_files["W01"]])
        return url, ws.show("telecom")


@pytest.mark.parametrize("backend", BACKENDS)
def test_tables_are_what_the_migrations_build(backend, tmp_path, request):
    database = open_database(new_database(backend, tmp_path, request))
    try:
        assert current_revision(database) == head_revision() == "0004"
        with database.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        database.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_first_revision_database_opens_after_the_upgrade(backend, written, survey_files,
                                                           tmp_path, request):
    source_url, before = written
    url = new_database(backend, tmp_path, request)
    old = open_database(url, migrate_schema=False)
    migrate(old, "0001")
    assert current_revision(old) == "0001"
    assert "reports" not in inspect(old.engine).get_table_names()
    assert "sheet" not in {c["name"] for c in inspect(old.engine).get_columns("waves")}
    source = open_database(source_url, migrate_schema=False)
    source_tables, old_tables = MetaData(), MetaData()
    source_tables.reflect(source.engine)
    old_tables.reflect(old.engine)
    with source.engine.connect() as read, old.engine.begin() as write:
        for name in TABLES_0001:  # the rows, as the first revision has them
            columns = [c.name for c in old_tables.tables[name].columns]
            rows = read.execute(select(*(source_tables.tables[name].c[c] for c in columns)))
            write.execute(insert(old_tables.tables[name]), [dict(r._mapping) for r in rows])
        if backend == "postgresql":  # ids were given: move the sequences past them
            for name in TABLES_0001:
                write.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                   f"(SELECT max(id) FROM {name}))"))
    source.dispose()
    old.dispose()

    with Workspace.open(url) as ws:  # upgraded on opening
        assert current_revision(ws.database) == head_revision()
        after = ws.show("telecom")
        assert [w.to_dict() for w in after.waves] == [w.to_dict() for w in before.waves]
        assert [w.label for w in after.waves] == ["W01", "W03"]
        assert after.models[0].file_sha256 == before.models[0].file_sha256
        assert ws.results("telecom").models.keys() == {"lr"}
        # still a working program: the new column and table take new data
        added = ws.add_waves("telecom", [survey_files["W02"]])
        assert [a.status for a in added] == ["added"]
        assert [w.label for w in ws.show("telecom").waves] == ["W01", "W02", "W03"]


def test_a_database_of_a_newer_cx_app_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    database = open_database(url)
    with database.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    database.dispose()
    with pytest.raises(WorkspaceError, match=r"written by a newer cx-app \(schema revision "
                                             r"0099\); update cx-app to open it"):
        open_database(url)
