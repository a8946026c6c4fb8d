"""Altair chart builders: tidy DataFrames in, ``alt.Chart`` out.

Pure functions with no streamlit import, so that the app and the reports draw the same charts.
Each builder documents the columns it reads; labels from the survey (attribute names, operator
names, class labels) are data values, never markup, so they are shown literally.

Confusion matrices follow the project's orientation: rows = actual class (y axis), columns =
predicted class (x axis). The intragroup-mismatch (IM) row and column are drawn in a separate
colour scale and outlined, so that they cannot be mistaken for ordinary cells.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from cx_app.engine.roc import thin_curve as roc_thin_curve

__all__ = [
    "CATEGORY_COLOURS",
    "attribute_profile_chart",
    "auc_bars",
    "confusion_heatmap",
    "importance_bars",
    "matrix_to_long",
    "nps_bars",
    "nps_trend_chart",
    "pvalue_heatmap",
    "quadrant_chart",
    "rhombus_chart",
    "roc_chart",
    "score_distribution_chart",
    "thin_curve",
]

CATEGORY_COLOURS: tuple[str, ...] = ("#c0392b", "#9aa5ab", "#2e8b57", "#1f6f8b", "#8e6c8a")
"""Colours for the first-step groups in scale order: detractors red, passives grey, promoters
green (and two more for plans with more groups)."""

_IM_COLOUR_SCHEME = "oranges"
_CELL_COLOUR_SCHEME = "blues"


def _labels_as_text(values: Sequence[object]) -> list[str]:
    return [str(v) for v in values]


# --------------------------------------------------------------------------- NPS


def _band_height(chart, n: int, step: int = 34, minimum: int = 90):
    """A chart with one band per category on y: ``step`` pixels per band, whatever the host does
    with the width. ``fit-x``: the width follows the page (Streamlit's ``width="stretch"``)
    while the height is the plot's own, so the bands are never squeezed into a fixed total
    height together with the axis and its title."""
    return chart.properties(height=max(minimum, step * n),
                            autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


_BAND_AXIS = alt.Axis(labelLimit=260, labelOverlap=False)


def nps_bars(frame: pd.DataFrame, *, group_title: str = "Group") -> alt.LayerChart:
    """NPS per group with its 95% interval.

    Columns: ``group``, ``nps``, ``ci_low``, ``ci_high``, ``n``.
    """
    data = frame.assign(group=frame["group"].astype(str))
    order = data.sort_values("nps", ascending=False)["group"].tolist()
    y = alt.Y("group:N", sort=order, title=group_title, axis=_BAND_AXIS)
    tooltip = [
        alt.Tooltip("group:N", title=group_title),
        alt.Tooltip("nps:Q", title="NPS", format=".1f"),
        alt.Tooltip("ci_low:Q", title="95% low", format=".1f"),
        alt.Tooltip("ci_high:Q", title="95% high", format=".1f"),
        alt.Tooltip("n:Q", title="Respondents", format=","),
    ]
    bars = alt.Chart(data).mark_bar(color=CATEGORY_COLOURS[3], opacity=0.8).encode(
        x=alt.X("nps:Q", title="NPS (95% interval)", scale=alt.Scale(domain=[-100, 100])),
        y=y,
        tooltip=tooltip,
    )
    whiskers = alt.Chart(data).mark_rule(color="#1b1f23", strokeWidth=1.5).encode(
        x="ci_low:Q", x2="ci_high:Q", y=y, tooltip=tooltip
    )
    return _band_height(alt.layer(bars, whiskers), len(order))


def nps_trend_chart(frame: pd.DataFrame, *, wave_title: str = "Wave") -> alt.LayerChart:
    """NPS per wave, one line per series, with a 95% interval band.

    Columns: ``wave`` (ordered as given), ``nps``, ``ci_low``, ``ci_high``, ``n``, and
    optionally ``series`` (e.g. the operator; absent = one line).
    """
    data = frame.copy()
    if "series" not in data:
        data["series"] = "All respondents"
    data["wave"] = data["wave"].astype(str)
    data["series"] = data["series"].astype(str)
    order = list(dict.fromkeys(data["wave"]))
    x = alt.X("wave:O", sort=order, title=wave_title)
    colour = alt.Color("series:N", title=None)
    tooltip = [
        alt.Tooltip("series:N", title="Series"),
        alt.Tooltip("wave:O", title=wave_title),
        alt.Tooltip("nps:Q", title="NPS", format=".1f"),
        alt.Tooltip("ci_low:Q", title="95% low", format=".1f"),
        alt.Tooltip("ci_high:Q", title="95% high", format=".1f"),
        alt.Tooltip("n:Q", title="Respondents", format=","),
    ]
    band = alt.Chart(data).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("ci_low:Q", title="NPS"), y2="ci_high:Q", color=colour
    )
    line = alt.Chart(data).mark_line(point=True).encode(
        x=x, y=alt.Y("nps:Q", title="NPS"), color=colour, tooltip=tooltip
    )
    return alt.layer(band, line).properties(height=300)


def score_distribution_chart(
    frame: pd.DataFrame, *, categories: Sequence[str] | None = None, score_title: str = "Score"
) -> alt.Chart:
    """Respondents per score, coloured by the score's group (detractor / passive / promoter).

    Columns: ``score``, ``count``, ``category``; optionally ``share`` (0–1). ``categories``
    fixes the colour order (default: order of appearance).
    """
    data = frame.copy()
    data["score"] = data["score"].astype(str)
    data["category"] = data["category"].astype(str)
    if "share" not in data:
        total = data["count"].sum()
        data["share"] = data["count"] / total if total else 0.0
    domain = list(categories) if categories is not None else list(dict.fromkeys(data["category"]))
    colours = list(CATEGORY_COLOURS[: len(domain)])
    if len(domain) > len(colours):
        colours = None  # let Vega pick
    scale = alt.Scale(domain=domain, range=colours) if colours else alt.Scale(domain=domain)
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("score:O", sort=list(dict.fromkeys(data["score"])), title=score_title),
        y=alt.Y("count:Q", title="Respondents"),
        color=alt.Color("category:N", scale=scale, title=None, sort=domain),
        tooltip=[
            alt.Tooltip("score:O", title=score_title),
            alt.Tooltip("category:N", title="Group"),
            alt.Tooltip("count:Q", title="Respondents", format=","),
            alt.Tooltip("share:Q", title="Share", format=".1%"),
        ],
    ).properties(height=280)


def attribute_profile_chart(frame: pd.DataFrame, *, value_title: str = "Mean score") -> alt.Chart:
    """Mean attribute scores, one coloured line of points per series (e.g. per NPS group).

    Columns: ``attribute``, ``mean``, ``series``; attributes and series keep their order of
    appearance.
    """
    data = frame.assign(attribute=frame["attribute"].astype(str), series=frame["series"].astype(str))
    order = list(dict.fromkeys(data["attribute"]))
    data["attribute_order"] = data["attribute"].map({a: i for i, a in enumerate(order)})
    series = list(dict.fromkeys(data["series"]))
    colours = list(CATEGORY_COLOURS[: len(series)]) if len(series) <= len(CATEGORY_COLOURS) else None
    scale = alt.Scale(domain=series, range=colours) if colours else alt.Scale(domain=series)
    chart = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=70)).encode(
        y=alt.Y("attribute:N", sort=order, title=None, axis=_BAND_AXIS),
        x=alt.X("mean:Q", title=value_title, scale=alt.Scale(zero=False)),
        color=alt.Color("series:N", scale=scale, title=None, sort=series),
        order=alt.Order("attribute_order:Q"),
        tooltip=[
            alt.Tooltip("series:N", title="Series"),
            alt.Tooltip("attribute:N", title="Attribute"),
            alt.Tooltip("mean:Q", title=value_title, format=".2f"),
        ],
    )
    return _band_height(chart, len(order), 30, 120)


# --------------------------------------------------------------------------- confusion matrices


def matrix_to_long(matrix: pd.DataFrame, *, im_label: str = "IM") -> pd.DataFrame:
    """A square matrix frame (index = actual, columns = predicted, possibly with an IM row and
    column named ``im_label``) → long rows ``actual, predicted, count, row_share, kind``.

    ``kind`` is ``"correct"`` on the diagonal, ``"error"`` off it and ``"IM"`` in the IM row
    and column; ``row_share`` is the count over its row total (IM column included). Empty
    (NaN) cells, such as the IM × IM corner, are left out.
    """
    actual = _labels_as_text(matrix.index)
    predicted = _labels_as_text(matrix.columns)
    values = matrix.to_numpy(dtype=float)
    rows = []
    for i, a in enumerate(actual):
        total = np.nansum(values[i])
        for j, p in enumerate(predicted):
            count = float(values[i, j])
            if np.isnan(count):  # the empty IM × IM corner of a reduced level
                continue
            if a == im_label or p == im_label:
                kind = "IM"
            elif a == p:
                kind = "correct"
            else:
                kind = "error"
            rows.append({
                "actual": a, "predicted": p, "count": count,
                "row_share": count / total if total else 0.0, "kind": kind,
            })
    return pd.DataFrame(rows)


def confusion_heatmap(
    matrix: pd.DataFrame, *, title: str | None = None, im_label: str = "IM",
    count_format: str = ",.0f", cell_size: int | None = None,
) -> alt.LayerChart:
    """Heatmap of a confusion matrix: rows = actual (y), columns = predicted (x).

    ``matrix``: square frame, index = actual labels, columns = predicted labels, optionally an
    IM row and column named ``im_label``. Ordinary cells are shaded blue by their row share;
    IM cells orange with a dark outline; the diagonal is outlined. Counts are printed in the
    cells (real-valued ALP matrices: pass ``count_format=",.1f"``).
    """
    data = matrix_to_long(matrix, im_label=im_label)
    actual_order = _labels_as_text(matrix.index)
    predicted_order = _labels_as_text(matrix.columns)
    size = cell_size or (34 if len(predicted_order) > 6 else 72)
    short = max(len(p) for p in predicted_order) <= 3
    x = alt.X("predicted:N", sort=predicted_order, title="Predicted",
              axis=alt.Axis(orient="top", labelAngle=0 if short else -30, labelLimit=200,
                            labelOverlap=False))
    y = alt.Y("actual:N", sort=actual_order, title="Actual",
              axis=alt.Axis(labelLimit=200, labelOverlap=False))
    tooltip = [
        alt.Tooltip("actual:N", title="Actual"),
        alt.Tooltip("predicted:N", title="Predicted"),
        alt.Tooltip("count:Q", title="Count", format=count_format),
        alt.Tooltip("row_share:Q", title="Share of actual row", format=".1%"),
        alt.Tooltip("kind:N", title="Cell"),
    ]
    base = alt.Chart(data)
    cells = base.transform_filter(alt.datum.kind != "IM").mark_rect().encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("row_share:Q", title="Share of row",
                        scale=alt.Scale(scheme=_CELL_COLOUR_SCHEME, domain=[0, 1]),
                        legend=alt.Legend(format=".0%")),
    )
    diagonal = base.transform_filter(alt.datum.kind == "correct").mark_rect(
        fill=None, stroke="#1b1f23", strokeWidth=1.5
    ).encode(x=x, y=y)
    im_max = float(data.loc[data["kind"] == "IM", "count"].max()) if (
        data["kind"] == "IM").any() else 0.0
    im_cells = base.transform_filter(alt.datum.kind == "IM").mark_rect(
        stroke="#7a3e00", strokeWidth=1, strokeDash=[3, 2]
    ).encode(
        x=x, y=y, tooltip=tooltip,
        # from 0, so that an empty IM row is pale, never mid-orange; no legend when it is empty
        color=alt.Color("count:Q", title="IM count",
                        scale=alt.Scale(scheme=_IM_COLOUR_SCHEME, domain=[0, max(im_max, 1.0)]),
                        legend=alt.Legend(format=count_format, tickCount=4)
                        if im_max > 0 else None),
    )
    text = base.mark_text(fontSize=11 if size < 40 else 13).encode(
        x=x, y=y,
        text=alt.Text("count:Q", format=count_format),
        color=alt.condition(alt.datum.row_share > 0.5, alt.value("white"), alt.value("#1b1f23")),
    )
    layers = [cells, im_cells] if (data["kind"] == "IM").any() else [cells]
    chart = alt.layer(*layers, diagonal, text).resolve_scale(color="independent")
    # "pad": the cells keep their size and axes/legends are added around them (a host that
    # fits the whole chart into a width, as Streamlit does by default, would shrink the cells)
    props: dict = {"width": size * len(predicted_order), "height": size * len(actual_order),
                   "autosize": alt.AutoSizeParams(type="pad", contains="padding")}
    if title:
        props["title"] = title
    return chart.properties(**props)


# --------------------------------------------------------------------------- ROC, AUC, tests


def thin_curve(curve: pd.DataFrame, max_points: int = 800) -> pd.DataFrame:
    """One model's curve (columns ``fpr``, ``tpr``, in sweep order) with at most
    ``max_points`` of its vertices (:func:`cx_app.engine.roc.thin_curve`): a survey-sized ROC has one
    point per respondent, far more than a chart can show (and Vega-Lite's inline-data limit)."""
    fpr, tpr = roc_thin_curve(curve["fpr"].to_numpy(), curve["tpr"].to_numpy(), max_points)
    out = pd.DataFrame({"fpr": fpr, "tpr": tpr})
    for column in curve.columns.difference(["fpr", "tpr"]):
        out[column] = curve[column].iloc[0]  # per-curve constants such as the model name
    return out


def roc_chart(curves: pd.DataFrame, random_lines: pd.DataFrame | None = None, *,
              title: str | None = None, max_points: int = 800) -> alt.LayerChart:
    """ROC curves, one per ``model``, with each model's random-selection line dashed.

    ``curves`` columns: ``model``, ``fpr``, ``tpr`` (in sweep order); each curve is drawn with
    at most ``max_points`` points (:func:`thin_curve`). ``random_lines`` columns: ``model``,
    ``fpr``, ``tpr`` (two points each: (0,0) and (1, TP_ML/P_actual)).
    """
    data = curves.assign(model=curves["model"].astype(str))
    data = pd.concat([thin_curve(part, max_points) for _, part in
                      data.groupby("model", sort=False)], ignore_index=True)
    data = data.assign(step=range(len(data)))
    # legend in the order given (class 0, 1, …, 10), not alphabetical (0, 1, 10, 2, …)
    names = list(dict.fromkeys(data["model"]))
    if random_lines is not None:
        names += [m for m in dict.fromkeys(random_lines["model"].astype(str)) if m not in names]
    colour = alt.Color("model:N", title="Model", sort=names, scale=alt.Scale(domain=names))
    x = alt.X("fpr:Q", title="False positive rate", scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("tpr:Q", title="True positive rate", scale=alt.Scale(domain=[0, 1]))
    layers = [alt.Chart(data).mark_line(interpolate="linear").encode(
        x=x, y=y, color=colour, order="step:Q",
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("fpr:Q", format=".3f"),
                 alt.Tooltip("tpr:Q", format=".3f")],
    )]
    if random_lines is not None and len(random_lines):
        rnd = random_lines.assign(model=random_lines["model"].astype(str))
        layers.append(alt.Chart(rnd).mark_line(strokeDash=[6, 4], opacity=0.7).encode(
            x=x, y=y, color=colour, detail="model:N",
            tooltip=[alt.Tooltip("model:N", title="Random selection for")],
        ))
    chart = alt.layer(*layers).properties(width=420, height=380)
    return chart.properties(title=title) if title else chart


def auc_bars(frame: pd.DataFrame, *, title: str | None = None) -> alt.LayerChart:
    """AUC per model beside the random-selection line's area.

    Columns: ``model``, ``auc``, ``random_auc``.
    """
    data = frame.assign(model=frame["model"].astype(str))
    long = data.melt(id_vars="model", value_vars=["auc", "random_auc"],
                     var_name="curve", value_name="area")
    long["curve"] = long["curve"].map({"auc": "model ROC", "random_auc": "random selection"})
    bars = alt.Chart(long).mark_bar().encode(
        y=alt.Y("model:N", title=None, axis=_BAND_AXIS,
                sort=data.sort_values("auc", ascending=False)["model"].tolist()),
        yOffset=alt.YOffset("curve:N", sort=["model ROC", "random selection"]),
        x=alt.X("area:Q", title="Area under the curve", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("curve:N", title=None,
                        scale=alt.Scale(domain=["model ROC", "random selection"],
                                        range=[CATEGORY_COLOURS[3], "#c9d1d6"])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("curve:N"), alt.Tooltip("area:Q", format=".3f")],
    )
    chart = _band_height(bars, len(data), 44, 90)
    return chart.properties(title=title) if title else chart


def pvalue_heatmap(frame: pd.DataFrame, *, alpha: float = 0.05) -> alt.FacetChart:
    """Pairwise test matrix: one panel per ``test``; cells coloured by the adjusted p-value,
    significant cells (p < ``alpha``) outlined.

    Columns: ``test`` (e.g. "plain t (Holm)", "corrected t (Holm)"), ``model_a``, ``model_b``,
    ``p_value``, ``mean_difference`` (A − B).
    """
    data = frame.assign(
        model_a=frame["model_a"].astype(str), model_b=frame["model_b"].astype(str),
        significant=frame["p_value"] < alpha,
    )
    models = list(dict.fromkeys([*data["model_a"], *data["model_b"]]))
    base = alt.Chart().encode(
        x=alt.X("model_b:N", sort=models, title="Model B"),
        y=alt.Y("model_a:N", sort=models, title="Model A"),
    )
    cells = base.mark_rect(stroke="#1b1f23").encode(
        color=alt.Color("p_value:Q", title="p (Holm)",
                        scale=alt.Scale(scheme="redyellowgreen", domain=[0, 0.2], clamp=True,
                                        reverse=False)),
        strokeWidth=alt.condition(alt.datum.significant, alt.value(2.5), alt.value(0)),
        tooltip=[alt.Tooltip("model_a:N", title="A"), alt.Tooltip("model_b:N", title="B"),
                 alt.Tooltip("mean_difference:Q", title="mean A − B", format="+.4f"),
                 alt.Tooltip("p_value:Q", title="p (Holm)", format=".4f")],
    )
    text = base.mark_text(fontSize=12).encode(text=alt.Text("p_value:Q", format=".3f"))
    size = max(60, 240 // max(1, len(models)))
    return alt.layer(cells, text, data=data).properties(
        width=size * len(models), height=size * len(models)
    ).facet(column=alt.Column("test:N", title=None))


def rhombus_chart(frame: pd.DataFrame, *, colour_title: str = "Model") -> alt.LayerChart:
    """The φ–δ rhombus (Armano): φ on x, δ on y, the border |φ| + |δ| = 1.

    Columns: ``phi``, ``delta``, ``series`` (colour: the model or attribute) and optionally
    ``label`` (tooltip, e.g. "fold 3").
    """
    data = frame.assign(series=frame["series"].astype(str))
    if "label" not in data:
        data["label"] = data["series"]
    border = pd.DataFrame({"phi": [0, 1, 0, -1, 0], "delta": [1, 0, -1, 0, 1],
                           "order": range(5)})
    axes = pd.DataFrame({"phi": [-1, 1, 0, 0], "delta": [0, 0, -1, 1],
                         "axis": ["x", "x", "y", "y"]})
    scale = alt.Scale(domain=[-1, 1])
    outline = alt.Chart(border).mark_line(color="#9aa5ab").encode(
        x=alt.X("phi:Q", scale=scale, title="φ (characteristic capability)"),
        y=alt.Y("delta:Q", scale=scale, title="δ (discriminant capability)"),
        order="order:Q",
    )
    cross = alt.Chart(axes).mark_line(color="#d5dbdf", strokeDash=[2, 2]).encode(
        x="phi:Q", y="delta:Q", detail="axis:N"
    )
    points = alt.Chart(data).mark_circle(size=70, opacity=0.8).encode(
        x="phi:Q", y="delta:Q",
        color=alt.Color("series:N", title=colour_title),
        tooltip=[alt.Tooltip("series:N", title=colour_title), alt.Tooltip("label:N", title="Point"),
                 alt.Tooltip("phi:Q", title="φ", format=".3f"),
                 alt.Tooltip("delta:Q", title="δ", format=".3f")],
    )
    return alt.layer(outline, cross, points).properties(width=380, height=380)


# --------------------------------------------------------------------------- drivers


def importance_bars(frame: pd.DataFrame, *, value_title: str = "Importance") -> alt.LayerChart:
    """Driver importance with its interval, largest first.

    Columns: ``attribute``, ``importance``, ``ci_low``, ``ci_high``.
    """
    data = frame.assign(attribute=frame["attribute"].astype(str))
    order = data.sort_values("importance", ascending=False)["attribute"].tolist()
    y = alt.Y("attribute:N", sort=order, title=None, axis=_BAND_AXIS)
    tooltip = [alt.Tooltip("attribute:N", title="Attribute"),
               alt.Tooltip("importance:Q", title=value_title, format=".4f"),
               alt.Tooltip("ci_low:Q", title="low", format=".4f"),
               alt.Tooltip("ci_high:Q", title="high", format=".4f")]
    bars = alt.Chart(data).mark_bar(color=CATEGORY_COLOURS[3], opacity=0.85).encode(
        x=alt.X("importance:Q", title=value_title), y=y, tooltip=tooltip
    )
    whiskers = alt.Chart(data).mark_rule(color="#1b1f23").encode(
        x="ci_low:Q", x2="ci_high:Q", y=y, tooltip=tooltip
    )
    return _band_height(alt.layer(bars, whiskers), len(order), 30)


def quadrant_chart(frame: pd.DataFrame, *, importance_title: str = "Importance",
                   performance_title: str = "Mean score") -> alt.LayerChart:
    """Importance–performance quadrant: performance on x, importance on y, lines at the means.

    Columns: ``attribute``, ``importance``, ``performance``. Top-left (important, weak) is
    where to act first.
    """
    data = frame.assign(attribute=frame["attribute"].astype(str))
    means = pd.DataFrame({"importance": [data["importance"].mean()],
                          "performance": [data["performance"].mean()]})
    x = alt.X("performance:Q", title=performance_title, scale=alt.Scale(zero=False, padding=20))
    y = alt.Y("importance:Q", title=importance_title, scale=alt.Scale(zero=False, padding=20))
    points = alt.Chart(data).mark_circle(size=90, color=CATEGORY_COLOURS[3]).encode(
        x=x, y=y,
        tooltip=[alt.Tooltip("attribute:N", title="Attribute"),
                 alt.Tooltip("importance:Q", title=importance_title, format=".4f"),
                 alt.Tooltip("performance:Q", title=performance_title, format=".2f")],
    )
    labels = alt.Chart(data).mark_text(align="left", dx=7, fontSize=11).encode(
        x=x, y=y, text="attribute:N"
    )
    vline = alt.Chart(means).mark_rule(strokeDash=[4, 4], color="#9aa5ab").encode(x="performance:Q")
    hline = alt.Chart(means).mark_rule(strokeDash=[4, 4], color="#9aa5ab").encode(y="importance:Q")
    return alt.layer(vline, hline, points, labels).properties(height=380)
