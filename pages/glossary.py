"""Glossary: the method's words in one line each (from ``cx_app.reports.definitions``)."""

from __future__ import annotations

import streamlit as st

from cx_app.reports.definitions import GLOSSARY, PAPERS
from pages.common import md_escape

st.title("Glossary")
st.write("The words the app borrows from the papers it is built on, in plain language.")
for term, meaning in GLOSSARY.items():
    st.markdown(f"**{md_escape(term)}** — {md_escape(meaning)}")
st.subheader("Where the method comes from")
for paper in PAPERS:
    st.markdown(f"- {md_escape(paper.citation)} — *{md_escape(paper.used_for)}*")
