"""The workbook reader's child process (issue 26, point 2): a workbook that makes the parser
exhaust its limits, or a reader that crashes, ends the child only and becomes one sentence;
the importing process keeps its own limits and goes on reading files. Hostile files are
refused within 20 s and 1 GB (peak resident memory of the importing process and of its
reader children, measured in a fresh process)."""

from __future__ import annotations

import dataclasses
import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cx_app.errors import SurveyFileError
from cx_app.survey.importing import load_survey
from cx_app.survey.limits import ImportLimits, limits_from_env
from cx_app.survey.reader_process import run_child
from tests.data.bad.make_corpus import workbook_parts, zip_bytes

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
_SHEET = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
          '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
          "<sheetData>{rows}</sheetData></worksheet>")
# cells at A1 and XFD1048576 with the reference spelled as XML allows and Excel never writes
# (spaces around "="): the archive check lets it through, calamine asks for ~0.5 TB
_SPELLED_SPARSE = _SHEET.format(rows='<row r="1"><c r="A1"><v>1</v></c></row>'
                                     '<row r = "1048576"><c r = "XFD1048576"><v>1</v></c></row>')


def _limits(**changes) -> ImportLimits:
    return dataclasses.replace(limits_from_env(), **changes)


def test_a_reader_out_of_memory_is_stopped_and_said_in_one_sentence(tmp_path):
    path = tmp_path / "sparse_spelled.xlsx"
    path.write_bytes(zip_bytes(workbook_parts({"S": _SPELLED_SPARSE})))
    before = [resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU)]
    limits = _limits(reader_memory_bytes=512 * 1024 * 1024)
    with pytest.raises(SurveyFileError) as refused:
        load_survey(path, limits=limits)
    assert str(refused.value) == (
        "sparse_spelled.xlsx: the reader ran out of its memory limit (512 MB, "
        "CX_APP_READER_MEMORY_MB) and was stopped; the file was not read")
    # this process is unaffected: its own limits as before, and it reads the next file
    assert [resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU)] == before
    survey = load_survey(BAD / "clean.xlsx", schema=None, limits=limits)
    assert survey.quality.rows_read == 3


def test_a_reader_over_its_cpu_time_is_stopped_and_said_in_one_sentence():
    # the child sets its own limit, as the reader does, then spins
    spin = ("import resource; resource.setrlimit(resource.RLIMIT_CPU, (1, 2))\n"
            "while True: pass")
    with pytest.raises(SurveyFileError) as refused:
        run_child([sys.executable, "-c", spin], b"", "spin.xlsx", _limits(reader_cpu_seconds=1))
    assert str(refused.value) == (
        "spin.xlsx: the reader used up its CPU-time limit (1 s, CX_APP_READER_CPU_SECONDS) and "
        "was stopped; the file was not read")


def test_a_crashed_reader_is_named_by_its_signal():
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    with pytest.raises(SurveyFileError) as refused:
        run_child([sys.executable, "-c", crash], b"", "crash.xlsx", limits_from_env())
    assert str(refused.value) == ("crash.xlsx: the reader was killed by signal SIGSEGV; the "
                                  "file was not read")


def test_a_reader_that_never_ends_is_stopped_at_its_wall_clock_bound(monkeypatch):
    from cx_app import isolation

    monkeypatch.setattr(isolation, "WALL_MARGIN_SECONDS", 1)
    limits = _limits(reader_cpu_seconds=1)  # the bound: twice the CPU time, plus the margin
    sleep = "import time; time.sleep(60)"  # no CPU used: only the parent's bound stops it
    with pytest.raises(SurveyFileError, match=r"^nap\.xlsx: the reader did not finish within "
                                              r"3 s and was stopped; the file was not read$"):
        run_child([sys.executable, "-c", sleep], b"", "nap.xlsx", limits)


_MEASURE = textwrap.dedent("""
    import json, resource, sys, time
    from cx_app.errors import SurveyFileError
    from cx_app.survey.importing import load_survey
    t = time.perf_counter()
    try:
        load_survey(sys.argv[1])
        message = None
    except SurveyFileError as exc:
        message = str(exc)
    # this process's own peak from VmHWM: ru_maxrss survives execve, so it would count the
    # pages of the (large) pytest process this one was started from
    own = next(int(line.split()[1]) for line in open("/proc/self/status")
               if line.startswith("VmHWM:"))
    peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps({"seconds": time.perf_counter() - t, "peak_kb": peak,
                      "message": message}))
""")


@pytest.mark.parametrize("name", ["sparse_extent.xlsx", "sparse_spelled.xlsx", "bomb_ratio.xlsx",
                                  "bomb_declared.xlsx", "billion_laughs.xlsx", "encrypted.xlsx",
                                  "truncated.xlsx"])
def test_hostile_files_are_refused_in_one_sentence_within_20_s_and_1_gb(tmp_path, name):
    path = BAD / name
    if name == "sparse_spelled.xlsx":
        path = tmp_path / name
        path.write_bytes(zip_bytes(workbook_parts({"S": _SPELLED_SPARSE})))
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True,
                          text=True, check=True, cwd=ROOT, timeout=60)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    message = result["message"]
    assert message is not None and message.startswith(f"{name}: ")
    assert "\n" not in message and message.count(". ") == 0  # one sentence
    assert result["seconds"] < 20
    assert result["peak_kb"] < 1024 * 1024
