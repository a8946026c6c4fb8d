"""Issue 37 point 3: every table of every page declares its own headers. After a model is
trained on the bundled sample, fitted on every respondent and two unlabelled waves estimated,
each page's tables are read as shown (a column's configured label, else its name) and checked
by ``tests/table_headers.py``: no duplicate header, no raw identifier (snake_case, ``None``,
``series``, ``se``), no header over another kind of value ("Gap score" over the 0–10 scores,
"Drift" over the reduction levels), no missing value shown as "None"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from table_headers import header_problems

from cx_app.survey.samples import simulate_telecom_waves

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
PAGES = ("data", "nps", "models", "confusion", "compare", "drivers", "new_wave", "project")


def page_tables(at: AppTest) -> list[tuple[str, list]]:
    """Each dataframe of the page as (name, [(column, header shown, values)])."""
    tables = []
    for i, frame in enumerate([*at.dataframe, *at.get("arrow_data_frame")]):
        config = json.loads(frame.proto.columns or "{}")
        value = frame.value
        columns = []
        for column in value.columns:
            entry = config.get(str(column), {})
            if not entry.get("hidden"):
                columns.append((str(column), entry.get("label") or str(column),
                                value[column].tolist()))
        tables.append((f"table {i + 1}", columns))
    return tables


@pytest.fixture(scope="module")
def walked():
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/models.py").run()
    at.multiselect(key="algorithms").set_value(["lr", "nb"])
    at.number_input(key="folds").set_value(3)
    at.button(key="train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/new_wave.py").run()
    if any(b.key == "nw_fit" for b in at.button):
        at.button(key="nw_fit").click().run()
    for k in (8, 9):
        frame = simulate_telecom_waves([k], respondents_per_operator=60, seed=3,
                                       include_target=False)
        at.file_uploader(key="nw_wave_files").upload(f"wave{k}.csv",
                                                      frame.to_csv(index=False).encode(),
                                                      "text/csv")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    tables = {}
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        tables[page] = page_tables(at)
    return tables


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_table_declares_true_headers(walked, page):
    tables = walked[page]
    assert tables, page  # the walk read tables on the page
    problems = [p for title, columns in tables for p in header_problems(f"{page} {title}",
                                                                        columns)]
    assert problems == []


def test_the_checker_catches_what_issue_37_found():
    scores = list(range(11))
    assert header_problems("t", [("score", "Gap score (1 or less: no warning)", scores)])
    assert header_problems("t", [("level", "Drift", ["original", "3x3+IM"])])
    assert header_problems("t", [("model", "Model", ["a"]), ("algorithm", "Model", ["b"])])
    assert header_problems("t", [("series", "series", ["All"]), ("se", "se", [1.2])])
    assert header_problems("t", [("ci_low", "ci low", [1.0])])
    assert header_problems("t", [("note", "Note", ["None"])])
    assert header_problems("t", [("level", "Drift", ["stable", "major"]),
                                 ("score", "Score", scores),
                                 ("n", "Respondents", [3, 4])]) == []
