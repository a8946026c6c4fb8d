"""Drivers: which attributes move the score — importance with intervals, the
importance–performance quadrant, the φ–δ rhombus of the attributes' top-2-box, and a reading."""

from __future__ import annotations

import streamlit as st

from app_pages import common, lifecycle
from cx_app.app import views
from cx_app.models.drivers import importance_frame
from cx_app.models.importance_performance import METHOD as IPA_METHOD
from cx_app.models.importance_performance import NO_STANDOUT
from cx_app.models.names import model_display_name
from cx_app.reports import charts
from cx_app.reports.prose import drivers_reading

a = lifecycle.analysis()
survey = a.survey
st.title("Drivers")
common.survey_caption(a)
if not survey.has_target:
    st.warning("This file has no target scores: load a labeled survey on the Data page.")
    st.stop()

labels = {attr.name: attr.display for attr in survey.schema.attributes}
with st.spinner("Computing driver importance…"):
    drivers = common.run_safely(a.drivers)
if drivers is None:
    st.stop()
for note in drivers.notes:
    st.text(note)

SOURCES = ["Relative weights (% of explained variance)", "Ordinal logit coefficient",
           *[f"Permutation importance: {model_display_name(m)}" for m in a.models]]
PERMUTATION = dict(zip(SOURCES[2:], a.models, strict=True))  # source → model id
source = st.selectbox("Importance measure", SOURCES, key="driver_source",
                      help="Relative weights (Johnson 2000) split the R² of the score among the "
                           "attributes. Ordinal logit: effect of one standard deviation on the "
                           "log-odds of a higher score. Permutation: drop in held-out accuracy "
                           "when the attribute is shuffled, per cross-validation fold (computed "
                           "once, right after the model was trained).")


with st.spinner("Computing…"):
    try:
        if source == SOURCES[0]:
            imp, unit = importance_frame(drivers, "relative_weights")
        elif source == SOURCES[1]:
            imp, unit = importance_frame(drivers, "ordinal")
        else:  # computed right after training, with the fold models
            model = a.models[PERMUTATION[source]]
            imp, unit = importance_frame(drivers, "permutation", model.permutation)
    except Exception as exc:  # noqa: BLE001 - shown to the analyst, e.g. models without fold models
        st.error(common.md_escape(f"{source}: {exc}"))
        st.stop()
imp["attribute"] = imp["attribute"].map(lambda n: labels.get(n, n))
imp = imp.sort_values("importance", ascending=False, ignore_index=True)  # as the chart's bars
st.subheader("Importance")
st.altair_chart(charts.importance_bars(imp, value_title=unit), width="stretch")
st.caption(f"n = {len(survey.frame):,} respondents (each attribute over those who answered "
           "it). Colour: direction — blue, higher ratings of the attribute go with "
           "higher scores; red, with lower scores (an attribute to read with care, not a lever).")
shown = imp if source != SOURCES[0] else imp.drop(columns=["ci_low", "ci_high"])  # no interval
common.table(shown.round(3), key="importance", file_name="driver_importance.csv",
             csv_frame=shown, headers=views.IMPORTANCE_HEADERS)

st.subheader("Importance–performance quadrant")
st.caption("Importance: relative weight (% of R²), on its full 0–100% axis; direction +1: "
           "higher ratings go with a higher score. Performance: mean rating over the "
           "respondents who answered (base; n/a answers are not ratings), placed on its own "
           "scale (0% = bottom, 100% = top). Bars: 95% intervals. A quadrant label only for an "
           f"attribute that stands apart from the others on both axes — "
           f"{common.md_escape(IPA_METHOD)}. "
           "Top-left (important, rated below the others): act here first.")
ipa = drivers.importance_performance.assign(
    attribute=lambda f: f["attribute"].map(lambda n: labels.get(n, n)))
scaled = "performance_pct" in ipa
placed = ipa.assign(performance=ipa["performance_pct"]) if scaled else ipa
st.altair_chart(charts.quadrant_chart(placed, importance_title="Importance (% of R²)",
                                      performance_title="Performance (% of its scale)"
                                      if scaled else "Mean score", importance_domain=(0, 100),
                                      performance_domain=(0, 100) if scaled else None),
                width="stretch")
if (ipa["quadrant"] == NO_STANDOUT).all():
    st.info("No attribute stands out: on importance and performance together, every attribute "
            "is within the uncertainty of the others, so none is labelled.")
common.table(ipa.round(3), key="quadrant", file_name="importance_performance.csv",
             headers=views.QUADRANT_HEADERS)

if drivers.capability is not None and len(drivers.capability):
    st.subheader("φ–δ rhombus of the attributes' top-2-box")
    cap = drivers.capability
    targets = list(dict.fromkeys(cap["target"]))
    target = st.selectbox("Target group", targets, key="rhombus_target")
    part = cap[cap["target"] == target].assign(
        series=lambda f: f["attribute"].map(lambda n: labels.get(n, n)))
    st.caption(f"Feature: the attribute scored in its top two scale points; target: the "
               f"respondent is in '{common.md_escape(target)}'. δ high = the top box separates the target group "
               "well; φ > 0 = the top box is common (characteristic), φ < 0 = rare.")
    st.altair_chart(charts.rhombus_chart(part, colour_title="Attribute"), width="content")
    table = part.assign(attribute=part["series"]).drop(columns=["series"])
    common.table(table.round(3), key="capability", file_name="top_box_capability.csv",
                 csv_frame=table, headers=views.CAPABILITY_HEADERS)

st.subheader("Reading")
st.markdown(drivers_reading(  # plain: every text it is given is md_escape'd
    drivers.importance_performance,
    labels={n: common.md_escape(labels.get(n, n)) for n in survey.attribute_names},
    r_squared=drivers.relative_weights.r_squared,
    target=common.md_escape(survey.schema.target.column)))
