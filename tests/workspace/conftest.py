"""Workspace test setup: small simulated surveys, and the databases the program tests run on —
a SQLite file, and a real PostgreSQL server started for the session from Debian's binaries
(``initdb`` + ``pg_ctl`` in a temporary folder, on a free port of 127.0.0.1).

``initdb`` refuses to run as root: as root the server is run as the ``postgres`` user (Debian's
package creates it), else as ``nobody``, through ``runuser``. ``.ci/run`` installs the
``postgresql`` package when it is missing, so CI always runs the PostgreSQL tests; elsewhere
they are skipped with the reason when the binaries or the driver are absent.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from cx_app.survey.samples import simulate_telecom_waves


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                   else 0)
    return found[-1].parent if found else None


def _server_user() -> pwd.struct_passwd | None:
    """The user to run the server as (None: this one, when it is not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.skip("running as root and neither a 'postgres' nor a 'nobody' user exists to run "
                "PostgreSQL as (initdb refuses root)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    """The base URL (``postgresql+psycopg://postgres@127.0.0.1:PORT/``) of a PostgreSQL server
    of this test session, stopped and deleted at its end."""
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("Debian's PostgreSQL server is not installed (no "
                    "/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql")
    pytest.importorskip("psycopg", reason="the psycopg driver is not installed: "
                                          "pip install -e '.[test]'")
    user = _server_user()
    base = Path(tempfile.mkdtemp(prefix="cx-app-pg-"))
    prefix: list[str] = []
    if user is not None:
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", user.pw_name, "--"]
    data, port = base / "data", _free_port()

    def run(*command: str) -> None:
        done = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr or done.stdout}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
        "--no-sync", "-E", "UTF8", "--locale=C")
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-w",
        "-t", "60", "-o", f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -F", "start")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def survey_files(tmp_path_factory) -> dict[str, Path]:
    """A labelled reference survey (two months, 600 respondents) and small waves: ``W10``,
    ``W01``, ``W02`` (unlabelled, named by their file) and ``W03`` (labelled: realized
    values), each 180 respondents of three operators."""
    folder = tmp_path_factory.mktemp("surveys")
    files = {"reference": folder / "telecom_reference.csv"}
    simulate_telecom_waves([1, 2], respondents_per_operator=100, seed=3).to_csv(
        files["reference"], index=False)
    for label, wave, labelled in (("W10", 12, False), ("W01", 3, False), ("W02", 4, False),
                                  ("W03", 5, True)):
        files[label] = folder / f"telecom_{label}.csv"
        simulate_telecom_waves([wave], respondents_per_operator=60, seed=11,
                               include_target=labelled).to_csv(files[label], index=False)
    return files



@pytest.fixture(scope="session")
def program_file(tmp_path_factory, survey_files) -> Path:
    """A SQLite workspace file with the program "telecom" (the reference survey, an lr model
    of 3 folds) and no wave: tests copy it instead of training again."""
    from workspace_helpers import telecom_mapping

    from cx_app.workspace.programs import Workspace

    path = tmp_path_factory.mktemp("program") / "telecom.db"
    with Workspace.open(f"sqlite:///{path}") as ws:
        ws.create_program("telecom", survey_files["reference"], schema=telecom_mapping(),
                          algorithm="lr", folds=3, calibration="none")
    return path

