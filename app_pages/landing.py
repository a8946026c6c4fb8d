"""The first page's welcome back: when the workspace holds programs, they come first (most
recent first, with their last wave and an "Open" button each); the bundled sample and the
upload only when the workspace is empty or the analyst chooses to start something new. Not a
page (the entry script lists the pages)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from cx_app.workspace.views import recent_first

STARTED = "landing_start_new"  # the analyst chose "Start with a new survey" this session


def programs_first() -> None:
    """On the Data page before anything is chosen: the workspace's programs, each with a
    one-click "Open"; stops the page there until one is opened or "Start with a new survey"
    is clicked. Does nothing once the session has a program or chose to start anew."""
    if common.program_name() is not None or st.session_state.get(STARTED):
        return
    programs = common.run_safely(common.workspace().list_programs) or []
    if not programs:
        return  # an empty workspace: the bundled sample, as before
    programs = recent_first(programs)
    st.subheader("Your programs")
    st.caption("The programs in this workspace, most recent first. Open one to go on where "
               "you left off, or start with a new survey below.")
    for p in programs:
        name, survey = common.md_escape(p.name), common.md_escape(p.survey.filename or "survey")
        when = (p.last_change or p.created).strftime("%Y-%m-%d")
        wave = (f"last wave **{common.md_escape(p.last_wave)}** ({p.waves} in all, added {when})"
                if p.last_wave else f"no wave added yet (created {when})")
        text, button = st.columns([5, 1])
        text.markdown(f"**{name}** — {survey}, {len(p.models)} model(s), {wave}")
        if button.button("Open", key=f"landing_open::{p.name}") and common.open_program(p.name):
            st.rerun()
    if st.button("Start with a new survey (upload one, or the bundled sample)",
                 key="landing_new"):
        st.session_state[STARTED] = True
        st.rerun()
    st.stop()
