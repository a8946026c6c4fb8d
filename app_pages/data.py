"""Data: choose the survey (bundled sample or uploads), the sheet and the schema; confirm the
column mapping; see the data-quality report."""

from __future__ import annotations

import streamlit as st
import yaml

from app_pages import common, landing, lifecycle, panels, team_mode
from cx_app.app.file_memory import mapping_file_key
from cx_app.errors import CxAppError
from cx_app.survey.inference import infer_schema
from cx_app.survey.reading import file_kind
from cx_app.survey.schema import SurveySchema, schema_from_yaml_text

CHOICE = "data_choice"  # the page's choices, kept while other pages are on screen

st.title("Data")
landing.programs_first()  # a workspace with programs: they come first, with an Open each
st.write("Analyse the bundled sample or upload your own: workbooks, CSV, SPSS (.sav) or Stata (.dta) "
         "files. The first file and its first matching sheet are used unless you choose.")

choice: dict = st.session_state.setdefault(
    CHOICE, {"file": None, "sheet": None, "schema": common.SAMPLE_SCHEMA})
uploads = common.uploads()

refused = lifecycle.denied("uploading survey files")  # team mode: a viewer
if refused:
    st.info(common.md_escape(refused))
files = None if refused else st.file_uploader(
    "Upload survey files", type=common.SURVEY_TYPES,
    accept_multiple_files=True, key="uploader",
    help="The workspace keeps it once a model is trained (Project page: off). Several: pick below.")
for f in files or []:
    uploads[f.name] = f.getvalue()

sample_label = "Bundled sample: telecom NPS survey (waves 1–6)"
options = [sample_label, *uploads]
current = choice["file"] if choice["file"] in uploads else sample_label
by_file: dict = choice.setdefault("by_file", {})  # each file's sheet and schema choice


def switch_to(file: str | None) -> None:
    """Make ``file`` (None: the sample) the file in use, with the sheet and schema last chosen
    for it."""
    if choice["file"] == file:
        return
    by_file[choice["file"]] = {"sheet": choice["sheet"], "schema": choice["schema"]}
    default = common.SAMPLE_SCHEMA if file is None else common.INFER
    choice.update(file=file, **by_file.get(file, {"sheet": None, "schema": default}))


if files:  # a fresh upload becomes the file in use
    newest = files[-1].name
    if st.session_state.get("_last_upload") != newest:
        st.session_state["_last_upload"] = newest
        current = newest
        switch_to(newest)
        st.session_state["survey_file"] = newest
if st.session_state.get("survey_file") not in options:  # first visit, or back from a page
    st.session_state["survey_file"] = current
# keyed and set through session state: the choice stays put when the options change
picked = st.selectbox("Survey file", options, key="survey_file")
if picked == sample_label:
    filename, data = common.sample_bytes(common.SAMPLE_NAME)
    switch_to(None)
else:
    filename, data = picked, uploads[picked]
    switch_to(picked)

col_sheet, col_schema = st.columns(2)
try:
    sheets = common.cached_sheet_names(data, filename)  # the importer's size and archive checks
except CxAppError as exc:
    st.error(common.md_escape(exc))
    st.stop()
sheet = None
if sheets:
    auto = "First sheet matching the schema"
    sheet_options = [auto, *sheets]
    index = sheet_options.index(choice["sheet"]) if choice["sheet"] in sheet_options else 0
    chosen = col_sheet.selectbox("Sheet", sheet_options, index=index)
    choice["sheet"] = sheet = None if chosen == auto else chosen
else:
    col_sheet.text_input("Sheet", f"— ({file_kind(filename)}: no sheets)", disabled=True)

schema_options = [*common.bundled_schemas(), common.INFER]
if common.PROJECT_SCHEMA in st.session_state:  # the schema of a project opened on its page
    schema_options.insert(0, common.PROJECT_SCHEMA)
index = schema_options.index(choice["schema"]) if choice["schema"] in schema_options else len(
    schema_options) - 1
schema_choice = col_schema.selectbox(
    "Survey schema", schema_options, index=index,
    help="A schema maps the file's columns to the target, attributes, segments and the "
         "reduction plan. Infer one from the data, check it below and download it for next time.")
choice["schema"] = schema_choice
schema_file = None if team_mode.viewer_only() else col_schema.file_uploader(
    "…or upload a schema file (YAML)", type=["yaml", "yml"], key="schema_upload",
    help="A schema downloaded from this page earlier (or hand-written): replaces the above.")


def base_schema() -> SurveySchema:
    if schema_file is not None:
        return schema_from_yaml_text(schema_file.getvalue(), schema_file.name)
    if schema_choice == common.PROJECT_SCHEMA:
        return st.session_state[common.PROJECT_SCHEMA]
    if schema_choice != common.INFER:
        return common.schema_from_file(schema_choice)
    raw = common.cached_raw_table(data, filename, sheet)
    return infer_schema(raw, name=filename.rsplit(".", 1)[0] or "inferred")


base = common.run_safely(base_schema, what=filename)
if base is None:
    st.stop()

source = schema_file.name if schema_file is not None else schema_choice
# the mapping as last edited for this file (kept per file while other files are analysed)
memory = common.mapping_memory()
file_key = mapping_file_key(data, sheet, base)
prefix = memory.prefix(file_key)
editing = any(k == prefix or str(k).startswith(f"{prefix}::") for k in st.session_state)
seed, seed_table = memory.seed(file_key, base, editing=editing)
schema = panels.mapping_editor(seed, key=prefix, table=seed_table,
                               keep=lambda s, t: memory.keep(file_key, s, t),
                               expanded=source == common.INFER)
if schema is None:
    st.stop()

try:
    survey = common.cached_survey(data, filename, sheet, schema.to_yaml())
except CxAppError as exc:
    st.error(common.md_escape(exc))
    st.stop()
fresh = common.new_analysis(survey)
lifecycle.confirm_new_mapping(fresh, lambda: memory.keep(file_key, st.session_state[
    common.ANALYSIS].survey.schema), prefix)  # models' mapping changed: asks first
lifecycle.switch_to(fresh, filename)

panels.data_quality(survey)

st.subheader("Respondents")
st.caption("Every respondent with a valid answer to the target question (the survey base); "
           "empty cells are unanswered scores (n/a), never filled here.")
preview = survey.frame.head(500)
common.table(preview.reset_index(), key="preview", file_name="respondents_preview.csv",
             height=300, label="Download the first 500 rows (CSV)")
with st.expander("Schema in use (YAML)"):
    st.code(yaml.safe_dump(yaml.safe_load(schema.to_yaml()), sort_keys=False,
                           allow_unicode=True), language="yaml")
