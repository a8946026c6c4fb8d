"""Helpers of the workspace tests (imported by their plain module name, like
``report_fixtures``): the backends, new empty databases on them, and the programs' mapping."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

BACKENDS = ("sqlite", "postgresql")
_databases = itertools.count()


def new_postgres_database(server_url: str) -> str:
    """A new, empty database on the session's server; its URL."""
    import psycopg

    name = f"cx_app_test_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server_url.replace("postgresql+psycopg", "postgresql") + "postgres",
                         autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return server_url + name


def new_database(backend: str, tmp_dir: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty workspace database of ``backend``."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_dir / f'workspace-{next(_databases)}.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


ATTRIBUTES = ("Tariff plan", "Network - voice", "Network - data", "Shops", "Call center",
              "Website", "Mobile app", "Billing", "Roaming")


def telecom_mapping():
    """The programs' mapping: the telecom survey's target, attributes, operator and region
    (the wave and date columns left out: waves are then labelled by their file names)."""
    from cx_app.survey.schema import schema_from_mapping

    return schema_from_mapping(
        target="Likelihood to recommend (0-10)", scale="0-10", attributes=list(ATTRIBUTES),
        attribute_scale="1-10", segments=["Operator", "Region"], respondent_id="Respondent ID",
        missing_codes=[99, "Don't know"])


def copy_of(program_file: Path, folder: Path) -> str:
    """The URL of a copy of the workspace file ``program_file`` in ``folder``."""
    target = folder / program_file.name
    shutil.copyfile(program_file, target)
    return f"sqlite:///{target}"
