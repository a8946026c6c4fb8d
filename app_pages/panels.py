"""Widget panels shared by pages or too long for one page: each renders one part of a page
from library results (no computing here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from app_pages import common, job_queue, lifecycle, team_mode
from cx_app.app import views
from cx_app.app.session import Analysis
from cx_app.app.training import TrainingJob
from cx_app.errors import CxAppError
from cx_app.estimate.model_file import load_model
from cx_app.estimate.model_metadata import HeldOutFigures
from cx_app.models.names import model_display_name, names_in_text
from cx_app.models.timing import format_duration
from cx_app.reports.definitions import ALP, GROUPING_OPTIONS, explain, plain_name
from cx_app.survey.importing import SurveyData
from cx_app.survey.mapping import (
    COLUMNS as MAPPING_COLUMNS,
)
from cx_app.survey.mapping import (
    ROLES,
    SEGMENT_ROLES,
    mapping_table,
    schema_from_mapping_table,
    target_is_unsure,
    with_target,
)
from cx_app.survey.schema import MISSING_POLICIES, SurveySchema, with_recommend


def calibration_checks(cv: HeldOutFigures) -> None:
    """The model's held-out gap between estimates from its probabilities (ALP) and the truth,
    its warning, and the fit-on-all-respondents check (ALP paper, Section 5), from the model
    file's metadata."""
    gap = cv.alp_gap
    if gap is not None:
        st.markdown("**Held-out calibration gap**: how far the estimates from the model's "
                    "probabilities (ALP) were from the truth on the cross-validation folds; the "
                    "estimates below inherit it.")
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Held-out accuracy", common.pct(gap.accuracy_cm),
                  help=common.md_escape(explain("Held-out calibration gap")))
        c2.metric("Estimated from probabilities (ALP)", common.pct(gap.accuracy_alp),
                  help=common.md_escape(explain(ALP)),
                  delta=f"{100 * gap.accuracy_gap:+.1f} points"
                  if gap.accuracy_gap is not None else None, delta_color="off")
        c3.metric("Class-share gap", common.pct(gap.share_gap),
                  help=common.md_escape(explain("Class-share gap")))
        if gap.net_gap is not None:
            c4.metric("Net score gap (points)", f"{gap.net_gap:+.1f}",
                      help="Estimated − actual net score on the held-out folds; calibration "
                           "error across similar respondents "
                           f"{gap.net_calibration_error or 0:.1f} points (RMS)")
    for text in cv.calibration_warnings:
        st.warning(common.md_escape(text))
    if gap is not None and not cv.calibration_warnings:
        st.success("The held-out gap is small: this model's estimates from its probabilities "
                   "can be trusted "
                   "as far as the new wave resembles the training data (see drift below).")
    check = cv.full_training_check
    if check is not None:
        with st.expander("Check: the model fitted on all respondents, its accuracy estimated "
                         "from its probabilities"):
            frame = pd.DataFrame([
                {"model": "cross-validated (held-out folds)", "accuracy": check.heldout_cm,
                 ESTIMATED: check.heldout_alp},
                {"model": "fit on all respondents (resubstitution)",
                 "accuracy": check.full_train_cm, ESTIMATED: check.full_train_alp}])
            common.table(common.scale_percent(frame, ["accuracy", ESTIMATED]),
                         key="nw_full_check", file_name="full_training_check.csv",
                         headers={"model": "Model trained on", "accuracy": "Accuracy",
                                  ESTIMATED: ESTIMATED.capitalize()},
                         csv_frame=frame, column_config=common.percent_columns(
                             ["accuracy", ESTIMATED]))
            st.caption("Estimated accuracy: the accuracy estimated from the model's "
                       "probabilities, without the scores (ALP, see the Glossary page). That "
                       "of the full-data model is the estimate "
                       "of its accuracy; it should sit near the held-out accuracy. A "
                       "resubstitution accuracy far above both means the model over-fits.")
            for note in check.notes:
                st.warning(common.md_escape(note))


ESTIMATED = "estimated accuracy (ALP)"  # the accuracy estimated from the probabilities
RULES = {"predicted_ge_actual": "predicted ≥ actual", "predicted_le_actual": "predicted ≤ actual",
         "pairs": "declared pairs"}


def _label(value: object) -> str:
    return str(value)


def step_editor(k: int, step, previous: list, renamed: dict[str, str]) -> dict | None:
    """Widgets for plan step ``k``; returns the step as a plan dict (None if incomplete)."""
    tag = f"{k}::{'|'.join(map(str, previous))}"  # new widgets when the level above changes
    groups_in = list(step.groups) if step is not None else []
    n_groups = st.number_input("Number of groups", min_value=2, max_value=max(2, len(previous)),
                               value=max(2, len(groups_in)), step=1, key=f"ng::{tag}")
    columns = st.columns(int(n_groups))
    groups = []
    for g in range(int(n_groups)):
        spec = groups_in[g] if g < len(groups_in) else None
        with columns[g]:
            name = st.text_input("Group name", value=spec.name if spec else f"group_{g + 1}",
                                 key=f"name::{tag}::{g}")
            members_default = [renamed.get(_label(m), _label(m)) for m in spec.members] \
                if spec else []
            members_default = [m for m in members_default if m in map(_label, previous)]
            members = st.multiselect("Members", [_label(p) for p in previous],
                                     default=members_default, key=f"members::{tag}::{g}")
            options = list(GROUPING_OPTIONS)
            option = st.radio("Option", options, horizontal=True,
                              index=options.index(spec.option) if spec else 0,
                              format_func=lambda o: f"{o} ({GROUPING_OPTIONS[o].name})",
                              key=f"option::{tag}::{g}",
                              help=" ".join(common.md_escape(f"{o.code}: {o.words}")
                                            for o in GROUPING_OPTIONS.values()))
            label_of = {_label(p): p for p in previous}  # keep the labels' own values (ints)
            group = {"name": name.strip(), "members": [label_of[m] for m in members],
                     "option": option}
            if option == "RS":
                current = "pairs" if spec and spec.tp_pairs else (
                    spec.tp_rule if spec and spec.tp_rule else "predicted_ge_actual")
                rule = st.selectbox("True positives besides the diagonal", list(RULES),
                                    index=list(RULES).index(current), format_func=RULES.get,
                                    key=f"rule::{tag}::{g}")
                if rule == "pairs":
                    pairs = [f"{x} → {y}" for x in members for y in members if x != y]
                    declared = [f"{_label(x)} → {_label(y)}" for x, y in (spec.tp_pairs or ())] \
                        if spec else []
                    chosen = st.multiselect("(actual → predicted) pairs counted as TP", pairs,
                                            default=[p for p in declared if p in pairs],
                                            key=f"pairs::{tag}::{g}")
                    group["tp_pairs"] = [[label_of[x] for x in p.split(" → ")] for p in chosen]
                else:
                    group["tp_rule"] = rule
            groups.append(group)
    names = [g["name"] for g in groups]
    default_positive = step.positive if step is not None and step.positive in names else None
    positive = st.selectbox("Positive group", [None, *names],
                            index=[None, *names].index(default_positive),
                            format_func=lambda p: "none (multiclass metrics only)" if p is None
                            else p, key=f"positive::{tag}",
                            help="Which group is 'positive' for the 2×2+IM metrics and the ROC.")
    return {"name": step.name if step is not None else f"step {k + 1}", "groups": groups,
            **({"positive": positive} if positive else {})}


def grouping_editor(a: Analysis) -> None:
    """The Confusion page's grouping editor: the plan step by step (groups, members, R/S/RS
    option, positive group); a valid edit becomes the analysis' plan at once."""
    with st.expander("Grouping editor: how classes are grouped, step by step", expanded=False):
        st.caption("Changes apply at once to every matrix, metric and ROC of every trained model; "
                   "nothing is retrained. " + " ".join(
                       common.md_escape(f"{o.code} = {o.name.lower()}: {o.words}")
                       for o in GROUPING_OPTIONS.values()))
        if st.button("Reset to the survey schema's plan", key="reset_plan"):
            for key in [k for k in st.session_state if str(k).split("::")[0] in {
                    "ng", "name", "members", "option", "rule", "pairs", "positive"}]:
                del st.session_state[key]
            a.set_plan(a.survey.schema.plan_spec)
            st.rerun()
        steps_out = []
        previous = list(a.classes)
        renamed: dict[str, str] = {}
        plan_steps = list(a.plan.plan)
        for k, step in enumerate(plan_steps):
            st.markdown(f"**Step {k + 1:d}: {common.md_escape(step.name)}**")
            out = step_editor(k, step, previous, renamed)
            steps_out.append(out)
            renamed = {old.name: new["name"] for old, new in zip(step.groups, out["groups"],
                                                                 strict=False)}
            previous = [g["name"] for g in out["groups"]]
        try:
            plan = views.edited_plan(a.plan, a.classes, steps_out)
        except CxAppError as exc:
            st.error("The grouping is not valid yet, the matrices below use the last valid one: "
                     + common.md_escape(exc))
        else:
            if plan is not None:
                a.set_plan(plan)
        st.download_button("Download this plan (YAML)", data=views.plan_yaml(a.plan),
                           file_name="plan.yaml",
                           mime="application/x-yaml", key="dl_plan", on_click="ignore")


def mapping_editor(base: SurveySchema, *, key: str, expanded: bool,
                   table: pd.DataFrame | None = None,
                   keep: Callable[[SurveySchema, pd.DataFrame | None], None] | None = None,
                   ) -> SurveySchema | None:
    """The Data page's column mapping: one editable row per column (role, name, label, scale,
    segment kind) and the schema download; the schema in use, or None when the edit is
    invalid (the error is shown).

    ``table``: the rows to start from when not the schema's own (a kept edit, with its
    ignored rows); ``keep(schema, table)`` is given each valid result and its edited rows
    (None when they are the schema's own)."""
    if target_is_unsure(base):
        st.warning("Which column is the overall question (the score the models predict)? The "
                   "layout was inferred from the data and no header says it: "
                   + common.md_escape(base.description or "") + ".")
        scored = [base.target.column, *(a.column for a in base.attributes)]
        column = st.selectbox("Target question", scored, index=None, key=f"{key}::target",
                              placeholder="Choose the target question")
        if column is None:
            st.info("Choose the target question to go on.")
            return None
        base = with_target(base, column)
        key = f"{key}::{column}"
    policy = st.selectbox(
        "Unanswered attribute scores (n/a, blank, codes)", MISSING_POLICIES,
        index=MISSING_POLICIES.index(base.missing_attributes), key=f"{key}::policy",
        format_func=plain_name,
        help="Never out of the net score. For the models: keep the respondent and fill the gap "
             "inside each model from its training data (with or without a 'was missing' "
             "indicator), or leave such respondents out of the models.")
    if policy != base.missing_attributes:
        base = base.model_copy(update={"missing_attributes": policy})
    base = recommend_question(base, key)
    with st.expander("Column mapping (check it, edit it, download it as a schema file)",
                     expanded=expanded):
        st.caption("One row per column used. Roles: target (the score the models predict), "
                   "attribute (a driver question), segment (operator, wave, region, …), "
                   "respondent id, or ignore. Labels are what every page, chart and report "
                   "shows (the schema file also keeps each column's identifier).")
        edited = st.data_editor(
            mapping_table(base) if table is None else table, key=key,
            hide_index=True, num_rows="fixed", disabled=["column"],
            column_order=[c for c in MAPPING_COLUMNS if c != "name"],  # labels, not codes
            column_config={
                "column": st.column_config.TextColumn("Column in the file"),
                "role": st.column_config.SelectboxColumn("Role", options=list(ROLES),
                                                         required=True),
                "name": st.column_config.TextColumn("Name", required=True),
                "label": st.column_config.TextColumn("Label"),
                "scale_min": st.column_config.NumberColumn("Scale min", step=1),
                "scale_max": st.column_config.NumberColumn("Scale max", step=1),
                "segment_role": st.column_config.SelectboxColumn("Segment kind",
                                                                 options=list(SEGMENT_ROLES)),
            })
        unchanged = edited.equals(mapping_table(base))
        if unchanged:
            schema = base  # unchanged: keep the schema exactly (aliases, plan, description)
        else:
            schema = common.run_safely(lambda: schema_from_mapping_table(edited, base),
                                       what="Column mapping")
        if schema is None:
            return None
        if keep is not None:
            keep(schema, None if unchanged else edited)
        st.download_button("Download schema (YAML)", data=schema.to_yaml().encode("utf-8"),
                           file_name=f"{schema.name}.yaml", mime="application/x-yaml",
                           key="dl_schema", on_click="ignore")
    return schema


def recommend_question(base: SurveySchema, key: str) -> SurveySchema:
    """"Is this an NPS (recommend) question?" with the inferred answer; the analyst's other
    answer is recorded in the schema (:func:`~cx_app.survey.schema.with_recommend`: kind and
    default plan follow). Only a 0–10 target can be an NPS."""
    zero_to_ten = (base.target.scale.min, base.target.scale.max) == (0, 10)
    answer = st.radio(
        "Is this an NPS (recommend) question?", ("Yes", "No"), index=0 if base.is_nps else 1,
        horizontal=True, key=f"{key}::recommend", disabled=not zero_to_ten,
        help=f"Inferred: {'yes' if base.is_nps else 'no'}. Only a 'How likely are you to "
             "recommend …?' question on 0–10 is an NPS (promoters, passives, detractors); any "
             "other target gets a net score, top box − bottom box, with neutral group names."
             + ("" if zero_to_ten else " This target is not on 0–10."))
    if zero_to_ten and (answer == "Yes") != base.is_nps:
        return with_recommend(base, answer == "Yes")
    return base


def data_quality(survey: SurveyData) -> None:
    """The two bases (survey: NPS; models), excluded rows with reason and scope, and the
    unanswered attribute scores of a survey."""
    q = survey.quality
    st.subheader("Data quality")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Rows read", f"{q.rows_read:,}")
    c2.metric("Respondents (survey base)", f"{q.respondents:,}",
              help=common.md_escape(explain("Survey base and model base")))
    c3.metric("Used by the models", f"{q.rows_used:,}",
              help=common.md_escape(explain("Survey base and model base")))
    c4.metric("Unanswered attribute scores", f"{sum(q.gaps.values()):,}")
    src = survey.source
    st.text(f"File: {src.filename}" + (f" · sheet: {src.sheet}" if src.sheet else "")
            + f" · {src.rows_read} · classes: {list(survey.classes)}")
    if src.left_out:  # personal data and platform columns: never read further, never stored
        st.info(f"{len(src.left_out)} column(s) left out at import (personal data is never "
                "shown, stored or reported; a platform's own columns are not answers):")
        common.table(pd.DataFrame(list(src.left_out), columns=["Column", "Why left out"]),
                     key="left_out", file_name="columns_left_out.csv")
    bases = pd.DataFrame(q.bases(survey.schema.missing_attributes),
                         columns=["base", "respondents", "why it differs"])
    common.table(bases, key="bases", file_name="bases.csv", headers={
        "base": "Base", "respondents": "Respondents", "why it differs": "Why it differs"})
    if q.notes:
        with st.expander("Notes from reading the file"):
            for note in q.notes:
                st.text(note)
    if q.rows_excluded:
        st.write("Every excluded row (sheet row as Excel shows it; scope: out of the survey, "
                 "or in the net score but not used by the models):")
        common.table(q.to_frame(), key="excluded", file_name="excluded_rows.csv", height=260,
                     headers={"row": "Row in the sheet", "column": "Column", "reason": "Reason",
                              "value": "Value", "scope": "Left out of"})
    else:
        st.success("Every row read is used: no respondent was excluded.")
    gaps = {k: v for k, v in q.gaps.items() if v}
    if gaps:
        also = ("; the support vector machine and ordinal logistic regression also add a "
                "'was missing' indicator" if survey.schema.missing_attributes == "impute_indicator"
                else "")
        st.write("Unanswered attribute scores (n/a, blank, code): the respondents stay in the "
                 f"models, and each model fills the gaps with its training median{also}. Per "
                 "attribute:")
        shown = {a.name: a.display for a in survey.schema.attributes}  # labels, not names
        common.table(pd.DataFrame({"attribute": [shown.get(k, k) for k in gaps],
                                   "unanswered": list(gaps.values()),
                                   "share": [v / max(q.rows_used, 1) for v in gaps.values()]}),
                     key="gaps", file_name="unanswered_scores.csv", headers={
                         "attribute": "Attribute", "unanswered": "Unanswered",
                         "share": "Share of the model base"})


def model_source(a: Analysis) -> tuple[Any, str | None]:
    """The New wave page's model and its id: one of the analysis (fitted on all respondents on
    request, then kept in the program) or an uploaded model file (id None); model None until
    there is one."""
    source = st.radio("Model source", ["Trained in this analysis", "Saved model file (.skops)"],
                      horizontal=True, key="nw_model_source")
    model = model_id = None
    if source == "Trained in this analysis":
        if common.need_models(a):
            st.stop()
        ids = list(a.models)  # preselected: the one whose held-out net score errs least
        choice = a.estimation_choice({m: model_display_name(m) for m in ids})
        model_id = st.selectbox("Model", ids, key="nw_model", format_func=model_display_name,
                                index=0 if choice is None else ids.index(choice.chosen))
        if choice is not None:
            st.caption(common.md_escape(f"Preselected: {choice.reason}."))
        model = a.final_model(model_id, common.result_store())
        if model is None:
            st.info("The cross-validated model is fitted once more on all respondents to score new "
                    "waves (probability calibration as chosen on the Models page; its "
                    "cross-validation is reused, not run again).")
            if st.button("Fit on all respondents", type="primary", key="nw_fit"):
                bar = st.progress(0.0, text="fitting")

                def progress(done: int, total: int, message: str) -> None:
                    bar.progress(min(1.0, done / max(total, 1)), text=common.md_escape(message))

                model = common.run_safely(lambda: a.final_model(
                    model_id, common.result_store(), fit=True, progress=progress))
                if model is None:
                    st.stop()
                lifecycle.keep_final(a, model_id, model)
                bar.progress(1.0, text="done")
        if model is not None:
            st.download_button("Download the model file (.skops)",
                               data=lambda: a.final_model_bytes(model_id),
                               file_name=f"{a.models[model_id].algorithm_id}.skops",
                               mime="application/octet-stream", key="dl_model", on_click="ignore")
    elif team_mode.viewer_only():  # a viewer uploads nothing (issue 33)
        st.info("Viewers read the programs of their teams; opening a model file needs the "
                "analyst role.")
    else:
        upload = st.file_uploader("Model file", type=["skops"], key="nw_model_file")
        if upload is not None:  # read from the upload's bytes: nothing is written to disk
            model = common.run_safely(lambda: load_model(upload.getvalue(),
                                                         name=Path(upload.name).name))
    return model, model_id


def _words(job: TrainingJob, text: str) -> str:
    """A training message with the job's model and algorithm ids read as names."""
    return names_in_text(text, [*job.algorithms, *(e.label for e in job.events)])


def _progress_line(job: TrainingJob) -> str:
    """The progress bar's text: the queue while the job waits for the server, else the step
    in training and the seconds since Train."""
    waiting = job_queue.waiting(job)
    left = job.remaining  # the estimate said before Train, refined by the folds done
    left_text = "" if left is None else f" · {format_duration(left)} left"
    return waiting if waiting is not None else (f"{_words(job, job.text)} · {job.elapsed:.0f} s"
                                                + left_text)


def training_progress(job: TrainingJob) -> None:
    """The training: its place in the server's queue while it waits, then progress, each model
    as it is done, and a Cancel button until it ends; returns when the job has ended, its
    models handed over to its analysis.

    The job runs in its own thread; this loop only shows it. A click anywhere (Cancel too)
    interrupts this script run at the next progress update and the page shows the job again;
    Cancel's callback ends the job at once (its thread drops the model in training; a queued
    job leaves the queue)."""
    status = st.status(f"Cross-validating {len(job.algorithms)} model(s), {job.folds:d} folds "
                       f"each, on {common.md_escape(job.analysis.survey.source.filename)}…",
                       expanded=True)
    cancel = status.empty()
    if job.running:
        cancel.button("Cancel training", key="cancel_training", on_click=job.cancel,
                      help="Stops at once: models already finished are kept (one whose folds "
                           "are done too, without its permutation importance), the one in "
                           "training is dropped; a job waiting for the server leaves the queue.")
    bar = status.progress(job.share, text=common.md_escape(_progress_line(job)))
    shown = 0
    while not job.wait(0.3):
        for event in job.events[shown:]:
            status.write(common.md_escape(_words(job, event.message)))
            shown += 1
        bar.progress(min(1.0, job.share), text=common.md_escape(_progress_line(job)))
    cancel.empty()
    for event in job.events[shown:]:
        status.write(common.md_escape(_words(job, event.message)))
    bar.progress(min(1.0, job.share), text=common.md_escape(_progress_line(job)))
    lifecycle.hand_over(job)  # the models to the analysis and its program, in the page's thread
    status.update(label=f"{common.md_escape(_words(job, job.message))} ({job.elapsed:.0f} s)",
                  state={"finished": "complete", "cancelled": "complete"}.get(job.state, "error"),
                  expanded=job.state != "finished")


def training_summary(job: TrainingJob) -> None:
    """What the last training did: failures and warnings of each model, and a cancel's
    message (the models kept, the one dropped)."""
    for event in job.events:
        if event.status == "failed":
            st.error(common.md_escape(_words(job, event.message)))
    for warning in job.warnings:
        st.warning(common.md_escape(_words(job, warning)))
    if job.state == "cancelled":
        st.warning(common.md_escape(_words(job, job.message)))
    elif job.state == "failed":
        st.error(common.md_escape(_words(job, job.message)))


def setting_input(algorithm_id: str, name: str, default: Any, preset: str) -> Any:
    """A widget for one algorithm setting, of its default's type (YAML text for lists and
    dicts), kept per preset and algorithm across page and file switches."""
    key = f"set::{preset}::{algorithm_id}::{name}"
    keep = {"key": key, "persist_state": "session"}  # kept across page and file switches
    label = common.md_escape(plain_name(name).capitalize())  # "max_iter" → "Max iter"
    if isinstance(default, bool):
        return st.checkbox(label, value=default, **keep)
    if isinstance(default, int):
        return int(st.number_input(label, value=default, step=1, **keep))
    if isinstance(default, float):
        return float(st.number_input(label, value=default, format="%g", **keep))
    if isinstance(default, str):
        return st.text_input(label, value=default, **keep)
    text = st.text_input(f"{label} (YAML)", value=views.setting_text(default), **keep)
    try:
        return views.parse_setting(text, default)
    except ValueError as exc:
        st.error(common.md_escape(f"{name}: {exc}"))
        return default
