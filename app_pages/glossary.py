"""Glossary: the method's words and every metric in one line each (from
``cx_app.reports.definitions``, the same words the pages show on hover), each with a link to
the page of the app where it is shown."""

from __future__ import annotations

import streamlit as st

from app_pages.common import md_escape
from cx_app.reports.definitions import ALP, PAPERS, glossary_entries

WHERE = {  # a term → the page of the app that shows it
    ALP: ("app_pages/new_wave.py", "New wave"),
    "Intragroup mismatch (IM)": ("app_pages/confusion.py", "Confusion matrices"),
    "Relaxed / Strict / Hybrid grouping": ("app_pages/confusion.py", "Confusion matrices"),
    "Three groups and two groups with mismatches (3×3+IM and 2×2+IM)": (
        "app_pages/confusion.py", "Confusion matrices"),
    "AUC and the random line": ("app_pages/compare.py", "Compare"),
    "Discriminant / characteristic capability (δ / φ)": ("app_pages/drivers.py", "Drivers"),
    "Corrected t-test (Nadeau–Bengio)": ("app_pages/compare.py", "Compare"),
    "Survey base and model base": ("app_pages/data.py", "Data"),
    "Adjusted Wald interval": ("app_pages/nps.py", "Net score"),
    "Holm adjustment": ("app_pages/nps.py", "Net score"),
    "Held-out calibration gap": ("app_pages/models.py", "Models"),
    "Drift": ("app_pages/new_wave.py", "New wave"),
}

st.title("Glossary")
st.write("The words the app borrows from statistics and from the papers it is built on, in "
         "plain language (the same lines appear when you hover over a figure).")
for term, meaning in glossary_entries():
    st.markdown(f"**{md_escape(term)}** — {md_escape(meaning)}")
    if term in WHERE:
        page, title = WHERE[term]
        st.page_link(page, label=f"Shown on the {md_escape(title)} page",  # plain: WHERE is constant
                     icon=":material/arrow_forward:")
st.subheader("Where the method comes from")
for paper in PAPERS:
    st.markdown(f"- {md_escape(paper.citation)} — *{md_escape(paper.used_for)}*")
