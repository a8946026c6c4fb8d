"""Entry script: routes between the pages in ``app_pages/``. Logic lives in ``cx_app``.

Every page reads the user's :class:`cx_app.app.session.Analysis` from session state
(``app_pages/common.py``); on first start it holds the bundled sample survey, so every page shows
real content before anything is uploaded. The analysis lives in a program of the workspace
database and the address names it (``?program=…``): a reload, a second tab or a restarted
server reopens it.
"""

from pathlib import Path

import streamlit as st

# a local icon file: a material-icon favicon would be fetched from an outside font service
st.set_page_config(page_title="CX driver analytics",
                   page_icon=str(Path(__file__).resolve().parent / "assets" / "icon.png"),
                   layout="wide")

PAGES = {
    "Survey": [
        st.Page("app_pages/data.py", title="Data", icon=":material/upload_file:", default=True),
        st.Page("app_pages/nps.py", title="Net score", icon=":material/speed:"),
    ],
    "Models": [
        st.Page("app_pages/models.py", title="Models", icon=":material/model_training:"),
        st.Page("app_pages/confusion.py", title="Confusion matrices", icon=":material/grid_on:"),
        st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("app_pages/drivers.py", title="Drivers", icon=":material/bar_chart:"),
    ],
    "Results": [
        st.Page("app_pages/new_wave.py", title="New wave", icon=":material/fiber_new:"),
        st.Page("app_pages/report.py", title="Report", icon=":material/download:"),
        st.Page("app_pages/project.py", title="Project", icon=":material/save:"),
        st.Page("app_pages/glossary.py", title="Glossary", icon=":material/menu_book:"),
    ],
}

from app_pages import routing, team_mode  # noqa: E402  (after set_page_config)

team_mode.gate()  # team mode: nothing but "Sign in" until a team member is signed in
routing.follow_address()  # an address naming a program (a reload, a restart) reopens it
try:
    st.navigation(PAGES).run()
finally:  # also after st.stop() or a rerun: the address names the program the page left
    routing.keep_in_address()
