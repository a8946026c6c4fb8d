"""Confusion matrices: the original K×K and every reduced M×M+IM level as heatmaps, the grouping
editor (members, option R/S/RS, RS pairs, positive group) and all metrics with definitions.

A grouping change re-derives everything from the cached out-of-fold predictions: nothing is
retrained (``Analysis.levels`` is memoised per model and plan)."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import yaml

from cx_app.engine.binary import BINARY_KEYS
from cx_app.engine.catalogue import metric_definition
from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import PlanSpec, parse_plan
from cx_app.errors import CxAppError
from cx_app.reports import charts
from cx_app.reports.definitions import GROUPING_OPTIONS
from pages import common

MULTICLASS_KEYS = ["accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr",
                   "precision_micro", "recall_micro"]
RULES = {"predicted_ge_actual": "predicted ≥ actual", "predicted_le_actual": "predicted ≤ actual",
         "pairs": "declared pairs"}
COUNT_KEYS = {"tp", "fn", "fp", "tn", "imp", "imn", "n", "p_actual", "p_pred", "n_actual",
              "n_pred"}

a = common.analysis()
st.title("Confusion matrices")
common.survey_caption(a)
if common.need_models(a):
    st.stop()


# --------------------------------------------------------------------------- grouping editor


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
                              help=" ".join(f"{o.code}: {o.words}"
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


with st.expander("Grouping editor: how classes are grouped, step by step", expanded=False):
    st.caption("Changes apply at once to every matrix, metric and ROC of every trained model; "
               "nothing is retrained. " + " ".join(
                   f"{o.code} = {o.name.lower()}: {o.words}" for o in GROUPING_OPTIONS.values()))
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
        st.markdown(f"**Step {k + 1}: {common.md_escape(step.name)}**")
        out = step_editor(k, step, previous, renamed)
        steps_out.append(out)
        renamed = {old.name: new["name"] for old, new in zip(step.groups, out["groups"],
                                                             strict=False)}
        previous = [g["name"] for g in out["groups"]]
    try:
        candidate = parse_plan({"classes": list(a.classes), "plan": steps_out},
                               source="grouping editor")
        resolve_plan(candidate, a.classes)
    except CxAppError as exc:
        st.error(f"The grouping is not valid yet, the matrices below use the last valid one: "
                 f"{exc}")
    else:
        if candidate.model_dump(mode="json") != a.plan.model_dump(mode="json"):
            a.set_plan(PlanSpec(classes=a.plan.classes, plan=candidate.plan))
    plan_yaml = yaml.safe_dump(a.plan.model_dump(mode="json", exclude_none=True),
                               sort_keys=False, allow_unicode=True)
    st.download_button("Download this plan (YAML)", data=plan_yaml, file_name="plan.yaml",
                       mime="application/x-yaml", key="dl_plan", on_click="ignore")

resolved = common.run_safely(a.resolved_plan, what="Reduction plan")
if resolved is None:
    st.stop()

# --------------------------------------------------------------------------- matrices

model_id = st.selectbox("Model", list(a.models), key="cm_model")
levels = common.run_safely(lambda: a.levels(model_id))
if levels is None:
    st.stop()
st.caption("Rows: actual class · columns: predicted class · shading: share of the actual row · "
           "orange dashed cells: intragroup mismatch (IM), the IM column being the IM row "
           "transposed · outlined: correct cells.")
original, *reduced = levels
st.altair_chart(charts.confusion_heatmap(original.to_frame(),
                                         title=f"{model_id}: original {len(original.labels)}"
                                               f"×{len(original.labels)}"), width="content")
for level in reduced:
    title = f"{model_id}: {level.name}"
    if level.positive:
        title += f" (positive: {level.positive})"
    st.altair_chart(charts.confusion_heatmap(level.to_frame(), title=title), width="content")
    if level.note:
        st.text(level.note)

with st.expander("Matrices as tables"):
    for level in levels:
        st.text(level.name)
        common.table(level.to_frame(), key=f"matrix_{level.name}", hide_index=False,
                     file_name=f"confusion_{level.name}.csv")


# --------------------------------------------------------------------------- metrics


def metric_table(index: int) -> tuple[pd.DataFrame, dict, list[str]]:
    binary = levels[index].is_binary
    keys = list(BINARY_KEYS) if binary else MULTICLASS_KEYS
    rows = []
    for mid in a.models:
        metrics = a.levels(mid)[index].metrics
        rows.append({"model": mid, **{k: metrics.get(k) for k in keys}})
    frame = pd.DataFrame(rows)
    config, percent = {}, []
    for k in keys:
        d = metric_definition(k, binary=binary)
        help_text = f"{d.words} {d.formula}" if d else None
        title = d.name if d else k
        if k in COUNT_KEYS:
            config[k] = st.column_config.NumberColumn(title, help=help_text, format="%.0f")
        elif d is not None and d.percent:
            config[k] = st.column_config.NumberColumn(title, help=help_text, format="%.1f%%")
            percent.append(k)
        else:
            config[k] = st.column_config.NumberColumn(title, help=help_text, format="%.3f")
    return frame, config, percent


st.subheader("Metrics of every model")
st.caption("Hover a column header for its definition; rates in percent.")
for index, level in enumerate(levels):
    frame, config, percent = metric_table(index)
    st.markdown(f"**{common.md_escape(level.name)}**"
                + (f" · positive group: {common.md_escape(level.positive)}"
                   if level.positive else ""))
    common.table(common.scale_percent(frame, percent), key=f"metrics_{index}",
                 file_name=f"metrics_{level.name}.csv", column_config=config, csv_frame=frame)

with st.expander(f"Per-class metrics of {model_id}"):
    for level in levels:
        per_class = pd.DataFrame.from_dict(level.metrics["per_class"], orient="index")
        per_class.index = per_class.index.map(str)
        st.text(level.name)
        common.table(per_class.reset_index(names="class"), key=f"per_class_{level.name}",
                     file_name=f"per_class_{level.name}.csv")

with st.expander("Definitions"):
    for index, level in enumerate([levels[0], *[lv for lv in levels if lv.is_binary][:1]]):
        keys = list(BINARY_KEYS) if level.is_binary else MULTICLASS_KEYS
        defs = [metric_definition(k, binary=level.is_binary) for k in keys]
        table = pd.DataFrame([{"metric": d.name, "meaning": d.words, "formula": d.formula,
                               "source": d.source} for d in defs if d is not None])
        st.text("2×2+IM metrics" if level.is_binary else "Multiclass metrics")
        common.table(table, key=f"definitions_{index}", file_name="definitions.csv")
