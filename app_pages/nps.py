"""Net score overview (NPS only for a recommend question on 0–10): the net score with its
interval, per segment and per wave, the score distribution by group, attribute profiles."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import common, lifecycle, score_groups
from cx_app.app import views
from cx_app.errors import CxAppError
from cx_app.reports import charts
from cx_app.reports.definitions import explain
from cx_app.survey import nps as net_score
from cx_app.survey.nps_flags import segments_vs_rest, wave_trend
from cx_app.survey.vocabulary import vocabulary

a = lifecycle.analysis()
survey = a.survey
schema = survey.schema
target = schema.target.name
words = vocabulary(schema)  # "NPS", promoters, detractors only for an NPS
SCORE = common.md_escape(words.title)
st.title(f"{SCORE} overview")
common.survey_caption(a)

if not survey.has_target:
    st.warning("This file has no target scores: load a labeled survey on the Data page.")
    st.stop()
try:
    groups = score_groups.chosen_groups(schema)  # stated; a non-NPS item's chosen here
    weight = survey.weight_name
    overall = net_score.nps_summary(survey.scores, groups=groups, label="All respondents",
                                    weights=survey.weights)
except CxAppError as exc:
    st.error(common.md_escape(exc))
    st.stop()
names = list(groups.names)  # negative, neutral, positive

st.subheader("Overall")
cols = st.columns(1 + len(names))
cols[0].metric(words.title if words.is_nps else "Net score (top box − bottom box)",
               f"{overall.value:+.1f}",
               help=f"95% interval {overall.ci95[0]:+.1f} to {overall.ci95[1]:+.1f}. "
                    + common.md_escape(explain("Adjusted Wald interval")))
for col, name in zip(cols[1:], names, strict=True):
    col.metric(common.md_escape(name.capitalize()), common.pct(overall.shares[name]),
               help=f"{overall.counts[name]:,} of {overall.n:,} respondents")
st.text(f"{SCORE} {overall.value:+.1f} (95% interval {overall.ci95[0]:+.1f} to "
        f"{overall.ci95[1]:+.1f}) on {overall.n:,} respondents"
        + (f", weighted by {schema.weight.column!r} (effective sample size "
           f"{overall.n_effective:,.0f})" if overall.weighted else ""))

SHOWN = {"n": "Respondents", "nps": SCORE, "ci_low": "95% low", "ci_high": "95% high"}


def nps_table(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    keep = [by, "n", *names, "nps", "ci_low", "ci_high"]
    return frame[keep].rename(columns=SHOWN)


def nps_config() -> dict:
    return {c: st.column_config.NumberColumn(c, format="%+.1f")
            for c in (SCORE, "95% low", "95% high")}


segments = [s for s in schema.segments if s.name in survey.frame.columns and s.role != "date"]
wave_specs = [s for s in segments if s.role == "wave"]
split_specs = [s for s in segments if s.role != "wave"]

if split_specs:
    st.subheader("By segment")
    spec = st.selectbox("Segment", split_specs, format_func=lambda s: s.column, key="nps_segment")
    by_segment = common.run_safely(lambda: net_score.nps_by(
        survey.respondents, target, spec.name, groups=groups, weight=weight))
    flags = common.run_safely(lambda: segments_vs_rest(survey.respondents, target, spec.name,
                                                       groups=groups, weight=weight))
    if by_segment is not None and flags is not None:
        flags = flags.set_index("segment").reindex(by_segment[spec.name].astype(str))
        chart_data = by_segment.rename(columns={spec.name: "group"}).assign(
            flag=flags["flag"].to_numpy())
        st.altair_chart(charts.nps_bars(chart_data, group_title=spec.column, score_title=SCORE),
                        width="stretch")
        st.caption(f"n = {int(by_segment['n'].sum()):,} respondents. Colour: each "
                   f"{common.md_escape(spec.column)} "
                   "against all other respondents (two-sided z test, Holm-adjusted over the "
                   f"{len(flags)} segments, 5%); bars and lines show the 95% interval.")
        table = nps_table(by_segment, spec.name).assign(
            **{"vs rest": flags["difference"].to_numpy(), "p (Holm)": flags["p_holm"].to_numpy(),
               "flag": flags["flag"].to_numpy()})
        common.table(table, key="nps_segment_table",
                     file_name=f"net_score_by_{spec.name}.csv",
                     headers={spec.name: spec.column, "vs rest": "Difference from the rest",
                              "flag": "Significant?"},
                     column_config={**nps_config(), "p (Holm)": st.column_config.NumberColumn(
                         format="%.3f"), "vs rest": st.column_config.NumberColumn(format="%+.1f")})

if wave_specs:
    st.subheader("Trend by wave")
    wave = wave_specs[0]
    split = st.selectbox("One line per", [None, *split_specs],
                         format_func=lambda s: "all respondents together" if s is None
                         else s.column, key="nps_trend_split")

    waves = common.run_safely(lambda: wave_trend(
        survey.respondents, target, wave.name, split=None if split is None else split.name,
        groups=groups, weight=weight))
    if waves is not None:
        st.altair_chart(charts.nps_trend_chart(waves, wave_title=wave.column, score_title=SCORE),
                        width="stretch")
        st.caption(f"n = {int(waves['n'].sum()):,} respondents. ▲ / ▼: a significant change "
                   "from the previous wave of the same line (two-sided z test, Holm-adjusted "
                   f"over the {int(waves['p'].notna().sum())} changes shown, 5%); bands: 95% "
                   "intervals.")
        whole = common.run_safely(lambda: net_score.nps_by_results(
            survey.respondents, target, wave.name, groups=groups, weight=weight))
        overall = waves if split is None else common.run_safely(lambda: wave_trend(
            survey.respondents, target, wave.name, groups=groups, weight=weight))
        if whole and overall is not None:
            changes = views.wave_changes_table(whole, overall["p_holm"].to_numpy()[1:], SCORE)
            st.write("Wave-on-wave change (all respondents; two-sided z test; Holm-adjusted p "
                     "over the changes):")
            common.table(changes, key="nps_changes", file_name="net_score_wave_changes.csv",
                         column_config={c: st.column_config.NumberColumn(
                             c, format="%.3f" if c.startswith("p") else "%+.1f")
                             for c in changes.columns[2:]})

st.subheader("Score distribution")
distribution = net_score.score_distribution(survey.scores, groups)
st.altair_chart(charts.score_distribution_chart(distribution, categories=names,
                                                score_title=schema.target.column),
                width="stretch")
common.table(common.scale_percent(distribution, ["share"]), key="distribution",
             file_name="score_distribution.csv", csv_frame=distribution,
             headers={"score": f"{schema.target.column} (score)", "count": "Respondents",
                      "category": "Group", "share": "Share"},
             column_config={"share": st.column_config.NumberColumn(format="%.1f%%")})

st.subheader("Attribute score profiles")
st.caption("Mean attribute score of each group, over the respondents who answered it (n/a "
           f"answers are not scores): where {common.md_escape(words.positive)} and "
           f"{common.md_escape(words.negative)} differ most.")
labels = {a_.name: a_.display for a_ in schema.attributes}
profile = net_score.attribute_profiles(survey.frame[list(survey.attribute_names)],
                                       survey.scores, groups).rename(index=labels)
long = profile.reset_index(names="attribute").melt(id_vars="attribute", var_name="series",
                                                   value_name="mean")
st.altair_chart(charts.attribute_profile_chart(long), width="stretch")
common.table(profile.round(3).reset_index(names="attribute"), key="profile", file_name=
             "attribute_profiles.csv", headers={"attribute": "Attribute", **{n: f"Mean score, {n}" for n in names}})
