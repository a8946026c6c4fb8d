"""The workspace: CX programs kept in a database (waves, models and estimates).

SQLAlchemy 2; SQLite by default, any URL through ``CX_APP_DATABASE_URL``; migrations with
Alembic. See ``docs/workspace.md``. The API is :class:`~cx_app.workspace.programs.Workspace`,
returning the typed views of :mod:`~cx_app.workspace.views`; it stores, and leaves reading,
training and estimating to :mod:`~cx_app.workspace.services`. The layer sits above estimate,
reports and project and below app and cli.
"""
