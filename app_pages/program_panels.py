"""The Project page's program panels: the team of new programs, the program's audit trail,
and an admin's move and delete. Not a page (the entry script lists the pages)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import common, lifecycle, team_mode
from cx_app.workspace.teams import Action


def team_choice() -> None:
    """Team mode: which team owns the programs this session creates (a choice when the
    person is an analyst of several teams)."""
    choices = team_mode.analyst_teams()
    if len(choices) > 1:
        st.selectbox("Team of the programs you create", choices,
                     key=team_mode.NEW_PROGRAM_TEAM,
                     help="A program belongs to one team: its members see it, its analysts "
                          "change it, its admins move or delete it.")
    elif choices:
        st.caption(f"Programs you create belong to the team {common.md_escape(choices[0])}.")


def audit_trail(name: str) -> None:
    """Who changed the program, when and how (newest first)."""
    records = common.run_safely(lambda: common.workspace().audit(name)) or ()
    st.markdown(f"**Changes to {common.md_escape(name)}** (newest first)")
    if not records:
        st.caption("No change recorded yet.")
        return
    frame = pd.DataFrame([{"when (UTC)": r.created.strftime("%Y-%m-%d %H:%M:%S"), "who": r.user,
                           "what": r.action, "detail": r.detail or ""} for r in records])
    common.table(frame, key="audit", file_name="audit_trail.csv", headers={
        "when (UTC)": "When (UTC)", "who": "Who", "what": "What", "detail": "Detail"})


def administer(name: str) -> None:
    """An admin of the program's team may move it to another team of theirs or delete it
    (after a confirmation); others see nothing here."""
    if lifecycle.denied("deleting and moving programs", Action.ADMINISTER) is not None:
        return
    with st.expander("Move or delete this program (admin)"):
        teams = team_mode.teams()
        if teams is not None:
            own = common.run_safely(lambda: lifecycle.analysis_store().team_of(name))
            targets = [t for t in teams.names if t != own and team_mode.may(Action.ADMINISTER, t)]
            if targets:
                target = st.selectbox("Move to the team", targets, key="program_move_to")
                if st.button("Move", key="program_move") and common.run_safely(
                        lambda: common.workspace().move_program(name, target) or True):
                    st.success(f"{common.md_escape(name)} now belongs to {common.md_escape(target)}.")
        sure = st.checkbox(common.md_escape(f"Delete {name} with its models, waves and files "
                                            "(its audit rows stay); this cannot be undone"),
                           key="program_delete_sure")
        if st.button("Delete the program", disabled=not sure, key="program_delete") and (
                common.run_safely(lambda: common.workspace().delete_program(name) or True)):
            lifecycle.forget_program()
            st.rerun()
