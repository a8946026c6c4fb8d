"""Glossary: the method's words in one line each (from ``cx_app.reports.definitions``)."""

from __future__ import annotations

import streamlit as st

from cx_app.reports.definitions import GLOSSARY, PAPERS

st.title("Glossary")
st.write("The words the app borrows from the papers it is built on, in plain language.")
for term, meaning in GLOSSARY.items():
    st.markdown(f"**{term}** — {meaning}")
st.subheader("Where the method comes from")
for paper in PAPERS:
    st.markdown(f"- {paper.citation} — *{paper.used_for}*")
