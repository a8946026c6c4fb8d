"""The Net score page's groups: stated in words (which scores are low, middle, high and why),
and, for an item that is not a recommend question, chosen by the analyst. Not a page."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from cx_app.survey import nps as net_score
from cx_app.survey import score_groups as words_of
from cx_app.survey.nps import NetScoreGroups
from cx_app.survey.schema import SurveySchema
from cx_app.survey.vocabulary import vocabulary


def chosen_groups(schema: SurveySchema) -> NetScoreGroups:
    """The schema's groups (:func:`~cx_app.survey.nps.groups_for_schema`) stated on the page;
    a non-NPS item gets "Change the groups" (two cut points, this page only)."""
    groups = net_score.groups_for_schema(schema)
    note = words_of.groups_note(schema, groups)
    if vocabulary(schema).is_nps or len(groups.classes) < 3:
        st.caption(common.md_escape(note))
        return groups
    classes = list(groups.classes)
    low_top = max(groups.negative)
    high_bottom = min(groups.positive)
    with st.expander(common.md_escape(note) + " Change the groups"):
        low_up_to = st.select_slider(f"{common.md_escape(groups.negative_name.capitalize())}: scores up to",
                                     classes[:-1], value=low_top, key="groups_low")
        high_from = st.select_slider(f"{common.md_escape(groups.positive_name.capitalize())}: scores from",
                                     classes[1:], value=high_bottom, key="groups_high")
        st.caption("These groups apply on this page. For reports and wave estimates, change "
                   "the plan in the survey schema (Data page).")
    if (low_up_to, high_from) == (low_top, high_bottom):
        return groups
    chosen = common.run_safely(lambda: words_of.groups_between(classes, low_up_to, high_from,
                                                                groups.names))
    if chosen is None:
        return groups
    st.caption(common.md_escape(f"Groups chosen here: {words_of.describe_groups(chosen)}."))
    return chosen
