"""Project: save the whole analysis as a .cxproj file, or open one (nothing is retrained)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import common, lifecycle, program_panels, team_mode
from cx_app.app.project import open_analysis, save_analysis
from cx_app.errors import CxAppError
from cx_app.models.names import model_display_name
from cx_app.provenance import sha256_hex

LAST_WAVE = "last_wave_estimate"  # set by the New wave page
OPENED = "project_opened"  # SHA-256 of the project file last opened (opened once per upload)
EDITOR_KEYS = {"ng", "name", "members", "option", "rule", "pairs", "positive"}

a = lifecycle.analysis()
st.title("Project")
# --------------------------------------------------------------------------- the workspace
st.subheader("Programs in the workspace")
workspace = common.workspace()
if team_mode.administrator():  # the URL (password masked) only for admins (issue 33)
    st.caption(f"Workspace database: {common.md_escape(workspace.database.shown_url)} "
               "(CX_APP_DATABASE_URL chooses another, e.g. PostgreSQL for a team server). "
               "Every model trained, wave added and estimate made is kept there as it is made.")
current = lifecycle.program_name()
st.text(f"This analysis' program: {current or 'none yet (made when a model is trained)'}")
program_panels.team_choice()
keep = st.checkbox("Keep the survey and wave files in the workspace", value=lifecycle.keep_files(),
                   key="project_keep_files",
                   help="Needed to reopen the analysis after a restart and to show a stored "
                        "wave's details. Off: only the files' names, sheets and SHA-256 are "
                        "kept, and the files already kept are deleted.")
if keep != lifecycle.keep_files() and not lifecycle.denied("changing what the program keeps"):
    st.session_state[common.KEEP_FILES] = keep
    if current is not None:
        common.run_safely(lambda: lifecycle.analysis_store().set_keep_files(current, keep))
programs = common.run_safely(workspace.list_programs) or []
if programs:
    common.table(pd.DataFrame([{"program": p.name, "survey": p.survey.filename,
                                "models": len(p.models), "waves": p.waves,
                                "created": p.created.strftime("%Y-%m-%d %H:%M")}
                               | ({"team": p.team or "—"} if team_mode.team_mode() else {})
                               for p in programs]), key="programs", file_name="programs.csv",
                 headers={"program": "Program", "survey": "Survey file", "models": "Models",
                          "waves": "Waves", "created": "Created", "team": "Team"})
    chosen = st.selectbox("Open a program", [p.name for p in programs], index=None,
                          key="project_open_program")
    if (chosen is not None and chosen != current and st.button("Open", key="project_open")
            and lifecycle.open_program(chosen)):
        st.rerun()
if current is not None:
    program_panels.audit_trail(current)
    program_panels.administer(current)
st.subheader("Project file")
st.write("Save this analysis — mapping, plan, trained models with their cross-validation "
         "results, final models and the last new-wave estimate — as one project file, and open "
         "it later here or with `cx-app report --project`. Nothing is retrained when it is "
         "opened.")
common.survey_caption(a)

# --------------------------------------------------------------------------- save
st.subheader("Save project")
include = st.checkbox(
    "Include the survey file (respondent data) in the project", value=False,
    key="project_include_survey",
    help="Off: the project names the survey (file name, sheet, SHA-256) and you load the same "
         "file before opening it. On: anyone with the project file has the respondents' answers.")
wave = st.session_state.get(LAST_WAVE)


def survey_bytes() -> bytes | None:
    name = a.survey.source.filename
    data = common.uploads().get(name)
    if data is None:
        filename, sample = common.sample_bytes(common.SAMPLE_NAME)
        data = sample if filename == name else None
    return data


if st.button("Prepare the project file", key="project_prepare"):
    st.session_state["project_file"] = common.run_safely(lambda: save_analysis(
        a, include_survey=survey_bytes() if include else None,
        estimates=[wave] if wave is not None else []), what="the project")
prepared = st.session_state.get("project_file")
if prepared:
    stem = a.survey.source.filename.rsplit(".", 1)[0]
    st.download_button(f"Save project ({len(prepared) / 1024:,.0f} KB)", data=lambda: prepared,
                       file_name=f"{stem}.cxproj", mime="application/zip",
                       key="project_download", on_click="ignore")

# --------------------------------------------------------------------------- open
st.subheader("Open project")
upload = None if team_mode.viewer_only() else st.file_uploader("Open a project file (.cxproj)", type=["cxproj"], key="project_upload",
                          help="Without the survey inside, load the same survey file on the "
                               "Data page first.")
if upload is not None:
    data = upload.getvalue()
    digest = sha256_hex(data)
    if st.session_state.get(OPENED) != digest:
        filename, sample = common.sample_bytes(common.SAMPLE_NAME)
        files = {filename: sample, **common.uploads()}
        try:
            opened = open_analysis(
                data, name=upload.name, survey_files=files, memo_items=common.LIMITS.memo_items,
                load_survey=lambda raw, schema, sheet, filename: common.cached_survey(
                    raw, filename, sheet, schema.to_yaml()))
        except CxAppError as exc:
            st.error(common.md_escape(exc))
            st.stop()
        st.session_state[OPENED] = digest
        new = opened.analysis
        st.session_state[common.ANALYSIS] = a = new
        source = new.survey.source
        if opened.survey_bytes != sample:
            common.uploads()[source.filename] = opened.survey_bytes
        st.session_state[common.PROJECT_SCHEMA] = new.survey.schema
        st.session_state["data_choice"] = {
            "file": None if opened.survey_bytes == sample else source.filename,
            "sheet": opened.sheet_choice, "schema": common.PROJECT_SCHEMA}
        for key in [k for k in st.session_state if str(k).split("::")[0] in EDITOR_KEYS]:
            del st.session_state[key]
        if opened.estimates:
            st.session_state[LAST_WAVE] = opened.estimates[-1]
        else:
            st.session_state.pop(LAST_WAVE, None)
        st.session_state.pop("project_file", None)
        st.session_state.pop(common.PROGRAM, None)
        if not lifecycle.denied("keeping the opened models in a program"):  # a viewer: here only
            common.run_safely(lambda: lifecycle.ensure_program(new))  # kept in the file's program
        st.success(common.md_escape(
            f"Opened {upload.name}: {len(new.models)} model(s) of {source.filename} restored "
            f"({', '.join(map(model_display_name, new.models)) or 'none'}); every page shows "
            "them."))
    else:
        st.caption(f"{common.md_escape(upload.name)} is open.")
