"""Confusion matrices: the original K×K and every reduced M×M+IM level as heatmaps, the grouping
editor (members, option R/S/RS, RS pairs, positive group) and all metrics with definitions.

A grouping change re-derives everything from the cached out-of-fold predictions: nothing is
retrained (``Analysis.levels`` is memoised per model and plan)."""

from __future__ import annotations

import streamlit as st

from app_pages import common, lifecycle, panels
from cx_app.app import views
from cx_app.engine.catalogue import metric_definition
from cx_app.models.names import model_display_name
from cx_app.reports import charts
from cx_app.reports.definitions import plain_name

IM_SHOWN = {"IM": "mismatch (IM)"}  # the matrices' IM row and column, words first

a = lifecycle.analysis()
st.title("Confusion matrices")
common.survey_caption(a)
if common.need_models(a):
    st.stop()


panels.grouping_editor(a)

resolved = common.run_safely(a.resolved_plan, what="Reduction plan")
if resolved is None:
    st.stop()

# --------------------------------------------------------------------------- matrices

model_id = st.selectbox("Model", list(a.models), key="cm_model", format_func=model_display_name)
shown = model_display_name(model_id)
levels = common.run_safely(lambda: a.levels(model_id))
if levels is None:
    st.stop()
st.caption("Rows: actual class · columns: predicted class · shading: share of the actual row · "
           "orange dashed cells: intragroup mismatch (IM), the IM column being the IM row "
           "transposed · outlined: correct cells.")
original, *reduced = levels
grouping = views.grouping_by_level(resolved)
st.altair_chart(charts.confusion_heatmap(original.to_frame(),
                                         title=f"{shown}: original {len(original.labels)}"
                                               f"×{len(original.labels)}"), width="content")
for level in reduced:
    title = f"{shown}: {level.name}, {grouping.get(level.name, 'grouping')}"
    if level.positive:
        title += f" (positive: {plain_name(level.positive)})"
    st.altair_chart(charts.confusion_heatmap(level.to_frame(), title=title), width="content")
    if level.note:
        st.text(level.note)

with st.expander("Matrices as tables"):
    for level in levels:
        st.text(level.name)
        common.table(level.to_frame().rename(index=IM_SHOWN, columns=IM_SHOWN),
                     key=f"matrix_{level.name}", hide_index=False,
                     file_name=f"confusion_{level.name}.csv",
                     headers={c: f"Predicted {plain_name(c)}" for c in level.labels
                              if isinstance(c, str)})


# --------------------------------------------------------------------------- metrics


def column_config(table: views.MetricTable, binary: bool) -> dict:
    """Each metric column's title, definition (hover) and format, from the catalogue."""
    config = {}
    for k in table.frame.columns[1:]:
        d = metric_definition(k, binary=binary)
        fmt = ("%.1f%%" if k in table.percent_columns else "%.3f" if k in table.number_columns
               else "%.0f")
        config[k] = st.column_config.NumberColumn(d.name, help=f"{d.words} {d.formula}",
                                                  format=fmt)
    return config


st.subheader("Metrics of every model")
st.caption("Hover a column header for its definition; rates in percent.")
for index, level in enumerate(levels):
    table = views.level_metric_table(a, index)
    st.markdown(f"**{common.md_escape(level.name)}**"
                + (f" · {common.md_escape(grouping[level.name])}" if level.name in grouping
                   else "")
                + (f" · positive group: {common.md_escape(plain_name(level.positive))}"
                   if level.positive else ""))
    frame = table.frame.assign(model=table.frame["model"].map(model_display_name))
    common.table(common.scale_percent(frame, list(table.percent_columns)),
                 key=f"metrics_{index}", file_name=f"metrics_{level.name}.csv",
                 column_config=column_config(table, level.is_binary), csv_frame=frame,
                 headers={"model": "Model"})

with st.expander(f"Per-class metrics of {common.md_escape(shown)}"):
    for level in levels:
        st.text(level.name)
        per_class = views.per_class_table(level)
        common.table(per_class, key=f"per_class_{level.name}",
                     file_name=f"per_class_{level.name}.csv",
                     headers=views.per_class_headers(per_class))

with st.expander("Definitions"):
    for index, level in enumerate([levels[0], *[lv for lv in levels if lv.is_binary][:1]]):
        st.text("2×2+IM metrics" if level.is_binary else "Multiclass metrics")
        common.table(views.definitions_table(level.is_binary), key=f"definitions_{index}",
                     file_name="definitions.csv", headers=views.DEFINITION_HEADERS)
