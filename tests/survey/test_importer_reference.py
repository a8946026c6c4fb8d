"""Same answers as the importer that issue 26 replaces: every reference case of
``importer_cases.py`` (the hostile corpus with its schema and inferred, the bundled samples,
the messy bank exports) gives the respondents, exclusions (reasons, sheet rows, columns),
notes and schema saved in ``importer_reference/`` before the switch."""

from __future__ import annotations

import gzip
import json

import pytest
from importer_cases import cases, saved_path

CASES = cases()


def _first_difference(saved, now, where: str = "") -> str | None:
    if isinstance(saved, dict) and isinstance(now, dict):
        for key in sorted(set(saved) | set(now)):
            if key not in saved or key not in now:
                return f"{where}.{key}: only in {'now' if key in now else 'saved'}"
            found = _first_difference(saved[key], now[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(saved, list) and isinstance(now, list):
        if len(saved) != len(now):
            return f"{where}: {len(saved)} items saved, {len(now)} now"
        for i, (a, b) in enumerate(zip(saved, now, strict=True)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if saved == now else f"{where}: saved {saved!r}, now {now!r}"


def _refusal(outcome: dict) -> tuple[str, str]:
    """A refusal's error type and the file name its sentence starts with: the wording of a
    refusal may change with the reader (``tests/survey/test_hostile_files.py`` asserts its
    essentials), a refusal may not become an acceptance or another error type."""
    return outcome["error"], outcome["message"].split(":")[0]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_importer_gives_the_saved_answers(case, tmp_path):
    saved = json.loads(gzip.decompress(saved_path(case).read_bytes()))
    now = json.loads(json.dumps(case.load(tmp_path), sort_keys=True, ensure_ascii=False))
    if "error" in saved or "error" in now:
        assert ("error" in saved, "error" in now) == (True, True), (saved, now)
        assert _refusal(saved) == _refusal(now), (saved["message"], now["message"])
        return
    assert _first_difference(saved, now) is None, _first_difference(saved, now)
