"""Data: choose the survey (bundled sample or uploads), the sheet and the schema; confirm the
column mapping; see the data-quality report."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import yaml

from cx_app.errors import CxAppError
from cx_app.survey.mapping import ROLES, SEGMENT_ROLES, mapping_table, schema_from_mapping_table
from cx_app.survey.schema import SurveySchema, infer_schema
from pages import common

CHOICE = "data_choice"  # the page's choices, kept while other pages are on screen

st.title("Data")
st.write("Analyse the bundled sample survey or upload your own workbooks (.xlsx, .xls, .ods) or "
         "CSV files. The first file and its first matching sheet are used unless you choose.")

choice: dict = st.session_state.setdefault(
    CHOICE, {"file": None, "sheet": None, "schema": common.SAMPLE_SCHEMA})
uploads = common.uploads()

files = st.file_uploader(
    "Upload survey files", type=["xlsx", "xlsm", "xls", "ods", "csv"],
    accept_multiple_files=True, key="uploader",
    help="Files stay in this browser session only. Several files: pick the one to analyse below.")
for f in files or []:
    uploads[f.name] = f.getvalue()

sample_label = "Bundled sample: telecom NPS survey (waves 1–6)"
options = [sample_label, *uploads]
current = choice["file"] if choice["file"] in uploads else sample_label
if files:  # a fresh upload becomes the file in use
    newest = files[-1].name
    if st.session_state.get("_last_upload") != newest:
        st.session_state["_last_upload"] = newest
        current = newest
        choice.update(file=newest, sheet=None, schema=common.INFER)
picked = st.selectbox("Survey file", options, index=options.index(current))
if picked == sample_label:
    filename, data = common.sample_bytes(common.SAMPLE_NAME)
    if choice["file"] is not None:
        choice.update(file=None, sheet=None, schema=common.SAMPLE_SCHEMA)
else:
    filename, data = picked, uploads[picked]
    if choice["file"] != picked:
        choice.update(file=picked, sheet=None, schema=common.INFER)

col_sheet, col_schema = st.columns(2)
try:
    sheets = common.cached_sheet_names(data, filename)  # the importer's size and archive checks
except CxAppError as exc:
    st.error(str(exc))
    st.stop()
sheet = None
if sheets:
    auto = "First sheet matching the schema"
    sheet_options = [auto, *sheets]
    index = sheet_options.index(choice["sheet"]) if choice["sheet"] in sheet_options else 0
    chosen = col_sheet.selectbox("Sheet", sheet_options, index=index)
    sheet = None if chosen == auto else chosen
    choice["sheet"] = sheet
else:
    col_sheet.text_input("Sheet", "— (CSV file)", disabled=True)

schema_options = [*common.bundled_schemas(), common.INFER]
index = schema_options.index(choice["schema"]) if choice["schema"] in schema_options else len(
    schema_options) - 1
schema_choice = col_schema.selectbox(
    "Survey schema", schema_options, index=index,
    help="A schema maps the file's columns to the target, attributes, segments and the "
         "reduction plan. Infer one from the data, check it below and download it for next time.")
choice["schema"] = schema_choice


def base_schema() -> SurveySchema:
    if schema_choice != common.INFER:
        return common.schema_from_file(schema_choice)
    raw = common.cached_raw_table(data, filename, sheet)
    return infer_schema(raw, name=filename.rsplit(".", 1)[0] or "inferred")


base = common.run_safely(base_schema, what=filename)
if base is None:
    st.stop()

with st.expander("Column mapping (check it, edit it, download it as a schema file)",
                 expanded=schema_choice == common.INFER):
    st.caption("One row per column used. Roles: target (the score the models predict), "
               "attribute (a driver question), segment (operator, wave, region, …), respondent "
               "id, or ignore. Names are identifiers used in results; labels are shown in charts.")
    edited = st.data_editor(
        mapping_table(base), key=f"mapping::{filename}::{sheet}::{schema_choice}",
        hide_index=True, num_rows="fixed", disabled=["column"],
        column_config={
            "column": st.column_config.TextColumn("Column in the file"),
            "role": st.column_config.SelectboxColumn("Role", options=list(ROLES), required=True),
            "name": st.column_config.TextColumn("Name", required=True),
            "label": st.column_config.TextColumn("Label"),
            "scale_min": st.column_config.NumberColumn("Scale min", step=1),
            "scale_max": st.column_config.NumberColumn("Scale max", step=1),
            "segment_role": st.column_config.SelectboxColumn("Segment kind",
                                                             options=list(SEGMENT_ROLES)),
        })
    if edited.equals(mapping_table(base)):
        schema = base  # unchanged: keep the schema exactly (aliases, plan, description)
    else:
        schema = common.run_safely(lambda: schema_from_mapping_table(edited, base), what="Column mapping")
    if schema is None:
        st.stop()
    st.download_button("Download schema (YAML)", data=schema.to_yaml().encode("utf-8"),
                       file_name=f"{schema.name}.yaml", mime="application/x-yaml",
                       key="dl_schema", on_click="ignore")

analysis = st.session_state.get(common.ANALYSIS)
try:
    survey = common.cached_survey(data, filename, sheet, schema.to_yaml())
except CxAppError as exc:
    st.error(str(exc))
    st.stop()
fresh = common.new_analysis(survey)
if analysis is None or analysis.data_key != fresh.data_key:
    if analysis is not None and analysis.models:
        st.warning(f"The data changed: the {len(analysis.models)} model(s) trained on the "
                   "previous data were set aside. Train again on the Models page.")
    st.session_state[common.ANALYSIS] = analysis = fresh

q = survey.quality
st.subheader("Data quality")
c1, c2, c3, c4 = st.columns(4)
c1.metric("Rows read", f"{q.rows_read:,}")
c2.metric("Respondents used", f"{q.rows_used:,}")
c3.metric("Rows excluded", f"{q.rows_excluded:,}")
c4.metric("Imputed cells", f"{sum(q.imputed.values()):,}")
src = survey.source
st.text(f"File: {src.filename}" + (f" · sheet: {src.sheet}" if src.sheet else "")
        + f" · header on row {src.header_row} · classes: {list(survey.classes)}")
if q.notes:
    with st.expander("Notes from reading the file"):
        for note in q.notes:
            st.text(note)
if q.rows_excluded:
    reasons = pd.DataFrame(list(q.counts_by_reason().items()), columns=["reason", "rows"])
    st.write("Rows excluded from the analysis, by reason:")
    common.table(reasons, key="reasons", file_name="excluded_by_reason.csv")
    st.write("Every excluded row (sheet row as Excel shows it):")
    common.table(q.to_frame(), key="excluded", file_name="excluded_rows.csv", height=260)
else:
    st.success("Every row read is used: no respondent was excluded.")
imputed = {k: v for k, v in q.imputed.items() if v}
if imputed:
    st.write("Missing attribute scores replaced by the attribute's median:")
    common.table(pd.DataFrame(list(imputed.items()), columns=["attribute", "cells"]),
                 key="imputed", file_name="imputed_cells.csv")

st.subheader("Respondents used")
preview = survey.frame.head(500)
common.table(preview.reset_index(), key="preview", file_name="respondents_preview.csv",
             height=300, label="Download the first 500 rows (CSV)")
with st.expander("Schema in use (YAML)"):
    st.code(yaml.safe_dump(yaml.safe_load(schema.to_yaml()), sort_keys=False,
                           allow_unicode=True), language="yaml")
