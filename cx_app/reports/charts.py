"""Altair chart builders: tidy DataFrames in, ``alt.Chart`` out.

The app and the reports draw the same charts; survey labels are data values, never markup, cut
to :data:`~cx_app.safe_text.LABEL_LIMIT` characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from cx_app.engine.roc import thin_curve
from cx_app.reports.chart_style import (
    BAND_AXIS,
    CATEGORY_COLOURS,
    CELL_COLOUR_SCHEME,
    HIGHER_COLOUR,
    IM_COLOUR_SCHEME,
    LOWER_COLOUR,
    NO_DIFFERENCE_COLOUR,
    band_height,
    chart_labels,
    fitted_domain,
    labels_as_text,
)
from cx_app.safe_text import plain_spec

__all__ = [
    "attribute_profile_chart",
    "auc_bars",
    "chart_png",
    "confusion_heatmap",
    "importance_bars",
    "matrix_to_long",
    "nps_bars",
    "nps_trend_chart",
    "pvalue_heatmap",
    "quadrant_chart",
    "random_selection_lines",
    "rhombus_chart",
    "roc_chart",
    "score_distribution_chart",
]

FLAG_COLOURS: dict[str, str] = {
    "significantly above the rest": HIGHER_COLOUR,
    "significantly below the rest": LOWER_COLOUR,
    "significant rise": HIGHER_COLOUR,
    "significant fall": LOWER_COLOUR,
    "no significant difference": NO_DIFFERENCE_COLOUR,
}
"""Bar colours by flag: the direction (blue higher, orange lower), never good/bad."""


def _score_tooltips(score_title: str) -> list[alt.Tooltip]:
    return [alt.Tooltip("nps:Q", title=score_title, format=".1f"),
            alt.Tooltip("ci_low:Q", title="95% low", format=".1f"),
            alt.Tooltip("ci_high:Q", title="95% high", format=".1f"),
            alt.Tooltip("n:Q", title="Respondents", format=",")]


def nps_bars(frame: pd.DataFrame, *, group_title: str = "Group",
             score_title: str = "NPS",
             flag_title: str = "Against the other respondents (Holm, 5%)") -> alt.LayerChart:
    """A net score per group with its 95% interval, on an axis fitted to the intervals.

    Columns: ``group``, ``nps``, ``ci_low``, ``ci_high``, ``n``; optionally ``flag``
    (:mod:`cx_app.survey.nps_flags`, named by ``flag_title``) colouring the bars.
    """
    data = frame.assign(group=chart_labels(frame["group"]))
    order = data.sort_values("nps", ascending=False)["group"].tolist()
    y = alt.Y("group:N", sort=order, title=group_title, axis=BAND_AXIS)
    tooltip = [alt.Tooltip("group:N", title=group_title), *_score_tooltips(score_title)]
    if "flag" in data:
        tooltip.append(alt.Tooltip("flag:N", title=flag_title))
        colour = _colour_by(data, "flag", flag_title, FLAG_COLOURS,
                            alt.Legend(orient="bottom", direction="vertical"))
    else:
        colour = alt.value(CATEGORY_COLOURS[3])
    x = alt.X("nps:Q", title=f"{score_title} (95% interval)",
              scale=alt.Scale(domain=fitted_domain(data["ci_low"], data["ci_high"])))
    return band_height(_bars_with_whiskers(data, x, y, colour, tooltip, 1.5), len(order))


def _colour_by(data: pd.DataFrame, field: str, title: str, colours: Mapping[str, str],
               legend: alt.Legend) -> alt.Color:
    domain = [d for d in colours if d in set(data[field])]
    return alt.Color(f"{field}:N", title=title, legend=legend,
                     scale=alt.Scale(domain=domain, range=[colours[d] for d in domain]))


def _bars_with_whiskers(data: pd.DataFrame, x: alt.X, y: alt.Y, colour: alt.Color,
                        tooltip: list, width: float | None = None) -> alt.LayerChart:
    bars = alt.Chart(data).mark_bar(opacity=0.85).encode(x=x, y=y, color=colour, tooltip=tooltip)
    whiskers = alt.Chart(data).mark_rule(color="#1b1f23", strokeWidth=width or alt.Undefined)
    return alt.layer(bars, whiskers.encode(x="ci_low:Q", x2="ci_high:Q", y=y, tooltip=tooltip))


TREND_MARKS: dict[str, str] = {"significant rise": "▲", "significant fall": "▼"}


def nps_trend_chart(frame: pd.DataFrame, *, wave_title: str = "Wave",
                    score_title: str = "NPS") -> alt.LayerChart:
    """A net score per wave, one line per series, with a 95% interval band.

    Columns: ``wave`` (ordered as given), ``nps``, ``ci_low``, ``ci_high``, ``n``; optionally
    ``series``, ``flag`` (a significant change marked ▲ / ▼) and ``realized`` (a diamond).
    """
    data = frame.copy()
    if "series" not in data:
        data["series"] = "All respondents"
    data["wave"] = chart_labels(data["wave"])
    data["series"] = chart_labels(data["series"])
    order = list(dict.fromkeys(data["wave"]))
    x = alt.X("wave:O", sort=order, title=wave_title)
    colour = alt.Color("series:N", title=None)
    scale = alt.Scale(domain=fitted_domain(data["ci_low"], data["ci_high"], include_zero=False))
    tooltip = [alt.Tooltip("series:N", title="Series"), alt.Tooltip("wave:O", title=wave_title),
               *_score_tooltips(score_title)]
    if "flag" in data:
        tooltip.append(alt.Tooltip("flag:N", title="Since the previous wave"))
    band = alt.Chart(data).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("ci_low:Q", title=score_title, scale=scale), y2="ci_high:Q", color=colour
    )
    line = alt.Chart(data).mark_line(point=True).encode(
        x=x, y=alt.Y("nps:Q", title=score_title, scale=scale), color=colour, tooltip=tooltip
    )
    layers = [band, line]
    if "flag" in data:
        marked = data[data["flag"].isin(list(TREND_MARKS))].assign(
            mark=lambda f: f["flag"].map(TREND_MARKS))
        if len(marked):
            layers.append(alt.Chart(marked).mark_text(dy=-14, fontSize=14).encode(
                x=x, y=alt.Y("nps:Q", scale=scale), text="mark:N", color=colour,
                tooltip=tooltip))
    realized = data[pd.to_numeric(data["realized"], errors="coerce").notna()] if (
        "realized" in data) else data.iloc[:0]
    if len(realized):  # a labelled wave: its own score beside the estimate
        layers.append(alt.Chart(realized).mark_point(shape="diamond", size=90, filled=True,
                                                     opacity=0.9).encode(
            x=x, y=alt.Y("realized:Q", scale=scale), color=colour,
            tooltip=[alt.Tooltip("series:N", title="Series"),
                     alt.Tooltip("wave:O", title=wave_title),
                     alt.Tooltip("realized:Q", title=f"Realized {score_title}", format=".1f")]))
    return alt.layer(*layers).properties(height=300)


def score_distribution_chart(
    frame: pd.DataFrame, *, categories: Sequence[str] | None = None, score_title: str = "Score"
) -> alt.Chart:
    """Respondents per score, coloured by the score's group (detractor / passive / promoter).

    Columns: ``score``, ``count``, ``category``; optionally ``share`` (0–1).
    """
    data = frame.copy()
    data["score"] = chart_labels(data["score"])
    data["category"] = chart_labels(data["category"])
    if "share" not in data:
        total = data["count"].sum()
        data["share"] = data["count"] / total if total else 0.0
    domain = (labels_as_text(categories) if categories is not None
              else list(dict.fromkeys(data["category"])))
    colours = list(CATEGORY_COLOURS[: len(domain)])
    fits = colours and len(domain) <= len(colours)  # else Vega's own colours
    scale = alt.Scale(domain=domain, range=colours) if fits else alt.Scale(domain=domain)
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


def attribute_profile_chart(frame: pd.DataFrame, *, value_title: str = "Mean score") -> alt.LayerChart:
    """Mean attribute scores, one point per series on each attribute's row, a rule spanning
    them. Attributes are separate questions, so no line joins one to the next.

    Columns: ``attribute``, ``mean``, ``series``.
    """
    data = frame.assign(attribute=chart_labels(frame["attribute"]), series=chart_labels(frame["series"]))
    order = list(dict.fromkeys(data["attribute"]))
    series = list(dict.fromkeys(data["series"]))
    colours = list(CATEGORY_COLOURS[: len(series)]) if len(series) <= len(CATEGORY_COLOURS) else None
    scale = alt.Scale(domain=series, range=colours) if colours else alt.Scale(domain=series)
    y = alt.Y("attribute:N", sort=order, title=None, axis=BAND_AXIS)
    x_scale = alt.Scale(zero=False, padding=12)
    spans = (data.groupby("attribute", sort=False)["mean"].agg(["min", "max"])
             .reset_index().rename(columns={"min": "low", "max": "high"}))
    span = alt.Chart(spans).mark_rule(color="#c9d1d6", strokeWidth=3).encode(
        y=y, x=alt.X("low:Q", title=value_title, scale=x_scale), x2="high:Q",
    )
    points = alt.Chart(data).mark_circle(size=90, opacity=0.95).encode(
        y=y,
        x=alt.X("mean:Q", title=value_title, scale=x_scale),
        color=alt.Color("series:N", scale=scale, title=None, sort=series),
        tooltip=[
            alt.Tooltip("series:N", title="Series"),
            alt.Tooltip("attribute:N", title="Attribute"),
            alt.Tooltip("mean:Q", title=value_title, format=".2f"),
        ],
    )
    return band_height(alt.layer(span, points), len(order), 30, 120)


def matrix_to_long(matrix: pd.DataFrame) -> pd.DataFrame:
    """A square matrix frame (index = actual) → long rows ``actual, predicted, count,
    row_share, kind`` (``correct``, ``error`` or ``IM``); empty (NaN) cells are left out.
    """
    values = pd.DataFrame(matrix.to_numpy(dtype=float),
                          index=pd.Index(labels_as_text(matrix.index), name="actual"),
                          columns=pd.Index(labels_as_text(matrix.columns), name="predicted"))
    # NaN: the empty IM × IM corner of a reduced level
    long = values.stack().dropna().rename("count").reset_index()
    long["row_share"] = (long["count"] / long["actual"].map(values.sum(axis=1))).fillna(0.0)
    long["kind"] = np.select([(long["actual"] == "IM") | (long["predicted"] == "IM"),
                              long["actual"] == long["predicted"]], ["IM", "correct"], "error")
    return long


def confusion_heatmap(
    matrix: pd.DataFrame, *, title: str | None = None, count_format: str = ",.0f",
) -> alt.LayerChart:
    """Heatmap of a confusion matrix: rows = actual (y), columns = predicted (x). The IM row
    and column get their own colour scale and outline, so that they cannot be mistaken for
    ordinary cells.
    """
    data = matrix_to_long(matrix)
    actual_order = labels_as_text(matrix.index)
    predicted_order = labels_as_text(matrix.columns)
    size = 34 if len(predicted_order) > 6 else 72
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
                        scale=alt.Scale(scheme=CELL_COLOUR_SCHEME, domain=[0, 1]),
                        legend=alt.Legend(format=".0%")),
    )
    diagonal = base.transform_filter(alt.datum.kind == "correct").mark_rect(
        fill=None, stroke="#1b1f23", strokeWidth=1.5
    ).encode(x=x, y=y)
    im_counts = data.loc[data["kind"] == "IM", "count"]
    im_max = float(max(im_counts, default=0.0))
    im_cells = base.transform_filter(alt.datum.kind == "IM").mark_rect(
        stroke="#7a3e00", strokeWidth=1, strokeDash=[3, 2]
    ).encode(
        x=x, y=y, tooltip=tooltip,
        # from 0, so that an empty IM row is pale, never mid-orange; no legend when it is empty
        color=alt.Color("count:Q", title="mismatch count (IM)",
                        scale=alt.Scale(scheme=IM_COLOUR_SCHEME, domain=[0, max(im_max, 1.0)]),
                        legend=alt.Legend(format=count_format, tickCount=4)
                        if im_max > 0 else None),
    )
    text = base.mark_text(fontSize=11 if size < 40 else 13).encode(
        x=x, y=y,
        text=alt.Text("count:Q", format=count_format),
        color=alt.condition(alt.datum.row_share > 0.5, alt.value("white"), alt.value("#1b1f23")),
    )
    layers = [cells, im_cells] if len(im_counts) else [cells]
    chart = alt.layer(*layers, diagonal, text).resolve_scale(color="independent")
    # "pad": the cells keep their size and axes/legends are added around them (a host that
    # fits the whole chart into a width, as Streamlit does by default, would shrink the cells)
    props: dict = {"width": size * len(predicted_order), "height": size * len(actual_order),
                   "autosize": alt.AutoSizeParams(type="pad", contains="padding")}
    if title:
        props["title"] = title
    return chart.properties(**props)


def random_selection_lines(ends: Mapping[str, float]) -> pd.DataFrame:
    """Each ROC curve's random-selection line, from (0, 0) to (1, the TPR where it ends).

    >>> random_selection_lines({"lr": 0.8}).to_dict(orient="records")
    [{'model': 'lr', 'fpr': 0.0, 'tpr': 0.0}, {'model': 'lr', 'fpr': 1.0, 'tpr': 0.8}]
    """
    return pd.DataFrame([{"model": m, "fpr": fpr, "tpr": tpr} for m, end in ends.items()
                         for fpr, tpr in ((0.0, 0.0), (1.0, float(end)))],
                        columns=["model", "fpr", "tpr"])


def roc_chart(curves: pd.DataFrame, random_lines: pd.DataFrame | None = None, *,
              title: str | None = None, max_points: int = 800) -> alt.LayerChart:
    """ROC curves (columns ``model``, ``fpr``, ``tpr`` in sweep order), random lines dashed;
    at most ``max_points`` vertices per curve (a survey's ROC has one point per respondent)."""
    frames = []
    for model, part in curves.assign(model=chart_labels(curves["model"])).groupby(
            "model", sort=False):
        fpr, tpr = thin_curve(part["fpr"].to_numpy(), part["tpr"].to_numpy(), max_points)
        frames.append(pd.DataFrame({"model": model, "fpr": fpr, "tpr": tpr}))
    data = pd.concat(frames, ignore_index=True)
    data = data.assign(step=range(len(data)))
    # legend in the order given (class 0, 1, …, 10), not alphabetical (0, 1, 10, 2, …)
    names = list(dict.fromkeys(data["model"]))
    if random_lines is not None:
        names += [m for m in dict.fromkeys(chart_labels(random_lines["model"])) if m not in names]
    colour = alt.Color("model:N", title="Model", sort=names, scale=alt.Scale(domain=names))
    x = alt.X("fpr:Q", title="False positive rate", scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("tpr:Q", title="True positive rate", scale=alt.Scale(domain=[0, 1]))
    layers = [alt.Chart(data).mark_line(interpolate="linear").encode(
        x=x, y=y, color=colour, order="step:Q",
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("fpr:Q", format=".3f"),
                 alt.Tooltip("tpr:Q", format=".3f")],
    )]
    if random_lines is not None and len(random_lines):
        rnd = random_lines.assign(model=chart_labels(random_lines["model"]))
        layers.append(alt.Chart(rnd).mark_line(strokeDash=[6, 4], opacity=0.7).encode(
            x=x, y=y, color=colour, detail="model:N",
            tooltip=[alt.Tooltip("model:N", title="Random selection for")],
        ))
    chart = alt.layer(*layers).properties(width=420, height=380)
    return chart.properties(title=title) if title else chart


def auc_bars(frame: pd.DataFrame, *, title: str | None = None) -> alt.LayerChart:
    """AUC per model beside the random-selection line's (``model``, ``auc``, ``random_auc``)."""
    data = frame.assign(model=chart_labels(frame["model"]))
    long = data.melt(id_vars="model", value_vars=["auc", "random_auc"],
                     var_name="curve", value_name="area")
    long["curve"] = long["curve"].map({"auc": "model ROC", "random_auc": "random selection"})
    bars = alt.Chart(long).mark_bar().encode(
        y=alt.Y("model:N", title=None, axis=BAND_AXIS,
                sort=data.sort_values("auc", ascending=False)["model"].tolist()),
        yOffset=alt.YOffset("curve:N", sort=["model ROC", "random selection"]),
        x=alt.X("area:Q", title="Area under the curve", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("curve:N", title=None,
                        scale=alt.Scale(domain=["model ROC", "random selection"],
                                        range=[CATEGORY_COLOURS[3], "#c9d1d6"])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("curve:N"), alt.Tooltip("area:Q", format=".3f")],
    )
    chart = band_height(bars, len(data), 44, 90)
    return chart.properties(title=title) if title else chart


PAIR_VERDICTS = ("row model (A) significantly better", "column model (B) significantly better",
                 "no significant difference")  # pvalue_heatmap's legend, in PAIR_COLOURS' order
PAIR_COLOURS = (HIGHER_COLOUR, LOWER_COLOUR, NO_DIFFERENCE_COLOUR)


def pvalue_heatmap(frame: pd.DataFrame, *, alpha: float = 0.05,
                   lower_is_better: bool = False) -> alt.FacetChart:
    """Pairwise tests, one panel per ``test``: a cell coloured by the better model when its
    adjusted p-value is below ``alpha``. Columns: ``test``, ``model_a``, ``model_b``,
    ``p_value``, ``mean_difference`` (A − B)."""
    a_better = frame["mean_difference"] < 0 if lower_is_better else frame["mean_difference"] > 0
    data = frame.assign(model_a=chart_labels(frame["model_a"]), model_b=chart_labels(frame["model_b"]),
                        verdict=np.where(~(frame["p_value"] < alpha), PAIR_VERDICTS[2], np.where(
                            a_better, PAIR_VERDICTS[0], PAIR_VERDICTS[1])))
    models = list(dict.fromkeys([*data["model_a"], *data["model_b"]]))
    base = alt.Chart().encode(x=alt.X("model_b:N", sort=models, title="Model B (column)"),
                              y=alt.Y("model_a:N", sort=models, title="Model A (row)"))
    cells = base.mark_rect(stroke="#ffffff", strokeWidth=1).encode(
        color=alt.Color("verdict:N", title=f"Adjusted p below {alpha:g}",
                        scale=alt.Scale(domain=list(PAIR_VERDICTS), range=list(PAIR_COLOURS)),
                        legend=alt.Legend(orient="bottom", direction="vertical")),
        tooltip=[alt.Tooltip("model_a:N", title="A"), alt.Tooltip("model_b:N", title="B"),
                 alt.Tooltip("mean_difference:Q", title="mean A − B", format="+.4f"),
                 alt.Tooltip("p_value:Q", title="p (Holm)", format=".4f"),
                 alt.Tooltip("verdict:N", title="Reading")],
    )
    n = max(1, len(models))  # cells shrink so that a panel stays under ~480 px; panels stack
    size = max(24, min(60, 480 // n))
    text = base.mark_text(fontSize=12 if size >= 45 else 9).encode(
        text=alt.Text("p_value:Q", format=".3f" if size >= 45 else ".2f"))
    return alt.layer(cells, text, data=data).properties(width=size * n, height=size * n).facet(
        row=alt.Row("test:N", title=None,
                    header=alt.Header(labelAngle=0, labelAlign="left", labelOrient="top")))


def rhombus_chart(frame: pd.DataFrame, *, colour_title: str = "Model") -> alt.LayerChart:
    """The φ–δ rhombus (Armano). Columns: ``phi``, ``delta``, ``series``, optional ``label``."""
    data = frame.assign(series=chart_labels(frame["series"]))
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


DIRECTION_COLOURS: dict[str, str] = {"higher rating, higher score": CATEGORY_COLOURS[3],
                                     "higher rating, lower score": CATEGORY_COLOURS[0],
                                     "no direction": "#9aa5ab"}
DIRECTION_LABELS: dict[int, str] = dict(zip((1, -1, 0), DIRECTION_COLOURS, strict=True))


def importance_bars(frame: pd.DataFrame, *, value_title: str = "Importance") -> alt.LayerChart:
    """Driver importance with its interval, largest first (``attribute``, ``importance``,
    ``ci_low``, ``ci_high``); an optional ``direction`` colours the bars, so that an attribute
    whose higher ratings go with *lower* scores is not read as a lever.
    """
    data = frame.assign(attribute=chart_labels(frame["attribute"]))
    order = data.sort_values("importance", ascending=False)["attribute"].tolist()
    y = alt.Y("attribute:N", sort=order, title=None, axis=BAND_AXIS)
    tooltip = [alt.Tooltip("attribute:N", title="Attribute"),
               alt.Tooltip("importance:Q", title=value_title, format=".4f"),
               alt.Tooltip("ci_low:Q", title="low", format=".4f"),
               alt.Tooltip("ci_high:Q", title="high", format=".4f")]
    if "direction" in data:
        signs = pd.to_numeric(data["direction"], errors="coerce").fillna(0)
        data["direction"] = [DIRECTION_LABELS[int(np.sign(v))] for v in signs]
        colour = _colour_by(data, "direction", "Direction", DIRECTION_COLOURS,
                            alt.Legend(orient="bottom"))
        tooltip.append(alt.Tooltip("direction:N", title="Direction"))
    else:
        colour = alt.value(CATEGORY_COLOURS[3])
    x = alt.X("importance:Q", title=value_title)
    return band_height(_bars_with_whiskers(data, x, y, colour, tooltip), len(order), 30)


def quadrant_chart(frame: pd.DataFrame, *, importance_title: str = "Importance",
                   performance_title: str = "Mean score",
                   importance_domain: tuple[float, float] | None = None,
                   performance_domain: tuple[float, float] | None = None) -> alt.LayerChart:
    """Importance–performance quadrant: performance on x, importance on y, lines at the means.

    Columns: ``attribute``, ``importance``, ``performance``; optional ``*_low/high`` intervals
    and ``quadrant``. The domains fix the axes' full range, so that attributes close together
    look close together.
    """
    data = frame.assign(attribute=chart_labels(frame["attribute"]))
    means = pd.DataFrame({"importance": [data["importance"].mean()],
                          "performance": [data["performance"].mean()]})

    def scale(domain: tuple[float, float] | None) -> alt.Scale:
        return (alt.Scale(zero=False, padding=20) if domain is None
                else alt.Scale(domain=list(domain), nice=False))

    x = alt.X("performance:Q", title=performance_title, scale=scale(performance_domain))
    y = alt.Y("importance:Q", title=importance_title, scale=scale(importance_domain))
    colour = alt.value(CATEGORY_COLOURS[3])
    tooltip = [alt.Tooltip("attribute:N", title="Attribute"),
               alt.Tooltip("importance:Q", title=importance_title, format=".4f"),
               alt.Tooltip("performance:Q", title=performance_title, format=".2f")]
    if "quadrant" in data:
        colour = alt.Color("quadrant:N", title="Quadrant", legend=alt.Legend(orient="bottom"))
        tooltip.append(alt.Tooltip("quadrant:N", title="Quadrant"))
    mean = alt.Chart(means).mark_rule(strokeDash=[4, 4], color="#9aa5ab")
    layers: list[alt.Chart] = [mean.encode(x="performance:Q"), mean.encode(y="importance:Q")]
    if {"performance_low", "performance_high"} <= set(data):
        layers.append(alt.Chart(data).mark_rule(color="#9aa5ab").encode(
            x="performance_low:Q", x2="performance_high:Q", y=y))
    if {"importance_low", "importance_high"} <= set(data):
        layers.append(alt.Chart(data).mark_rule(color="#9aa5ab").encode(
            y="importance_low:Q", y2="importance_high:Q", x=x))
    layers.append(alt.Chart(data).mark_circle(size=90).encode(x=x, y=y, color=colour,
                                                              tooltip=tooltip))
    layers.append(alt.Chart(data).mark_text(align="left", dx=7, fontSize=11).encode(
        x=x, y=y, text="attribute:N"))
    return alt.layer(*layers).properties(height=380)


def chart_png(spec: dict, scale: float = 2.0) -> bytes:
    """A chart spec as PNG. vl-convert aborts the whole process (a Rust panic) on a string that
    is not valid XML: every string of the spec is made plain first."""
    import vl_convert

    return vl_convert.vegalite_to_png(plain_spec(spec), scale=scale)
