"""Entry script: routes between the pages in ``pages/``. Logic lives in ``cx_app``."""

import streamlit as st

st.set_page_config(page_title="CX driver analytics", layout="wide")

pages = [st.Page("pages/home.py", title="Home", default=True)]
st.navigation(pages).run()
