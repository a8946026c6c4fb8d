"""The first page's welcome back: when the workspace holds programs, they come first (most
recent first, with their last wave and an "Open" button each), above the survey choice; the
analyst may hide them for this session. Not a page (the entry script lists the pages)."""

from __future__ import annotations

import streamlit as st

from app_pages import common, lifecycle
from cx_app.workspace.views import recent_first

HIDDEN = "landing_hidden"  # the analyst chose "Start with a new survey" this session


def programs_first() -> None:
    """On the Data page while the session has no program: the workspace's programs, each with
    a one-click "Open" (in the container keyed ``landing``); nothing once the session has a
    program or hid the list, or on an empty workspace (the bundled sample, as before)."""
    if lifecycle.program_name() is not None or st.session_state.get(HIDDEN):
        return
    programs = common.run_safely(common.workspace().list_programs) or []
    if not programs:
        return
    with st.container(border=True, key="landing"):
        st.subheader("Your programs")
        st.caption("The programs in this workspace, most recent first: open one to go on where "
                   "you left off, or start with a new survey (an upload or the bundled sample) "
                   "below.")
        for p in recent_first(programs):
            name, survey = common.md_escape(p.name), common.md_escape(p.survey.filename or "")
            when = (p.last_change or p.created).strftime("%Y-%m-%d")
            wave = (f"last wave **{common.md_escape(p.last_wave)}** ({p.waves} in all, added "
                    f"{when})" if p.last_wave else f"no wave added yet (created {when})")
            text, button = st.columns([5, 1], vertical_alignment="center")
            text.markdown(f"**{name}** — {survey}, {len(p.models)} model(s), {wave}")  # plain: escaped above, or a date
            if button.button("Open", key=f"landing_open::{p.name}") and (
                    lifecycle.open_program(p.name)):
                st.rerun()
        if st.button("Start with a new survey (hide this list)", key="landing_new"):
            st.session_state[HIDDEN] = True
            st.rerun()
