"""Issue 27 point 7: a CX analyst's language. Every page of the app (on the bundled sample, with
two trained models) and the Excel and HTML reports show no internal code and no snake_case name:
titles, texts, captions, metric labels and their hover help, widget labels, table headers and
the charts' axis and legend titles are all read.

The checker and its small allow-list (the uploaded file's own name) are in
``tests/plain_words.py``, shared with the CLI's test.
"""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from openpyxl import load_workbook
from plain_words import (
    ALLOWED,
    BARE_ALP,
    MODEL_CODES,
    REPOSITORY_PATH,
    code_first,
    internal_words,
    model_codes,
)
from streamlit.testing.v1 import AppTest

from cx_app.engine.catalogue import MULTICLASS_METRICS
from cx_app.safe_text import escape_markdown
from cx_app.survey.samples import simulate_telecom_waves

pytestmark = pytest.mark.slow  # every page of a trained app (~37 s)

LAST_WAVE = "last_wave_estimate"  # the session key the New wave page sets (app_pages/report.py)

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
TIMEOUT = 120
MODEL_NAMED_PAGES = ("compare", "confusion", "drivers", "nps", "report")
"""The pages that name models in words (the others: issue 27's remaining call sites)."""
PAGES = ("data", "nps", "models", "confusion", "compare", "drivers", "new_wave", "report",
         "project", "glossary")


def chart_titles(spec: object) -> list[str]:
    """The titles a Vega-Lite spec shows (axes, legends, headers, the chart's own)."""
    if isinstance(spec, dict):
        found = []
        for key, value in spec.items():
            if key == "title" and isinstance(value, dict):  # {"text": ..., "subtitle": ...}
                value = [value.get("text", ""), value.get("subtitle", "")]
            if key == "title" and isinstance(value, str | list):
                found += [value] if isinstance(value, str) else [str(v) for v in value]
            elif key not in ("data", "datasets", "$schema"):
                found += chart_titles(value)
        return found
    if isinstance(spec, list):
        return [t for v in spec for t in chart_titles(v)]
    return []


def table_headers(frame) -> list[str]:
    """A table's column headers as shown: a column's configured label and help where it has
    them (hidden columns are not shown), else its name; the index's names."""
    config = json.loads(frame.proto.columns or "{}")
    value = frame.value
    headers = [str(i) for i in value.index.names if i]
    for column in value.columns:
        entry = config.get(str(column), {})
        if not entry.get("hidden"):
            headers.append(f"{entry.get('label') or column} {entry.get('help') or ''}")
    return headers


def shown(at: AppTest) -> list[str]:
    """Every string a page shows a person, hover help included."""
    texts: list[str] = []
    for kind in ("title", "header", "subheader", "caption", "text", "markdown", "info",
                 "warning", "success"):
        texts += [str(e.value) for e in getattr(at, kind)]
    texts += [f"{m.label} {m.proto.help}" for m in at.metric]
    texts += [link.label for link in at.get("page_link")]
    for kind in ("selectbox", "multiselect", "radio", "checkbox", "toggle", "number_input",
                 "slider", "select_slider", "text_input", "button"):
        texts += [f"{w.label} {w.help or ''}" for w in getattr(at, kind)]
    for frame in [*at.dataframe, *at.get("arrow_data_frame")]:
        texts += table_headers(frame)
    for chart in at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart"):
        texts += chart_titles(json.loads(chart.proto.spec))
    return texts


class _Visible(HTMLParser):
    """The text of an HTML page a reader sees (not scripts, styles or attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._hidden and data.strip():
            self.texts.append(data)


@pytest.fixture(scope="module")
def walked():
    """Each page's shown strings, after lr and nb are trained (4 folds) on the sample, fitted on
    every respondent and two unlabelled waves estimated, and the report files (with the last
    wave's estimate) the Report page builds."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/models.py").run()
    at.number_input(key="folds").set_value(4)  # a recipe of its own: the process-wide store
    # would otherwise hand test_app_pages its lr and nb (3 folds) already trained
    at.button(key="train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/new_wave.py").run()  # a final fit and two unlabelled waves
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
    texts = {}
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        texts[page] = shown(at)
    analysis = at.session_state["analysis"]
    wave = at.session_state[LAST_WAVE]
    assert wave is not None  # the reports carry the new-wave section and its drift table
    files = analysis.report_files(list(analysis.models), wave, build=True)
    return texts, files


@pytest.mark.parametrize("page", PAGES)
def test_a_page_shows_no_internal_word(walked, page):
    texts, _ = walked
    assert texts[page], page  # the walk read the page
    assert internal_words(texts[page]) == []


def test_the_excel_report_shows_no_internal_word(walked):
    _, files = walked
    book = load_workbook(io.BytesIO(files["xlsx"]), read_only=True)
    texts = list(book.sheetnames)
    for sheet in book.worksheets:
        for row in sheet.iter_rows(values_only=True):
            texts += [v for v in row if isinstance(v, str)]
    assert len(texts) > 50
    assert internal_words(texts) == []


def test_the_html_report_shows_no_internal_word(walked):
    _, files = walked
    parser = _Visible()
    parser.feed(files["html"].decode("utf-8"))
    assert len(parser.texts) > 50
    island = re.search(r'<script type="application/json" id="chart-specs">(.*?)</script>',
                       files["html"].decode("utf-8"), re.DOTALL)
    texts = parser.texts + chart_titles(json.loads(island.group(1)))
    assert internal_words(texts) == []


@pytest.mark.parametrize("page", MODEL_NAMED_PAGES)
def test_a_page_names_models_in_words(walked, page):
    texts, _ = walked
    assert model_codes(texts[page]) == []
    if page in ("compare", "confusion", "report"):  # they name the trained models
        assert any("Logistic regression" in t for t in texts[page]), page


def test_the_reports_name_models_in_words(walked):
    _, files = walked
    book = load_workbook(io.BytesIO(files["xlsx"]), read_only=True)
    cells = [v for sheet in book.worksheets for row in sheet.iter_rows(values_only=True)
             for v in row if isinstance(v, str)]
    parser = _Visible()
    parser.feed(files["html"].decode("utf-8"))
    for texts in (cells, parser.texts):
        assert model_codes(texts) == [], [t for t in texts if MODEL_CODES.search(t)][:10]
        assert any("Naive Bayes" in t for t in texts)
    assert model_codes(["lr — level original", "Model: svm papers", "Logistic regression"]) == [
        "lr", "svm"]


def test_the_glossary_lists_every_term_and_tables_explain_their_metrics_on_hover(walked):
    """The Glossary page's entries are the library's (every glossary word and every metric of
    the catalogue); a metric column's hover help is the catalogue's one line on it."""
    from cx_app.reports.definitions import ALP, GLOSSARY, glossary_entries

    texts, _ = walked
    glossary = " ".join(texts["glossary"])
    entries = glossary_entries()
    assert len(entries) > len(GLOSSARY) + 40  # the method's words and the catalogue's metrics
    for term, meaning in entries:
        assert f"**{escape_markdown(term)}** — {escape_markdown(meaning)}" in glossary, term
    for key in ("accuracy", "f1_macro", "recall_macro"):
        metric = MULTICLASS_METRICS[key]
        assert f"{metric.name} {metric.words}" in texts["confusion"], key
    assert f"Estimated accuracy {GLOSSARY[ALP]}" in texts["new_wave"]  # a metric's hover


@pytest.mark.parametrize("page", PAGES)
def test_a_page_opens_every_text_with_plain_words(walked, page):
    """Issue 37, point 9: no title, text, warning, label or header starts with a code; the
    codes come after their plain words."""
    texts, _ = walked
    assert code_first(texts[page]) == []


def test_model_warnings_say_alp_after_its_plain_words(walked):
    texts, _ = walked
    said = [t for page in PAGES for t in texts[page] if "ALP" in t]
    assert said  # the walk shows ALP figures (models, new wave, glossary)
    assert [t for t in said if BARE_ALP.search(t) and "probabilities" not in t] == []


def test_the_glossary_links_to_pages_of_the_app_not_to_files(walked):
    texts, _ = walked
    links = [t for t in texts["glossary"] if t.startswith("Shown on the ")]
    assert {"Shown on the New wave page", "Shown on the Confusion matrices page",
            "Shown on the Data page", "Shown on the Net score page"} <= set(links)
    assert [t for t in texts["glossary"] if REPOSITORY_PATH.search(t)] == []


def test_the_code_checks_catch_codes_first():
    assert code_first(["PSI 0.31 on Fees", "IMP (positive intragroup mismatch)",
                       "Shift in the answers (PSI)", "3x3+IM level", "Intragroup mismatch (IM)"]
                      ) == ["PSI 0.31 on Fees", "IMP (positive intragroup mismatch)"]
    assert BARE_ALP.search("accuracy 0.6 vs ALP 0.7")
    assert not BARE_ALP.search("estimated from the model's probabilities (ALP)")
    assert REPOSITORY_PATH.search("see docs/bases-and-gaps.md")
    assert not REPOSITORY_PATH.search("the Data page shows both")


def test_the_allow_list_and_the_codes_are_caught():
    assert internal_words(["Missing answers: impute_indicator", "PSI 0.3", "psi"]) == [
        "impute_indicator", "psi"]
    assert internal_words([f"Report of {next(iter(ALLOWED))}.xlsx"]) == []
