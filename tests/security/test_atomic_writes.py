"""Issue 24, case 8: a killed run leaves the old file or no file, never a truncated one.

The real ``cx-app report --project FILE --out DIR`` rewrites results.json, report.xlsx and
report.html over complete earlier ones and is SIGKILLed at several moments of the rewrite: as
soon as the write of one of the files starts (its temporary file appears, or — as the
non-atomic writer did — the target itself changes), and a little after. Every file is then the
earlier one byte for byte or the complete new one. A child python writing a large payload with
:func:`cx_app.atomic_files.write_bytes_atomic` is killed in the middle of the write the same
way, and :func:`~cx_app.atomic_files.atomic_path` is checked on an exception.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import openpyxl
import pytest
from report_fixtures import make_results

from cx_app.atomic_files import atomic_path, write_bytes_atomic, write_text_atomic
from cx_app.project import Project, SurveyIdentity, write_project
from cx_app.reports import write_reports
from cx_app.survey.schema import load_schema

pytestmark = pytest.mark.slow  # killed writer processes (~22 s)

ROOT = Path(__file__).resolve().parents[2]
CX_APP = Path(sys.executable).with_name("cx-app")
RUN_LIMIT = 240.0  # seconds a child may take before the test gives up on it
REPORTS = ("results.json", "report.xlsx", "report.html")


def _state(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _temporaries(folder: Path, name: str | None = None) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")
            and (name is None or p.name.startswith(f".{name}."))]


def _kill_when_writing(command: list[str], folder: Path, name: str, delay: float) -> bool:
    """Start ``command``; SIGKILL it ``delay`` seconds after it starts writing ``folder/name``
    (a temporary file for it appears, or the file itself changes). Returns whether it was
    killed (False: it ended first)."""
    target = folder / name
    before = _state(target)
    child = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    started = time.monotonic()
    try:
        while child.poll() is None:
            if _temporaries(folder, name) or _state(target) != before:
                if delay:
                    time.sleep(delay)
                child.send_signal(signal.SIGKILL)
                child.wait()
                return True
            if time.monotonic() - started > RUN_LIMIT:
                pytest.fail(f"{command[:3]} ran for over {RUN_LIMIT:.0f} s")
            time.sleep(0.0005)
        return False
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _complete(path: Path, old: bytes, new_results: str) -> bool:
    """Whether ``path`` is the earlier file byte for byte, or a complete new one."""
    data = path.read_bytes()
    if data == old:
        return True
    if path.name == "results.json":
        return data.decode("utf-8") == new_results
    if path.suffix == ".xlsx":
        book = openpyxl.load_workbook(path, read_only=True)
        return "Metrics" in book.sheetnames
    return data.rstrip().endswith(b"</html>")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, str]:
    """A project holding a results document (no models: the report needs none)."""
    folder = tmp_path_factory.mktemp("project")
    schema = load_schema(ROOT / "survey_schemas" / "csat_5.yaml")
    results = json.dumps(make_results(), indent=1)
    path = write_project(Project(schema_yaml=schema.to_yaml(),
                                 plan=schema.plan_spec.model_dump(mode="json"),
                                 survey=SurveyIdentity("0" * 64, "survey.csv"),
                                 results=results), folder / "survey.cxproj")
    return path, results


@pytest.fixture(scope="module")
def earlier(tmp_path_factory) -> dict[str, bytes]:
    """The complete files of an earlier run (of another survey: they differ from the new)."""
    out = tmp_path_factory.mktemp("earlier")
    document = make_results()
    document["dataset"]["filename"] = "an earlier survey.csv"
    write_reports(document, out)
    write_text_atomic(out / "results.json", json.dumps(document))
    return {n: (out / n).read_bytes() for n in REPORTS}


@pytest.mark.parametrize("name, delay", [("results.json", 0.0), ("report.xlsx", 0.0),
                                         ("report.html", 0.0)])
def test_a_killed_report_run_leaves_the_old_files_whole(project, earlier, tmp_path, name,
                                                        delay):
    path, new_results = project
    out = tmp_path / "out"
    out.mkdir()
    for n, data in earlier.items():
        (out / n).write_bytes(data)
    old = earlier

    killed = _kill_when_writing([str(CX_APP), "report", "--project", str(path), "--out",
                                 str(out)], out, name, delay)

    for n in REPORTS:
        assert _complete(out / n, old[n], new_results), f"{n} is truncated"
    if killed and name == "report.xlsx" and delay == 0.0:
        # the workbook takes long enough to write that the kill lands inside the write: the
        # earlier workbook is still there and the partial one was a temporary file beside it
        assert (out / name).read_bytes() == old[name]
        assert _temporaries(out, name)


def test_a_write_killed_midway_leaves_the_old_file(tmp_path):
    target = tmp_path / "big.bin"
    write_bytes_atomic(target, b"old and complete\n")
    child = textwrap.dedent(f"""
        from cx_app.atomic_files import write_bytes_atomic
        write_bytes_atomic({str(target)!r}, bytes(range(256)) * (1 << 20))  # 256 MiB
    """)
    killed = _kill_when_writing([sys.executable, "-c", child], tmp_path, target.name, 0.02)
    assert killed
    assert target.read_bytes() == b"old and complete\n"
    assert _temporaries(tmp_path, target.name)  # what the killed run had written so far

    write_text_atomic(target, "new\n")  # the next write does not need the leftover
    assert target.read_text() == "new\n"


def test_atomic_path_keeps_the_old_file_on_an_exception(tmp_path):
    target = tmp_path / "report.xlsx"
    target.write_bytes(b"earlier report")
    os.chmod(target, 0o600)
    with pytest.raises(RuntimeError, match="chart failed"), atomic_path(target) as tmp:
        tmp.write_bytes(b"half a rep")
        raise RuntimeError("chart failed")
    assert target.read_bytes() == b"earlier report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xlsx"]  # no temporary left

    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".report.xlsx.")
        assert not target.read_bytes().startswith(b"new")  # nothing replaced before the end
        tmp.write_bytes(b"new report")
    assert target.read_bytes() == b"new report"
    assert target.stat().st_mode & 0o777 == 0o600  # the target keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xlsx"]


def test_a_missing_folder_is_an_error_and_writes_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_text_atomic(tmp_path / "missing" / "results.json", "{}")
    assert list(tmp_path.iterdir()) == []
