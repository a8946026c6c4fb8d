"""URL routing: the address names the session's program, so a reload, a second tab or a
restarted server reopens it (:mod:`app_pages.lifecycle`). Not a page itself; the entry script
runs :func:`follow_address` before the page and :func:`keep_in_address` after it.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common, lifecycle

ADDRESS_READ = "address_read"  # the address' program was looked at (once per session)


def follow_address() -> None:
    """Run by the entry script before the page: a session opened on an address naming a
    program (a reload, a second tab, a restarted server) reopens it from the workspace."""
    if common.ANALYSIS in st.session_state or st.session_state.get(ADDRESS_READ):
        return
    st.session_state[ADDRESS_READ] = True
    name = st.query_params.get("program")
    if name:
        reopened = lifecycle.reopen(str(name))
        if reopened is not None:
            st.session_state[common.ANALYSIS] = reopened


def keep_in_address() -> None:
    """Run by the entry script after the page: the address names the session's program (so
    a reload reopens it) and the program keeps the plan in use."""
    name = lifecycle.program_name()
    if name is None:
        return
    if st.query_params.get("program") != name:
        st.query_params["program"] = name
    a = st.session_state.get(common.ANALYSIS)
    if a is not None and st.session_state.get(common.PLAN_KEPT) != (name, a.plan_key):
        if lifecycle.denied("keeping the grouping in the program") is None:  # a viewer's: here
            common.run_safely(lambda: lifecycle.analysis_store().set_plan(
                name, a.plan.model_dump(mode="json")))
        st.session_state[common.PLAN_KEPT] = (name, a.plan_key)
