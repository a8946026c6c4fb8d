"""Every survey uploader of the app takes what the reader reads: an SPSS reference survey's
next wave (a .sav) is added on the New wave page as `cx-app program add-wave` adds it."""

import ast
from pathlib import Path

from cx_app.survey.reading import CSV_SUFFIXES, EXCEL_SUFFIXES, STAT_SUFFIXES

PAGES = Path(__file__).resolve().parents[2] / "app_pages"


def _uploader_types() -> dict[str, str]:
    """file_uploader label (or its key) → the source of its ``type=`` argument, every page."""
    found = {}
    for page in PAGES.glob("*.py"):
        for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "file_uploader":
                kinds = {k.arg: ast.unparse(k.value) for k in node.keywords}
                found[f"{page.name}:{kinds.get('key', node.lineno)}"] = kinds.get("type", "")
    return found


def test_every_survey_uploader_takes_every_file_the_reader_reads():
    import app_pages.common as common

    readable = {s.lstrip(".") for s in (*EXCEL_SUFFIXES, *CSV_SUFFIXES, *STAT_SUFFIXES)}
    assert set(common.SURVEY_TYPES) == readable and {"sav", "dta"} <= readable
    types = _uploader_types()
    survey = {where: t for where, t in types.items() if "xlsx" in t or "SURVEY_TYPES" in t}
    assert len(survey) >= 4  # the Data page, a new wave, an audit sample, an ad-hoc wave
    assert all(t == "common.SURVEY_TYPES" for t in survey.values()), survey
