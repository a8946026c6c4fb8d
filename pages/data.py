"""Data: choose the survey (bundled sample or uploads), the sheet and the schema; confirm the
column mapping; see the data-quality report."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import yaml
from pydantic import ValidationError

from cx_app.engine.plan import format_validation_error
from cx_app.errors import CxAppError, SchemaError
from cx_app.survey.importing import sheet_names
from cx_app.survey.schema import SurveySchema, default_plan, infer_schema, parse_schema
from pages import common

ROLES = ["target", "attribute", "segment", "respondent id", "ignore"]
SEGMENT_ROLES = ["brand", "wave", "date", "region", "other"]
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
    sheets = sheet_names(data, filename=filename)  # the importer's size and archive checks
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


def mapping_frame(schema: SurveySchema) -> pd.DataFrame:
    rows = [{"column": schema.target.column, "role": "target", "name": schema.target.name,
             "label": "", "scale_min": schema.target.scale.min,
             "scale_max": schema.target.scale.max, "segment_role": None}]
    rows += [{"column": a.column, "role": "attribute", "name": a.name, "label": a.label or "",
              "scale_min": a.scale.min, "scale_max": a.scale.max, "segment_role": None}
             for a in schema.attributes]
    rows += [{"column": s.column, "role": "segment", "name": s.name, "label": "",
              "scale_min": None, "scale_max": None, "segment_role": s.role}
             for s in schema.segments]
    if schema.respondent_id is not None:
        rows.append({"column": schema.respondent_id.column, "role": "respondent id",
                     "name": schema.respondent_id.name, "label": "", "scale_min": None,
                     "scale_max": None, "segment_role": None})
    return pd.DataFrame(rows)


def schema_from_table(edited: pd.DataFrame, base: SurveySchema) -> SurveySchema:
    """The edited mapping → a validated schema (keeps the base's aliases, codes and plan)."""
    rows = edited.to_dict("records")
    targets = [r for r in rows if r["role"] == "target"]
    if len(targets) != 1:
        raise SchemaError(f"mark exactly one column as the target (now {len(targets)})")
    aliases = {c.name: list(c.aliases) for c in base.columns()}

    def scale(r: dict) -> dict:
        if pd.isna(r["scale_min"]) or pd.isna(r["scale_max"]):
            raise SchemaError(f"column {r['column']!r}: give its scale (min and max)")
        return {"min": int(r["scale_min"]), "max": int(r["scale_max"])}

    t = targets[0]
    target_scale = scale(t)
    same_scale = (target_scale["min"], target_scale["max"]) == (
        base.target.scale.min, base.target.scale.max)
    kind = base.target.kind if same_scale else (
        "nps" if (target_scale["min"], target_scale["max"]) == (0, 10) else "custom")
    plan = base.plan if same_scale else default_plan(kind, (target_scale["min"],
                                                            target_scale["max"]))
    data = {
        "name": base.name, "description": base.description,
        "target": {"name": t["name"], "column": t["column"], "kind": kind, "scale": target_scale,
                   "aliases": aliases.get(t["name"], [])},
        "attributes": [
            {"name": r["name"], "column": r["column"], "label": r["label"] or None,
             "scale": scale(r), "aliases": aliases.get(r["name"], [])}
            for r in rows if r["role"] == "attribute"],
        "segments": [
            {"name": r["name"], "column": r["column"], "role": r["segment_role"] or "other",
             "aliases": aliases.get(r["name"], [])}
            for r in rows if r["role"] == "segment"],
        "missing_codes": list(base.missing_codes),
        "missing_attributes": base.missing_attributes,
        "plan": [s.model_dump(mode="json", exclude_none=True) for s in plan],
    }
    ids = [r for r in rows if r["role"] == "respondent id"]
    if ids:
        data["respondent_id"] = {"name": ids[0]["name"], "column": ids[0]["column"],
                                 "aliases": aliases.get(ids[0]["name"], [])}
    if data["description"] is None:
        del data["description"]
    try:
        return parse_schema(data, source="column mapping")
    except ValidationError as exc:  # pragma: no cover - parse_schema converts these
        raise SchemaError(format_validation_error(exc, "column mapping")) from None


base = common.run_safely(base_schema, what=filename)
if base is None:
    st.stop()

with st.expander("Column mapping (check it, edit it, download it as a schema file)",
                 expanded=schema_choice == common.INFER):
    st.caption("One row per column used. Roles: target (the score the models predict), "
               "attribute (a driver question), segment (operator, wave, region, …), respondent "
               "id, or ignore. Names are identifiers used in results; labels are shown in charts.")
    edited = st.data_editor(
        mapping_frame(base), key=f"mapping::{filename}::{sheet}::{schema_choice}",
        hide_index=True, num_rows="fixed", disabled=["column"],
        column_config={
            "column": st.column_config.TextColumn("Column in the file"),
            "role": st.column_config.SelectboxColumn("Role", options=ROLES, required=True),
            "name": st.column_config.TextColumn("Name", required=True),
            "label": st.column_config.TextColumn("Label"),
            "scale_min": st.column_config.NumberColumn("Scale min", step=1),
            "scale_max": st.column_config.NumberColumn("Scale max", step=1),
            "segment_role": st.column_config.SelectboxColumn("Segment kind",
                                                             options=SEGMENT_ROLES),
        })
    kept = edited[edited["role"] != "ignore"]
    if edited.equals(mapping_frame(base)):
        schema = base  # unchanged: keep the schema exactly (aliases, plan, description)
    else:
        schema = common.run_safely(lambda: schema_from_table(kept, base), what="Column mapping")
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
