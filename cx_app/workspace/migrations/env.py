"""Alembic's entry point for the workspace migrations, run programmatically.

:func:`cx_app.workspace.database.migrate` passes the connection (already in a transaction that
holds the migration lock) in ``config.attributes["connection"]``; there is no ``alembic.ini``
and no offline (SQL script) mode. SQLite alters tables in batch mode (copy and swap), the only
way it can change a column or constraint.

A new revision: ``alembic -c <an ini whose script_location is this folder> revision -m
"what"`` writes ``versions/NNNN_what.py`` from ``script.py.mako``; keep ``tables.py`` and the
revisions in step (``tests/workspace/test_migrations.py`` compares them).
"""

from __future__ import annotations

from alembic import context

from cx_app.workspace.tables import Base


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None or context.is_offline_mode():
        raise RuntimeError("the workspace migrations run through "
                           "cx_app.workspace.database.migrate")
    context.configure(connection=connection, target_metadata=Base.metadata,
                      render_as_batch=connection.dialect.name == "sqlite", compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # run by Alembic; imported for the doctests, it does nothing
    run_migrations()
