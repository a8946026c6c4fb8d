"""Chart builders: valid Vega-Lite, the data the chart shows, IM cells kept distinct."""

import altair as alt
import numpy as np
import pandas as pd
import pytest

from cx_app.reports import chart_specs, charts


def _datasets(spec: dict) -> list[list[dict]]:
    return list(spec.get("datasets", {}).values())


def _matrix_with_im() -> pd.DataFrame:
    # 2×2+IM: rows actual, columns predicted, IM column = IM row transposed (MATH.md §4)
    return pd.DataFrame(
        [[30, 5, 2], [4, 50, 9], [2, 9, 0]],
        index=["detractors", "passives_promoters", "IM"],
        columns=["detractors", "passives_promoters", "IM"],
    )


def test_matrix_to_long_kinds_and_row_shares():
    long = charts.matrix_to_long(_matrix_with_im())
    assert len(long) == 9
    cell = long.set_index(["actual", "predicted"])
    assert cell.loc[("detractors", "detractors"), "kind"] == "correct"
    assert cell.loc[("detractors", "passives_promoters"), "kind"] == "error"
    assert cell.loc[("passives_promoters", "IM"), "kind"] == "IM"
    assert cell.loc[("IM", "detractors"), "kind"] == "IM"
    # row share: 5 of the detractor row's 37 respondents (IM column included)
    assert cell.loc[("detractors", "passives_promoters"), "row_share"] == pytest.approx(5 / 37)
    assert ("IM", "IM") in cell.index  # a zero corner is kept; a NaN corner is dropped


def test_confusion_heatmap_has_a_separate_im_layer_and_axes_oriented():
    chart = charts.confusion_heatmap(_matrix_with_im(), title="2x2+IM")
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    layers = spec["layer"]
    filters = [
        t["filter"] for layer in layers for t in layer.get("transform", []) if "filter" in t
    ]
    assert any("'IM'" in str(f) and "!==" in str(f) for f in filters)
    im_layer = next(layer for layer in layers if "=== 'IM'" in str(layer.get("transform")))
    assert im_layer["encoding"]["color"]["scale"]["scheme"] == "oranges"
    assert spec["resolve"]["scale"]["color"] == "independent"
    cells = layers[0]["encoding"]
    assert cells["y"]["title"] == "Actual" and cells["x"]["title"] == "Predicted"
    assert cells["y"]["sort"] == ["detractors", "passives_promoters", "IM"]
    assert spec["width"] == 72 * 3 and spec["autosize"]["type"] == "pad"


def test_eleven_class_heatmap_has_all_121_cells_even_when_a_class_is_empty():
    counts = np.zeros((11, 11), dtype=int)
    counts[10, 10] = 7
    counts[3, 9] = 2
    frame = pd.DataFrame(counts, index=range(11), columns=range(11))
    spec = charts.confusion_heatmap(frame).to_dict()
    (values,) = _datasets(spec)
    assert len(values) == 121
    got = {(v["actual"], v["predicted"]): v["count"] for v in values}
    assert got[("10", "10")] == 7 and got[("3", "9")] == 2 and got[("0", "0")] == 0


def test_labels_are_data_not_markup():
    label = "<b>Shop & 'web'</b> *bold*"
    frame = pd.DataFrame({"attribute": [label, "Billing"], "importance": [0.3, 0.1],
                          "ci_low": [0.2, 0.05], "ci_high": [0.4, 0.15]})
    spec = charts.importance_bars(frame).to_dict()
    (values,) = _datasets(spec)
    assert values[0]["attribute"] == label
    assert spec["layer"][0]["encoding"]["y"]["sort"] == [label, "Billing"]


def test_nps_bars_and_trend_keep_interval_columns():
    frame = pd.DataFrame({"group": ["A", "B"], "nps": [12.5, -3.0], "ci_low": [8.0, -9.0],
                          "ci_high": [17.0, 3.0], "n": [400, 380]})
    spec = charts.nps_bars(frame).to_dict()
    assert spec["layer"][1]["encoding"]["x2"]["field"] == "ci_high"
    trend = frame.rename(columns={"group": "wave"})
    spec = charts.nps_trend_chart(trend).to_dict()
    (values,) = _datasets(spec)
    assert [v["series"] for v in values] == ["All respondents"] * 2
    assert spec["layer"][1]["encoding"]["x"]["sort"] == ["A", "B"]


def test_score_distribution_colours_groups_in_scale_order():
    frame = pd.DataFrame({"score": range(11), "count": [1] * 11,
                          "category": ["detractors"] * 7 + ["passives"] * 2 + ["promoters"] * 2})
    spec = charts.score_distribution_chart(
        frame, categories=["detractors", "passives", "promoters"]).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == ["detractors", "passives", "promoters"]
    assert scale["range"] == list(charts.CATEGORY_COLOURS[:3])
    (values,) = _datasets(spec)
    assert values[0]["share"] == pytest.approx(1 / 11)


def test_rhombus_border_is_the_unit_l1_ball():
    frame = pd.DataFrame({"phi": [0.1, -0.2], "delta": [0.5, 0.4], "series": ["lr", "nb"]})
    spec = charts.rhombus_chart(frame).to_dict()
    border = next(v for v in _datasets(spec) if len(v) == 5 and "order" in v[0])
    assert all(abs(p["phi"]) + abs(p["delta"]) == 1 for p in border)


def test_roc_auc_pvalue_quadrant_and_profile_build_valid_specs():
    curves = pd.DataFrame({"model": ["lr"] * 3, "fpr": [0, 0.4, 1], "tpr": [0, 0.7, 0.9]})
    rnd = pd.DataFrame({"model": ["lr", "lr"], "fpr": [0, 1], "tpr": [0, 0.9]})
    spec = charts.roc_chart(curves, rnd, title="ROC").to_dict()
    assert spec["layer"][1]["mark"]["strokeDash"] == [6, 4]
    spec = charts.auc_bars(pd.DataFrame({"model": ["lr"], "auc": [0.8], "random_auc": [0.45]})).to_dict()
    (values,) = _datasets(spec)
    assert {v["curve"]: v["area"] for v in values} == {"model ROC": 0.8, "random selection": 0.45}
    tests = pd.DataFrame({"test": ["plain"] * 2, "model_a": ["lr", "nb"], "model_b": ["nb", "lr"],
                          "p_value": [0.01, 0.01], "mean_difference": [0.02, -0.02]})
    assert isinstance(charts.pvalue_heatmap(tests), alt.FacetChart)
    charts.pvalue_heatmap(tests).to_dict()
    quad = pd.DataFrame({"attribute": ["a", "b"], "importance": [0.2, 0.1], "performance": [7, 8]})
    spec = charts.quadrant_chart(quad).to_dict()
    means = [v for v in _datasets(spec) if len(v) == 1][0][0]
    assert means == {"importance": pytest.approx(0.15), "performance": 7.5}
    prof = pd.DataFrame({"attribute": ["a", "b", "a", "b"], "mean": [5, 6, 8, 9],
                         "series": ["detractors", "detractors", "promoters", "promoters"]})
    charts.attribute_profile_chart(prof).to_dict()


def test_roc_chart_thins_survey_sized_curves_keeping_the_end_points():
    n = 7500
    fpr = np.linspace(0, 1, n)
    tpr = np.sqrt(fpr) * 0.8
    curves = pd.concat([pd.DataFrame({"model": m, "fpr": fpr, "tpr": tpr}) for m in ("lr", "nb")])
    spec = charts.roc_chart(curves, max_points=500).to_dict()  # no MaxRowsError
    values = max(_datasets(spec), key=len)
    lr = [v for v in values if v["model"] == "lr"]
    # at most max_points per model (vertices spaced along the curve; a few coincide)
    assert 450 <= len(lr) <= 500 and len(values) == 2 * len(lr)
    assert (lr[0]["fpr"], lr[0]["tpr"]) == (0.0, 0.0)
    assert lr[-1]["fpr"] == 1.0 and lr[-1]["tpr"] == pytest.approx(0.8)
    assert all(a["fpr"] <= b["fpr"] for a, b in zip(lr[:-1], lr[1:], strict=True))


def test_the_empty_im_corner_of_a_level_frame_is_not_drawn():
    frame = pd.DataFrame([[30, 5, 2], [4, 50, 9], [2, 9, None]],
                         index=["d", "pp", "IM"], columns=["d", "pp", "IM"]).astype("Int64")
    long = charts.matrix_to_long(frame)
    assert len(long) == 8 and ("IM", "IM") not in set(zip(long["actual"], long["predicted"], strict=True))
    (values,) = _datasets(charts.confusion_heatmap(frame).to_dict())
    assert all(v["count"] is not None for v in values)


def test_an_original_matrix_has_no_im_layer_or_legend():
    frame = pd.DataFrame([[3, 1], [0, 4]], index=[0, 1], columns=[0, 1])
    spec = charts.confusion_heatmap(frame).to_dict()
    assert not any("oranges" in str(layer.get("encoding")) for layer in spec["layer"])


def test_nps_bars_axis_fits_the_intervals_and_keeps_zero():
    frame = pd.DataFrame({"group": ["A", "B"], "nps": [32.0, 24.0], "ci_low": [28.0, 19.5],
                          "ci_high": [36.0, 28.5], "n": [900, 850]})
    spec = charts.nps_bars(frame).to_dict()
    # bars start at zero, so 0 stays in; the top is the widest interval end plus 5 points
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-5.0, 41.0]
    low = frame.assign(nps=[-90.0, -80.0], ci_low=[-99.0, -88.0], ci_high=[-85.0, -70.0])
    domain = charts.nps_bars(low).to_dict()["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert domain == [-100.0, 5.0]  # never beyond the scale's −100


def test_nps_bars_colour_segments_by_their_significance_flag():
    frame = pd.DataFrame({"group": ["A", "B", "C"], "nps": [30.0, 5.0, 10.0],
                          "ci_low": [25.0, 0.0, 5.0], "ci_high": [35.0, 10.0, 15.0],
                          "n": [500] * 3,
                          "flag": ["significantly above the rest", "significantly below the rest",
                                   "no significant difference"]})
    colour = charts.nps_bars(frame).to_dict()["layer"][0]["encoding"]["color"]
    assert colour["field"] == "flag"
    assert dict(zip(colour["scale"]["domain"], colour["scale"]["range"], strict=True)) == {
        "significantly above the rest": "#2166ac",  # blue / orange: direction, not red / green
        "significantly below the rest": "#e08214",
        "no significant difference": "#b8bec2"}


def test_trend_marks_only_significant_changes_and_fits_its_axis():
    frame = pd.DataFrame({"wave": ["W1", "W2", "W3"], "nps": [20.0, 21.0, 30.0],
                          "ci_low": [17.0, 18.0, 27.0], "ci_high": [23.0, 24.0, 33.0],
                          "n": [900] * 3,
                          "flag": ["no significant difference", "no significant difference",
                                   "significant rise"]})
    spec = charts.nps_trend_chart(frame).to_dict()
    assert len(spec["layer"]) == 3
    marks = [v for v in _datasets(spec) if len(v) == 1]
    assert [(m["wave"], m["mark"]) for m in marks[0]] == [("W3", "▲")]
    assert spec["layer"][1]["encoding"]["y"]["scale"]["domain"] == [12.0, 38.0]
    # nothing significant: no mark layer at all
    calm = frame.assign(flag="no significant difference")
    assert len(charts.nps_trend_chart(calm).to_dict()["layer"]) == 2


def test_attribute_profile_has_no_line_between_attributes():
    prof = pd.DataFrame({"attribute": ["a", "b", "a", "b"], "mean": [5.0, 6.0, 8.0, 9.5],
                         "series": ["detractors", "detractors", "promoters", "promoters"]})
    spec = charts.attribute_profile_chart(prof).to_dict()
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
             for layer in spec["layer"]]
    assert "line" not in marks
    assert marks == ["rule", "circle"]
    spans = next(v for v in _datasets(spec) if "low" in v[0])
    assert [(s["attribute"], s["low"], s["high"]) for s in spans] == [("a", 5.0, 8.0),
                                                                      ("b", 6.0, 9.5)]


def test_importance_bars_show_direction():
    frame = pd.DataFrame({"attribute": ["network", "price"], "importance": [40.0, 10.0],
                          "ci_low": [40.0, 10.0], "ci_high": [40.0, 10.0],
                          "direction": [1.0, -1.0]})
    spec = charts.importance_bars(frame).to_dict()
    (values,) = [v for v in _datasets(spec)]
    assert {v["attribute"]: v["direction"] for v in values} == {
        "network": "higher rating, higher score", "price": "higher rating, lower score"}
    assert spec["layer"][0]["encoding"]["color"]["field"] == "direction"


def test_pvalue_heatmap_for_nine_models_stays_on_the_page():
    models = [f"model {i}" for i in range(9)]
    rows = [{"test": t, "model_a": a, "model_b": b, "p_value": 0.5, "mean_difference": 0.0}
            for t in ("plain", "corrected") for a in models for b in models if a != b]
    spec = charts.pvalue_heatmap(pd.DataFrame(rows)).to_dict()
    assert "row" in spec["facet"] and "column" not in spec["facet"]  # panels stacked
    assert spec["spec"]["width"] <= 480 and spec["spec"]["height"] <= 480


def test_random_selection_lines_end_at_each_curves_last_tpr():
    lines = charts.random_selection_lines({"lr": 0.75, "random": 1})
    assert lines.to_dict(orient="list") == {"model": ["lr", "lr", "random", "random"],
                                            "fpr": [0.0, 1.0, 0.0, 1.0],
                                            "tpr": [0.0, 0.75, 0.0, 1.0]}
    assert charts.random_selection_lines({}).columns.tolist() == ["model", "fpr", "tpr"]


def test_the_t_test_heatmap_colours_a_significant_pair_by_the_better_model():
    """Blue: the row model is better; orange: the column model; grey: no significant
    difference (not red / green, which read as bad / good); an error metric flips it."""
    rows = pd.DataFrame({"test": ["corrected"] * 4, "model_a": ["lr", "nb", "lr", "rf"],
                         "model_b": ["nb", "lr", "rf", "lr"], "p_value": [0.01, 0.01, 0.3, 0.3],
                         "mean_difference": [0.05, -0.05, 0.01, -0.01]})

    def colours(spec: dict) -> dict[tuple[str, str], str]:
        encoding = spec["spec"]["layer"][0]["encoding"]["color"]
        assert encoding["legend"] is not None and "p below 0.05" in encoding["title"]
        palette = dict(zip(encoding["scale"]["domain"], encoding["scale"]["range"], strict=True))
        assert set(palette.values()) == {"#2166ac", "#e08214", "#b8bec2"}
        values = next(iter(spec["datasets"].values()))
        return {(v["model_a"], v["model_b"]): palette[v["verdict"]] for v in values}

    shown = colours(charts.pvalue_heatmap(rows).to_dict())
    assert shown == {("lr", "nb"): "#2166ac", ("nb", "lr"): "#e08214",
                     ("lr", "rf"): "#b8bec2", ("rf", "lr"): "#b8bec2"}
    flipped = colours(charts.pvalue_heatmap(rows, lower_is_better=True).to_dict())
    assert flipped[("lr", "nb")] == "#e08214" and flipped[("nb", "lr")] == "#2166ac"
    assert charts.PAIR_VERDICTS[0].startswith("row model")


def _without_data_names(spec: dict) -> tuple[str, list]:
    """The spec's JSON with its dataset names blanked, and its datasets' rows (in order)."""
    import json

    names = {name: "data" for name in spec.get("datasets", {})}
    text = json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True)
    for name in names:
        text = text.replace(f'"{name}"', '"data"')
    return text, list(spec.get("datasets", {}).values())


@pytest.mark.parametrize("build", [
    lambda: charts.confusion_heatmap(_matrix_with_im(), title="2x2+IM", count_format=",.1f"),
    lambda: charts.nps_trend_chart(pd.DataFrame({
        "wave": ["W1", "W2", "W1", "W2"], "series": ["All", "All", "North", "North"],
        "n": [100, 120, 40, 50], "nps": [10.0, 20.0, 5.0, 25.0], "ci_low": [2.0, 12.0, -9, 11],
        "ci_high": [18.0, 28.0, 19.0, 39.0], "realized": [None, 21.5, None, None],
        "flag": ["", "significant rise", "", ""]})),
])
def test_vega_lite_spec_is_the_spec_streamlit_draws(build):
    """What a page caches and draws with ``st.vega_lite_chart`` is what ``st.altair_chart``
    draws: Streamlit's own conversion of the chart (its private helper, as the reference),
    but for the datasets' names (a hash either way) and their form (rows, Arrow there)."""
    import pyarrow as pa
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

    chart = build()
    ours = chart_specs.vega_lite_spec(chart)
    theirs = _convert_altair_to_vega_lite_spec(chart)
    theirs["datasets"] = {name: pa.ipc.open_stream(data).read_all().to_pylist()
                          for name, data in theirs["datasets"].items()}
    assert "config" not in ours  # no 300 × 300 view of Altair's default theme
    (ours_text, ours_rows), (theirs_text, theirs_rows) = map(_without_data_names, (ours, theirs))
    assert ours_text == theirs_text
    assert len(ours_rows) == len(theirs_rows) >= 1
    for mine, reference in zip(ours_rows, theirs_rows, strict=True):
        assert pd.DataFrame(mine).equals(pd.DataFrame(reference).astype(pd.DataFrame(
            mine).dtypes.to_dict()))
    assert alt.theme.active == "default"  # nothing process-wide was changed
