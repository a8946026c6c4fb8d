"""Glossary: the method's words and every metric in one line each (from
``cx_app.reports.definitions``, the same words the pages show on hover)."""

from __future__ import annotations

import streamlit as st

from app_pages.common import md_escape
from cx_app.reports.definitions import PAPERS, glossary_entries

st.title("Glossary")
st.write("The words the app borrows from statistics and from the papers it is built on, in "
         "plain language (the same lines appear when you hover over a figure).")
for term, meaning in glossary_entries():
    st.markdown(f"**{md_escape(term)}** — {md_escape(meaning)}")
st.subheader("Where the method comes from")
for paper in PAPERS:
    st.markdown(f"- {md_escape(paper.citation)} — *{md_escape(paper.used_for)}*")
