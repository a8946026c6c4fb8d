"""The Excel report, read back with openpyxl: sheets, numbers equal to the results, safety."""

from __future__ import annotations

import math

import openpyxl
import pytest
from report_fixtures import (
    FOLDS,
    HOSTILE_ATTRIBUTE,
    HOSTILE_CLASSES,
    HOSTILE_MODEL,
    MODELS,
    SHOWN,
    make_new_wave,
    make_results,
)

from cx_app.engine.catalogue import BINARY_METRICS, MULTICLASS_METRICS, metric_name
from cx_app.reports.content import build_report
from cx_app.reports.definitions import plain_name
from cx_app.reports.excel import write_excel

SHEETS = ["Summary", "Reference survey", "Metrics", "Confusion matrices", "Per-fold values", "Comparisons", "ROC",
          "Drivers", "New wave", "Data quality", "Definitions", "About"]


@pytest.fixture(scope="module")
def workbook(tmp_path_factory):
    path = tmp_path_factory.mktemp("xlsx") / "report.xlsx"
    write_excel(build_report(make_results(), make_new_wave()), path)
    return openpyxl.load_workbook(path)


def _find(ws, text):
    """(row, column) of the first cell whose value is exactly ``text``."""
    for row in ws.iter_rows():
        for cell in row:
            if cell.value == text:
                return cell.row, cell.column
    raise AssertionError(f"{text!r} not found on sheet {ws.title}")


def _table(ws, title):
    """The table under the bold title cell ``title``: header names → column index, and the
    rows as dicts keyed by header name, until the first empty row or the (italic) note."""
    r, c = _find(ws, title)
    headers = {}
    col = c
    while ws.cell(r + 1, col).value is not None:
        headers[ws.cell(r + 1, col).value] = col
        col += 1
    rows = []
    row = r + 2
    while ws.cell(row, c).value is not None and not ws.cell(row, c).font.italic:
        rows.append({h: ws.cell(row, j) for h, j in headers.items()})
        row += 1
    return rows


def test_every_sheet_is_present_in_order(workbook):
    assert workbook.sheetnames == SHEETS


def test_new_wave_sheet_only_when_a_new_wave_was_analysed(tmp_path):
    path = tmp_path / "r.xlsx"
    write_excel(build_report(make_results()), path, charts=False)
    names = openpyxl.load_workbook(path).sheetnames
    assert "New wave" not in names and names == [s for s in SHEETS if s != "New wave"]


def test_no_cell_is_a_formula_and_hostile_text_is_verbatim(workbook):
    strings = set()
    for ws in workbook:
        for row in ws.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (ws.title, cell.coordinate, cell.value)
                if isinstance(cell.value, str):
                    strings.add(cell.value)
                    if cell.value.startswith(("=", "+", "-", "@")):
                        assert cell.quotePrefix, (ws.title, cell.coordinate)
    for text in (HOSTILE_MODEL, *HOSTILE_CLASSES, "+passives", "Price perception"):
        assert text in strings


def test_metric_cells_equal_the_results(workbook):
    results = make_results()
    ws = workbook["Metrics"]
    checked = 0
    for level_name in ("original", "3x3+IM", "2x2+IM"):
        rows = {r["Model"].value: r for r in _table(ws, f"Level {level_name}")}
        assert set(rows) == set(SHOWN.values())
        binary = level_name == "2x2+IM"
        defs = {**MULTICLASS_METRICS, **BINARY_METRICS} if binary else MULTICLASS_METRICS
        for model_id in MODELS:
            metrics = results["models"][model_id]["levels"][level_name]["metrics"]
            for key, value in metrics.items():
                if not isinstance(value, int | float):
                    continue
                header = (BINARY_METRICS if binary and key in BINARY_METRICS else defs)[key].name
                cell = rows[SHOWN[model_id]][header]
                assert cell.value == value, (level_name, model_id, key)
                assert cell.data_type == "n"
                checked += 1
    assert checked == 2 * (7 + 7 + 29)


def test_rates_are_percentages_and_counts_whole_numbers(workbook):
    rows = {r["Model"].value: r for r in _table(workbook["Metrics"], "Level 2x2+IM")}
    assert rows[SHOWN["lr"]]["Recall, sensitivity (TPR)"].number_format == "0.0%"
    assert rows[SHOWN["lr"]]["True positives (TP)"].number_format == "#,##0"
    assert rows[SHOWN["lr"]]["Matthews correlation (MCC)"].number_format == "0.000"
    delta = rows[SHOWN["lr"]]["Discriminant capability (δ)"]
    assert delta.value == -0.25 and delta.data_type == "n"  # negative numbers stay numbers


def _matrix(ws, title, size, with_im):
    r, _ = _find(ws, title)
    r += 1
    if ws.cell(r, 1).value.startswith("Positive group"):
        r += 1
    assert ws.cell(r, 1).value == "Actual ↓ / Predicted →"
    width = size + (1 if with_im else 0)
    header = [ws.cell(r, 2 + j).value for j in range(width)]
    rows = [[ws.cell(r + 1 + i, 1 + j).value for j in range(width + 1)]
            for i in range(size + (1 if with_im else 0))]
    return header, rows


def test_confusion_matrices_equal_the_results_with_labels_and_im(workbook):
    results = make_results()
    ws = workbook["Confusion matrices"]
    for model_id in MODELS:
        for level_name, level in results["models"][model_id]["levels"].items():
            labels = [plain_name(x) for x in level["labels"]]  # passives_promoters: words
            im = level["im"]
            header, rows = _matrix(ws, f"{SHOWN[model_id]} — level {level_name}", len(labels),
                                   im is not None)
            assert header == labels + (["IM"] if im is not None else [])
            for i, label in enumerate(labels):
                assert rows[i][0] == label
                assert rows[i][1:len(labels) + 1] == level["matrix"][i]
                if im is not None:
                    assert rows[i][-1] == im[i]
            if im is not None:
                assert rows[-1][0] == "IM"
                assert rows[-1][1:len(labels) + 1] == im


def test_confusion_sheet_has_colour_scales_and_a_distinct_im_fill(workbook):
    ws = workbook["Confusion matrices"]
    rules = [rule for cf in ws.conditional_formatting for rule in cf.rules]
    assert len(rules) == 6 and all(rule.type == "colorScale" for rule in rules)
    r, _ = _find(ws, "Logistic regression — level 3x3+IM")
    header_row = r + 1
    im_header = ws.cell(header_row, 5)
    assert im_header.value == "IM"
    plain = ws.cell(header_row + 1, 2)
    assert ws.cell(header_row + 1, 5).fill.fgColor.rgb != plain.fill.fgColor.rgb
    assert ws.cell(header_row + 4, 1).value == "IM"
    assert ws.cell(header_row + 4, 2).font.italic


def test_per_fold_comparisons_roc_drivers_equal_the_results(workbook):
    results = make_results()
    folds = {(r["Model"].value, r["Metric"].value): [r[f"Fold {i}"].value for i in (1, 2, 3)]
             for r in _table(workbook["Per-fold values"], "Level 2x2+IM")}
    for model_id in MODELS:
        for metric, values in results["models"][model_id]["levels"]["2x2+IM"]["per_fold"].items():
            assert folds[(SHOWN[model_id], metric_name(metric, binary=True))] == values

    (row,) = _table(workbook["Comparisons"], "Paired t-tests over the cross-validation folds")
    c = results["comparisons"][0]
    assert row["Model B"].value == HOSTILE_MODEL and row["Model B"].data_type == "s"
    assert [row[h].value for h in ("t (plain)", "p (plain)", "p (corrected)", "p (Holm)")] == [
        c["t"], c["p"], c["p_corrected"], c["p_holm"]]
    assert row["p (Holm)"].number_format == "0.0000"

    auc = {r["Model"].value: (r["AUC"].value, r["Random-selection area"].value)
           for r in _table(workbook["ROC"], "AUC — level 2x2+IM")}
    points = _table(workbook["ROC"], "ROC points — level 2x2+IM")
    for model_id in MODELS:
        roc = results["models"][model_id]["roc"]["2x2+IM"]
        assert auc[SHOWN[model_id]] == (roc["auc"], roc["random_auc"])
        mine = [(p["FPR"].value, p["TPR"].value) for p in points if p["Model"].value == SHOWN[model_id]]
        assert mine == list(zip(roc["fpr"], roc["tpr"], strict=True))



ATTRIBUTE_OF = {label: name for name, label in
                make_results()["dataset"]["attribute_labels"].items()}
"""An attribute's label in the report → its name in the results."""
RELATIVE_WEIGHTS = "Relative weights (Johnson 2000): share of the explained variance"


def test_drivers_equal_the_results_with_readable_headings_and_labels(workbook):
    drivers = make_results()["drivers"]
    ws = workbook["Drivers"]
    weights = drivers["relative_weights"]
    rows = _table(ws, RELATIVE_WEIGHTS)
    # largest share first; attributes are shown by their label only (no identifier)
    assert [r["Attribute"].value for r in rows] == [HOSTILE_ATTRIBUTE, "Price perception"]
    assert all("Survey column" not in r for r in rows)
    for row in rows:
        i = weights["attributes"].index(ATTRIBUTE_OF[row["Attribute"].value])
        share = row["Share of R²"]
        assert share.value == pytest.approx(weights["percent"][i] / 100)
        assert share.value == pytest.approx(weights["raw"][i] / weights["r_squared"])
        assert share.number_format == "0.0%"
        assert row["Raw weight (variance explained)"].value == weights["raw"][i]
    about = {r["Item"].value: r["Value"] for r in _table(ws, "About the relative weights")}
    assert about["R² of the linear model"].value == weights["r_squared"]
    assert about["R² of the linear model"].number_format == "0.000"
    assert about["Method"].value == weights["method"]

    ordinal = drivers["ordinal"]
    rows = {ATTRIBUTE_OF[r["Attribute"].value]: r for r in _table(
        ws, "Ordinal logistic regression: effect of each attribute on the score")}
    for i, name in enumerate(ordinal["attributes"]):
        row = rows[name]
        assert [row[h].value for h in ("Coefficient (log-odds per SD)", "SE", "95% low",
                                       "95% high", "p")] == [
            ordinal[k][i] for k in ("coef", "se", "ci_low", "ci_high", "p")]
        assert row["Odds ratio per SD"].value == pytest.approx(math.exp(ordinal["coef"][i]))

    permutation = drivers["permutation"]["lr"]
    rows = {ATTRIBUTE_OF[r["Attribute"].value]: r for r in _table(
        ws, "Permutation importance (Logistic regression): drop in accuracy when the attribute is shuffled")}
    for i, name in enumerate(permutation["attributes"]):
        assert [rows[name][h].value for h in ("Mean drop", "95% low", "95% high")] == [
            permutation[k][i] for k in ("mean", "ci_low", "ci_high")]
    about = {r["Item"].value: r["Value"].value
             for r in _table(ws, "About the permutation importance (Logistic regression)")}
    assert about["Shuffles per attribute and fold"] == permutation["n_repeats"]
    assert about["Score that drops when shuffled"] == "accuracy"

    rows = {ATTRIBUTE_OF[r["Attribute"].value]: r for r in _table(
        ws, "Importance–performance: where to act")}
    for record in drivers["importance_performance"]["rows"]:
        row = rows[record["attribute"]]
        assert row["Share of R²"].value == pytest.approx(record["importance"] / 100)
        assert row["Share of R²"].number_format == "0.0%"
        assert row["Performance (mean score)"].value == record["performance"]
        assert row["Quadrant"].value == record["quadrant"]

    rows = {ATTRIBUTE_OF[r["Attribute"].value]: r for r in _table(
        ws, "Top box as a signal: does a top rating mark the target group?")}
    for record in drivers["top_box"]:
        row = rows[record["attribute"]]
        assert [row[h].value for h in ("Top-box share", "TPR", "FPR", "δ", "φ")] == [
            record[k] for k in ("top_box_share", "tpr", "fpr", "delta", "phi")]


def test_drivers_sheet_shows_no_json_keys(workbook):
    ws = workbook["Drivers"]
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    raw_keys = {"r_squared", "n_repeats", "raw", "percent", "method", "scoring", "algorithm",
                "permutation_model", "ranking", "importance", "top_box_share", "coef"}
    assert raw_keys.isdisjoint(texts)
    assert not [t for t in texts if t.startswith("Drivers —") or t.endswith("— about")]


def test_workbook_parts_hold_native_charts_and_png_images(tmp_path):
    import zipfile

    path = tmp_path / "r.xlsx"
    write_excel(build_report(make_results()), path)
    with zipfile.ZipFile(path) as package:
        names = package.namelist()
        charts = [n for n in names if n.startswith("xl/charts/chart")]
        images = [n for n in names if n.startswith("xl/media/") and n.endswith(".png")]
        assert len(charts) == 2  # ROC scatter + AUC bars
        kinds = {("scatterChart" in package.read(n).decode()) for n in charts}
        assert kinds == {True, False}
        # δ/φ per fold, ROC, AUC; drivers: relative weights, ordinal, permutation, quadrant,
        # top-box δ/φ (one target)
        assert len(images) == 8
        assert all(package.read(n).startswith(b"\x89PNG") for n in images)


def test_summary_nps_best_model_and_new_wave(workbook):
    results = make_results()
    (nps,) = _table(workbook["Summary"], "NPS of the analysed respondents")
    assert nps["NPS"].value == 12.345
    assert (nps["95% low"].value, nps["95% high"].value) == (-8.5, 31.2)
    best = {(r["Level"].value, r["Metric"].value): r for r in _table(
        workbook["Summary"], "Best model per level, by each compared metric")}
    # every level is ranked by accuracy and by its headline metric, each with its own winner
    headline = {"original": "f1_macro", "3x3+IM": "f1_macro", "2x2+IM": "mcc"}
    assert set(best) == {(level, metric_name(key, binary=level == "2x2+IM"))
                         for level in headline for key in ("accuracy", headline[level])}
    winners = set()
    for level, key in [(lv, k) for lv in headline for k in ("accuracy", headline[lv])]:
        # ranked by the mean over the folds: the rule that picks the best model everywhere
        values = {m: sum(results["models"][m]["levels"][level]["per_fold"][key]) / FOLDS
                  for m in MODELS}
        winner, runner_up = sorted(values, key=values.get, reverse=True)
        row = best[(level, metric_name(key, binary=level == "2x2+IM"))]
        assert row["Best model"].value == SHOWN[winner]
        assert row["Runner-up"].value == SHOWN[runner_up]
        assert (row["Value"].value, row["Runner-up value"].value) == (
            pytest.approx(values[winner]), pytest.approx(values[runner_up]))
        assert row["Value"].number_format == ("0.000" if key == "mcc" else "0.0%")
        winners.add((level, key, winner))
    # the fixture's models win different metrics at level original: both rows are needed
    assert {w for lv, k, w in winners if lv == "original"} == set(MODELS)
    mcc = best[("2x2+IM", "Matthews correlation (MCC)")]
    assert mcc["p (Holm), best vs runner-up"].value == results["comparisons"][0]["p_holm"]
    assert mcc["Difference significant?"].value == "no"
    assert best[("original", "Accuracy")]["Difference significant?"].value == "not tested"

    ws = workbook["New wave"]
    header, rows = _matrix(ws, "ALP confusion matrix (estimated)", 4, False)
    assert rows[3][1:] == make_new_wave()["alp_matrix"][3]
    assert ws.cell(_find(ws, "Warning: <b>drift</b> in " + HOSTILE_ATTRIBUTE)[0], 1).font.bold


def test_data_quality_leaves_out_respondent_values_unless_asked(tmp_path):
    hostile_value = "=cmd|' /C calc'!A0"
    for flag in (False, True):
        path = tmp_path / f"r{flag}.xlsx"
        write_excel(build_report(make_results(), respondent_data=flag), path, charts=False)
        ws = openpyxl.load_workbook(path)["Data quality"]
        rows = _table(ws, "Excluded rows")
        assert [r["Row"].value for r in rows] == [4, 9, 12]
        assert rows[2]["Column"].value == HOSTILE_ATTRIBUTE
        values = [c.value for row in ws.iter_rows() for c in row]
        assert (hostile_value in values) is flag


def test_definitions_and_about(workbook):
    ws = workbook["Definitions"]
    rows = _table(ws, "2×2+IM metrics")
    assert [r["Metric"].value for r in rows] == [d.name for d in BINARY_METRICS.values()]
    mcc = next(r for r in rows if r["Metric"].value == BINARY_METRICS["mcc"].name)
    assert "(TP+IMP)(TN+IMN)" in mcc["Formula"].value
    assert {r["Option"].value for r in _table(ws, "Grouping options")} == {"R", "S", "RS"}
    about = {r["Item"].value: r["Value"].value for r in _table(workbook["About"], "Provenance")}
    assert about["Input file"] == "wave =1.xlsx"
    assert about["Input SHA-256"] == "ab" * 32
    assert about["Seed"] == 7 and about["Folds"] == 3


def test_results_without_their_nps_are_refused_with_the_field_named():
    from cx_app.models.results import ResultsError

    results = make_results()
    del results["dataset"]["nps"]
    with pytest.raises(ResultsError, match=r"dataset\.nps: Field required"):
        build_report(results)


def test_every_metric_key_of_the_engine_has_a_definition_in_the_report(workbook):
    import numpy as np

    from cx_app.engine.binary import BINARY_KEYS
    from cx_app.engine.catalogue import metric_definition
    from cx_app.engine.confusion import ConfusionMatrix, multiclass_metrics

    multiclass = multiclass_metrics(ConfusionMatrix((0, 1, 2), np.array(
        [[3, 1, 0], [1, 2, 1], [0, 1, 4]]))).to_dict()
    per_class = set(next(iter(multiclass["per_class"].values()))) | {"im"}
    keys = [(k, True) for k in BINARY_KEYS] + [
        (k, False) for k in [*multiclass, *per_class] if k not in ("per_class", "undefined")]
    assert [k for k, binary in keys if metric_definition(k, binary=binary) is None] == []
    ws = workbook["Definitions"]
    shown = {ws.cell(r, 1).value for r in range(1, ws.max_row + 1)}  # by name, not key
    assert {metric_definition(k, binary=binary).name for k, binary in keys
            if k not in ("tp", "fn", "fp", "tn")} <= shown
    assert {metric_definition(k).name for k in ("tpr", "n_actual", "precision", "support",
                                                 "im", "psi", "relative_weight")} <= shown


def test_new_wave_estimates_stand_beside_realized_values(tmp_path):
    wave = make_new_wave()
    wave["metric_comparison"] = [
        {"level": "2x2+IM", "metric": metric, "estimated": estimated, "realized": realized}
        for metric, estimated, realized in (("accuracy", 0.86875, 0.85), ("tpr", 0.8496, 0.9),
                                            ("tp", 24.0, 25), ("mcc", 0.61, 0.6))]
    wave["realized_nps"] = {"value": 20.0, "ci95": [1.0, 39.0], "n": 40}
    path = tmp_path / "w.xlsx"
    write_excel(build_report(make_results(), wave), path, charts=False)
    ws = openpyxl.load_workbook(path)["New wave"]
    rates = {r["Metric"].value: r for r in _table(ws, "Estimated metrics — level 2x2+IM (rates)")}
    accuracy = rates["Accuracy"]
    assert (accuracy["Estimate"].value, accuracy["Realized"].value) == (0.86875, 0.85)
    # a difference of two rates is in percentage points, and labelled so (not %)
    difference = accuracy["Estimate − realized (pp)"]
    assert difference.value == pytest.approx(100 * (0.86875 - 0.85))
    assert '" pp"' in difference.number_format and "%" not in difference.number_format
    assert accuracy["Estimate"].number_format == "0.0%"
    tpr = rates["Recall, sensitivity (TPR)"]["Estimate − realized (pp)"]
    assert tpr.value == pytest.approx(100 * (0.8496 - 0.9))
    assert rates["Recall, sensitivity (TPR)"]["Realized"].value == 0.9
    (counts,) = _table(ws, "Estimated metrics — level 2x2+IM (counts)")
    assert (counts["Estimate"].value, counts["Realized"].value) == (24.0, 25)
    (other,) = _table(ws, "Estimated metrics — level 2x2+IM (other metrics)")
    assert other["Metric"].value == "Matthews correlation (MCC)"
    assert other["Estimate − realized"].value == pytest.approx(0.61 - 0.6)  # not a rate: as is
    nps = {r["Figure"].value: r for r in _table(ws, "NPS of the new wave")}
    estimated, realized = (nps[k] for k in sorted(nps))
    assert [estimated[h].value for h in ("NPS", "95% low", "95% high")] == [21.5, 3.0, 40.0]
    assert [realized[h].value for h in ("NPS", "95% low", "95% high", "Respondents")] == [
        20.0, 1.0, 39.0, 40]
    assert realized["NPS"].number_format == "0.0"


def test_new_wave_counts_and_model_check_are_labelled_and_formatted(tmp_path):
    wave = make_new_wave()
    wave["estimated_class_counts"] = {"0": 101.57574286954836, "10": 298.42425713045164}
    path = tmp_path / "w.xlsx"
    write_excel(build_report(make_results(), wave), path, charts=False)
    ws = openpyxl.load_workbook(path)["New wave"]
    counts = {r["Class"].value: r for r in _table(ws, "Estimated class counts")}
    zero = counts["0"]
    assert zero["Estimated respondents"].value == pytest.approx(101.57574286954836, abs=1e-12)
    assert zero["Estimated respondents"].number_format == "0.0"  # shown with one decimal
    assert zero["Estimated share"].value == pytest.approx(101.57574286954836 / 400)
    assert zero["Estimated share"].number_format == "0.0%"
    model = {r["Item"].value: r["Value"] for r in _table(ws, "Model")}
    assert model["Training respondents"].value == 120
    gap = {r["Item"].value: r["Value"]
           for r in _table(ws, "Model — Held-out check of the ALP estimate")}
    # readable names, not the results' keys (accuracy_cm, net_calibration_error, ...)
    assert not {"accuracy_cm", "net_calibration_error", "share_gap", "score"} & set(gap)
    assert gap["Accuracy (real, held-out)"].value == 0.75
    assert gap["Accuracy (real, held-out)"].number_format == "0.0%"
    assert gap["Accuracy (ALP estimate, held-out)"].number_format == "0.0%"
    assert gap["Accuracy gap (ALP − real)"].value == pytest.approx(4.0)  # percentage points
    assert '" pp"' in gap["Accuracy gap (ALP − real)"].number_format
    assert gap["Class-share gap (total variation)"].number_format == "0.0%"
    assert gap["Net score calibration error (score points)"].value == 3.456
    assert gap["Net score calibration error (score points)"].number_format == "0.0"
    assert gap["Net score gap, estimated − actual (score points)"].number_format == "0.0"
    assert gap["Held-out respondents"].number_format == "0"
    assert gap["Gap score (1 or less: no warning)"].number_format == "0.000"


def test_reference_survey_and_baseline_are_in_words_and_tables(tmp_path):
    """The reference survey's measured NPS by segment and by wave (with intervals and flags)
    on its own sheet, and the baseline table with a warning sentence per model below it."""
    results = make_results()
    results["dataset"]["reference"] = {"splits": [
        {"name": "bank", "title": "Bank", "kind": "segment", "rows": [
            {"value": "=Bank A", "n": 30, "score": -5.4, "ci_low": -20.1, "ci_high": 9.9,
             "difference": 4.1, "p_holm": 0.61, "flag": "no significant difference"},
            {"value": "Bank B", "n": 24, "score": 17.5, "ci_low": 1.0, "ci_high": 33.0,
             "difference": 30.2, "p_holm": 0.012, "flag": "significantly above the rest"}]},
        {"name": "quarter", "title": "Quarter", "kind": "wave", "rows": [
            {"value": "Q1", "n": 27, "score": -3.0, "ci_low": -18.0, "ci_high": 12.0,
             "difference": None, "p_holm": None, "flag": "no significant difference"},
            {"value": "Q2", "n": 27, "score": 1.0, "ci_low": -14.0, "ci_high": 16.0,
             "difference": 4.0, "p_holm": 0.7, "flag": "no significant difference"}]}]}
    results["baseline"] = {"original": {"class": "=1+1", "accuracy": 0.9},
                           "3x3+IM": {"class": "promoters", "accuracy": 0.1}}
    for model in results["models"].values():
        model["below_baseline"] = ["original"]
    path = tmp_path / "r.xlsx"
    write_excel(build_report(results), path, charts=False)
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Reference survey"]
    by_bank = {r["Bank"].value: r for r in _table(sheet, "NPS by Bank")}
    assert by_bank["=Bank A"]["NPS"].value == -5.4 and by_bank["=Bank A"]["NPS"].data_type == "n"
    assert (by_bank["Bank B"]["95% low"].value, by_bank["Bank B"]["95% high"].value) == (1.0, 33.0)
    assert by_bank["Bank B"]["Significant?"].value == "significantly above the rest"
    assert by_bank["Bank B"]["p (Holm)"].value == 0.012
    waves = _table(sheet, "NPS by wave (Quarter)")
    assert [w["Quarter"].value for w in waves] == ["Q1", "Q2"]
    assert waves[1]["Change from the previous wave"].value == 4.0
    (overall,) = _table(sheet, "NPS of the reference survey (measured)")
    assert overall["NPS"].value == 12.345
    baseline = {r["Level"].value: r for r in _table(workbook["Summary"], "Baseline: always "
                                                   "answering the commonest class")}
    assert baseline["original"]["Always answering"].value == "=1+1"  # text, not a formula
    assert baseline["original"]["Accuracy of that answer"].value == 0.9
    assert baseline["original"]["Models below it"].value == ", ".join(SHOWN[m] for m in MODELS)
    assert baseline["3x3+IM"]["Models below it"].value == "none"
    text = [c.value for row in workbook["Summary"].iter_rows() for c in row
            if isinstance(c.value, str)]
    accuracy = results["models"]["lr"]["levels"]["original"]["metrics"]["accuracy"]
    assert (f"Logistic regression is below the baseline (always answering the commonest "
            f"class): at original its accuracy is {accuracy:.1%}, always answering =1+1 gets "
            "90.0%. Do not use it for this survey at that level.") in text
