"""The workspace: CX programs kept in a database (waves, models and estimates).

SQLAlchemy 2; SQLite by default, any URL through ``CX_APP_DATABASE_URL``; migrations with
Alembic. See ``docs/workspace.md``.

Public API: :class:`~cx_app.workspace.programs.Workspace` (``open(url)``, ``create_program``,
``add_wave``/``add_waves``, ``remove_wave``, ``show``, ``list_programs``, ``program_model``,
``results``, ``delete_program``, ``move_program``, ``audit``; ``open(url, user=, teams=)`` and
``for_user(user, teams)`` act for one user, :mod:`~cx_app.workspace.access`), returning the typed views of :mod:`~cx_app.workspace.views` (``ProgramView``,
``WaveView`` with the wave's :class:`~cx_app.estimate.document.WaveEstimateDocument`); the
reading, training and estimating it stores in :mod:`~cx_app.workspace.services`; the
database itself in :mod:`~cx_app.workspace.database` (``open_database``, ``database_url``,
``migrate``), its tables in :mod:`~cx_app.workspace.tables`, wave labels and order in
:mod:`~cx_app.workspace.labels`, the program's reports in :mod:`~cx_app.workspace.reporting`
and ``.cxproj`` export/import in :mod:`~cx_app.workspace.transfer`. The layer sits above
estimate, reports and project and below app and cli; nothing beneath it imports it.
"""
