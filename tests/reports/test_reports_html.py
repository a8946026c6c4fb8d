"""The HTML report: self-contained, escaped, the same numbers as the results."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from report_fixtures import (
    HOSTILE_ATTRIBUTE,
    HOSTILE_CLASSES,
    HOSTILE_MODEL,
    MODELS,
    make_new_wave,
    make_results,
)

from cx_app.reports.blocks import Table
from cx_app.reports.content import build_report
from cx_app.reports.html import format_value, render_html


class _Collector(HTMLParser):
    """Tags with attributes, text of every element, and the text of scripts, separately."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self.cells: list[str] = []
        self._script: dict | None = None
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "script":
            self._script = attrs
            self.scripts.append((attrs, ""))
        if tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
            return
        self.text.append(data)
        if self._in_cell:
            self.cells[-1] += data


@pytest.fixture(scope="module")
def document() -> str:
    return render_html(build_report(make_results(), make_new_wave()))


@pytest.fixture(scope="module")
def parsed(document) -> _Collector:
    collector = _Collector()
    collector.feed(document)
    return collector


def test_no_network_resource_is_referenced(parsed, document):
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "data", "action", "poster", "srcset"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//")), (tag, name, value)
        if tag == "script":
            assert "src" not in attrs
        if tag == "link":
            assert attrs.get("rel") != "stylesheet"
    assert "@import" not in document


def test_vega_libraries_are_inlined_and_specs_parse(parsed):
    code = "".join(text for attrs, text in parsed.scripts if "type" not in attrs)
    assert "window.vegaEmbed=" in code and "window.vegaLite=" in code
    (specs_text,) = [text for attrs, text in parsed.scripts
                     if attrs.get("type") == "application/json"]
    specs = json.loads(specs_text)
    assert len(specs) == 8  # 3 model charts, 5 driver charts
    assert all(spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
               for spec in specs)
    # the model names travel as chart data, verbatim
    assert HOSTILE_MODEL in set(_strings(specs))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_hostile_labels_are_escaped_text(document, parsed):
    assert "<script>alert(1)</script>" not in document
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "<img src=x" not in document and "<b>drift</b>" not in document
    assert not any(tag in ("img", "b", "iframe") for tag, _ in parsed.tags)
    executable = [attrs for tag, attrs in parsed.tags if tag == "script"]
    assert len(executable) == 3  # the spec island, the bundle, the renderer
    for text in (HOSTILE_MODEL, *HOSTILE_CLASSES, HOSTILE_ATTRIBUTE):
        assert text in parsed.cells
    # the JSON island cannot close its own script element
    (specs_text,) = [t for a, t in parsed.scripts if a.get("type") == "application/json"]
    assert "<" not in specs_text


def test_metric_values_appear_as_formatted(parsed):
    results = make_results()
    cells = parsed.cells
    for model_id in MODELS:
        binary = results["models"][model_id]["levels"]["2x2+IM"]["metrics"]
        assert format_value(binary["tpr"], "percent") in cells
        assert format_value(binary["mcc"], "float") in cells
        assert f"{binary['tp']}" in cells
        roc = results["models"][model_id]["roc"]["2x2+IM"]
        assert format_value(roc["auc"], "float") in cells
    assert format_value(results["comparisons"][0]["p_holm"], "pvalue") == "0.3100"
    assert "0.3100" in cells


def test_format_value():
    assert format_value(0.81234, "percent") == "81.2%"
    assert format_value(-0.25, "float") == "-0.250"
    assert format_value(1234, "count") == "1,234"
    assert format_value(3.25, "count") == "3.25"
    assert format_value(0.04123, "pvalue") == "0.0412"
    assert format_value(None, "float") == ""
    assert format_value(1.875, "pp") == "+1.9 pp"
    assert format_value(-0.5, "pp") == "-0.5 pp"


def test_confusion_matrix_has_actual_predicted_and_distinct_im(parsed):
    assert parsed.cells.count("Actual ↓ / Predicted →") == 6 + 2  # + ALP and estimated 2×2
    im_cells = [attrs for tag, attrs in parsed.tags
                if tag in ("td", "th") and "im" in (attrs.get("class") or "").split()]
    # 3x3+IM: 3 + 1 header + 1 row head + 3 + corner, per model; 2x2+IM: 2 + 1 + 1 + 2 + 1
    assert len(im_cells) == 2 * (9 + 7) + 7


def test_sections_navigation_and_print_stylesheet(document, parsed):
    ids = [attrs["id"] for tag, attrs in parsed.tags if tag == "section"]
    assert ids == ["sec-summary", "sec-reference", "sec-metrics", "sec-confusion", "sec-per_fold",
                   "sec-comparisons", "sec-roc", "sec-drivers", "sec-new_wave",
                   "sec-data_quality", "sec-definitions", "sec-about"]
    hrefs = [attrs["href"] for tag, attrs in parsed.tags if tag == "a"]
    assert hrefs == ["#" + i for i in ids]
    assert "@media print" in document and "break-before: page" in document


def test_no_respondent_level_values_unless_asked():
    value = "=cmd|' /C calc'!A0"
    assert value not in render_html(build_report(make_results()), charts=False)
    shown = render_html(build_report(make_results(), respondent_data=True), charts=False)
    assert "=cmd|&#x27; /C calc&#x27;!A0" in shown


def test_missing_parts_are_said_not_crashed():
    results = make_results()
    del results["drivers"]
    results["comparisons"] = []
    html = render_html(build_report(results), charts=False)
    assert "No t-tests in these results" in html
    assert "The results hold no driver analysis." in html
    assert "<script" not in html  # no charts, no libraries


def test_a_document_of_another_layout_is_refused_not_guessed():
    from cx_app.models.results import ResultsError

    with pytest.raises(ResultsError, match="dataset: Field required"):
        build_report({"models": {}})


def _section(report, key):
    return next(s for s in report.sections if s.key == key)


def test_long_tables_are_folded_and_roc_chart_points_thinned():
    results = make_results()
    n = 3000
    roc = {"kind": "reduced 2x2+IM", "fpr": [i / n for i in range(n + 1)],
           "tpr": [(i / n) ** 0.5 for i in range(n + 1)], "points": n + 1, "auc": 0.66,
           "random_auc": 0.5}
    for model in results["models"].values():
        model["roc"]["2x2+IM"] = roc
    report = build_report(results)
    points = next(b for b in _section(report, "roc").blocks
                  if getattr(b, "title", "") == "ROC points — level 2x2+IM")
    assert len(points.rows) == len(results["models"]) * (n + 1)  # the table keeps every point
    chart = next(b for b in _section(report, "roc").blocks
                 if getattr(b, "title", "") == "ROC — level 2x2+IM")
    drawn = [v for d in chart.spec["datasets"].values() for v in d if "tpr" in v]
    assert len(drawn) < len(points.rows) / 4
    page = render_html(report, charts=False)
    assert f"Show all {len(points.rows):,} rows" in page
    assert page.count("<details") == sum(
        1 for s in report.sections for t in s.blocks
        if isinstance(t, Table) and len(t.rows) > 60)


def test_permutation_per_fold_columns_are_named_after_the_attributes():
    results = make_results()
    results["drivers"] = {"permutation": {"lr": {
        "algorithm": "lr", "scoring": "accuracy", "n_repeats": 5,
        "attributes": ["billing", "=cmd"], "mean": [0.02, 0.01], "ci_low": [0.01, 0.0],
        "ci_high": [0.03, 0.02], "per_fold": [[0.021, 0.009], [0.019, 0.011], [0.02, 0.01]]}}}
    table = next(t for t in _section(build_report(results), "drivers").blocks
                 if getattr(t, "title", "")  == "Permutation importance per fold (Logistic regression)")
    assert [c.title for c in table.columns] == ["Fold", "billing", "=cmd"]
    assert table.rows == ((1, 0.021, 0.009), (2, 0.019, 0.011), (3, 0.02, 0.01))


def test_summary_reading_is_one_plain_paragraph():
    from report_fixtures import R_SQUARED, RAW_WEIGHTS

    from cx_app.reports.blocks import Paragraph

    results = make_results()
    results["comparisons"].append({  # lr's lead on accuracy at 3x3+IM: significant
        "level": "3x3+IM", "metric": "accuracy", "a": HOSTILE_MODEL, "b": "lr", "folds": 3,
        "mean_a": 0.7, "mean_b": 0.6, "mean_diff": 0.1, "t": 9.0, "df": 2, "p": 0.001,
        "t_corrected": 6.0, "p_corrected": 0.004, "p_holm": 0.004, "alpha": 0.05,
        "verdict": "significant"})
    blocks = _section(build_report(results, make_new_wave()), "summary").blocks
    heading = next(i for i, b in enumerate(blocks)
                   if isinstance(b, Paragraph) and b.text == "Reading")
    (reading,) = blocks[heading + 1:]
    text = reading.text
    # the verdict sentences of the t-tests are not repeated
    assert results["comparisons"][0]["verdict"] not in text and "Nadeau" not in text
    # the models win different metrics: named per level, and whether the lead could be chance
    assert f"At level original, {HOSTILE_MODEL} is best by accuracy and Logistic regression by macro F1" in text
    assert "significant after Holm's correction at 3x3+IM (accuracy)" in text
    assert "2x2+IM (MCC) the difference could be chance" in text
    # the top driver with its share, only because its interval sets it above the other one
    share = RAW_WEIGHTS[1] / R_SQUARED
    assert (f"The strongest driver, above the others beyond its uncertainty, is "
            f"{HOSTILE_ATTRIBUTE} ({share:.0%} of the explained variance).") in text
    assert ("No attribute is both more important and rated lower than the others beyond "
            "their uncertainty.") in text
    # the NPS of the data set and of the new wave, with their intervals
    assert "The NPS of the 54 analysed respondents is 12.3 (95% interval -8.5 to 31.2)" in text
    assert "the new wave's estimated NPS is 21.5 (3.0 to 40.0)" in text
    assert len(text) < 900


def test_new_wave_rate_differences_are_shown_in_points(parsed):
    wave = make_new_wave()
    realized = {"accuracy": 0.85, "tpr": 0.9}
    wave["metric_comparison"] = [{**row, "realized": realized[row["metric"]]}
                                 for row in wave["metric_comparison"]]
    wave["realized_nps"] = {"value": 20.0, "ci95": [1.0, 39.0], "n": 40}
    page = render_html(build_report(make_results(), wave), charts=False)
    assert "Estimate − realized (pp)" in page and "(points)" not in page
    assert ">+1.9 pp<" in page and ">-5.0 pp<" in page  # 86.875% − 85%, 84.96% − 90%


def test_new_wave_counts_and_model_check_are_labelled_and_formatted():
    wave = make_new_wave()
    wave["estimated_class_counts"] = {"0": 101.57574286954836, "10": 298.42425713045164}
    page = render_html(build_report(make_results(), wave), charts=False)
    section = page[page.index('id="sec-new_wave"'):page.index('id="sec-data_quality"')]
    shown = [text for text in (part.split("<", 1)[0] for part in section.split(">"))
             if text.strip()]  # the visible text (the full value stays in the hover title)
    for raw in ("accuracy_cm", "accuracy_alp", "net_calibration_error", "share_gap",
                "training_n", "101.57574286954836", "Model — Heldout alp gap"):
        assert raw not in shown
    assert ">101.6<" in section and ">25.4%<" in section  # one decimal; share of 400
    assert "Held-out check of the ALP estimate" in section
    assert ">Accuracy (real, held-out)<" in section and ">75.0%<" in section
    assert ">79.0%<" in section and ">+4.0 pp<" in section  # ALP − real accuracy in points
    assert ">Net score calibration error (score points)<" in section and ">3.5<" in section
    assert ">-2.3<" in section and ">1.4%<" in section and ">0.650<" in section


def test_new_wave_intervals_and_alerts_are_shown():
    wave = make_new_wave()
    wave["metric_comparison"] = [{**row, "ci_low": row["estimated"] - 0.0625,
                                  "ci_high": min(1.0, row["estimated"] + 0.0625)}
                                 for row in wave["metric_comparison"]]
    wave["alerts"] = [
        {"metric": "accuracy", "value": 0.8125, "lower": 0.85, "upper": 0.95, "alert": True,
         "direction": "below", "source": "analyst"},
        {"metric": "net_score", "value": 21.5, "lower": 5.0, "upper": 30.0, "alert": False,
         "direction": "", "source": "reference band"}]
    page = render_html(build_report(make_results(), wave), charts=False)
    section = page[page.index('id="sec-new_wave"'):page.index('id="sec-data_quality"')]
    assert ">95% low<" in section and ">95% high<" in section
    assert ">80.6%<" in section and ">93.1%<" in section  # 86.875% ∓ 6.25 points
    assert "Alerts on the estimates" in section and ">ALERT (below)<" in section
    assert ">85.0%<" in section and ">30.0<" in section  # accuracy limits as %, net in points


def test_the_vega_libraries_are_bundled_once_a_process_and_a_given_bundle_is_used():
    """vl-convert's bundle of Vega, Vega-Lite and vega-embed takes seconds: it is made once a
    process (the reports thread makes it while the workbook is written), and a report given
    the bundle inlines that one."""
    from cx_app.reports.html import vega_bundle

    report = build_report(make_results())
    first = vega_bundle()
    hits = vega_bundle.cache_info().hits
    assert vega_bundle() is first and vega_bundle.cache_info().hits == hits + 1
    assert "vegaEmbed" in first
    marked = render_html(report, bundle="/* the given bundle */")
    assert "/* the given bundle */" in marked and first not in marked
    assert first in render_html(report)
