"""The workspace: CX programs kept in a database (waves, models and estimates).

SQLAlchemy 2 and Alembic (``docs/workspace.md``). :class:`~cx_app.workspace.programs.Workspace`
stores and returns the typed views of :mod:`~cx_app.workspace.views`;
:mod:`~cx_app.workspace.services` reads, trains and estimates.
"""
