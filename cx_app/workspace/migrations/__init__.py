"""The workspace's schema migrations (Alembic), run programmatically.

``env.py`` and one script per revision in ``versions/``, run by
:func:`cx_app.workspace.database.migrate` (no ``alembic.ini``)."""
