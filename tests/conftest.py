"""Shared test setup: the suite mirrors the package layout (``tests/engine`` tests
``cx_app/engine`` ...). This file's folder is on ``sys.path`` (pytest's rootdir-relative
``prepend`` import mode), so helpers shared across folders, e.g. ``report_fixtures``, import
by their plain module name from any test folder."""
