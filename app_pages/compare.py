"""Compare: ROC of the 2×2+IM with the random-selection line, AUC bars, one-vs-rest ROC of the
original classes, pairwise t-tests (plain and corrected, Holm-adjusted) and the φ–δ rhombus
with one point per fold and model. Everything comes from the cached CV predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app_pages import common, lifecycle
from cx_app.app import views
from cx_app.engine.catalogue import lower_is_better, metric_name
from cx_app.models.comparison import compare_models, format_p, holm
from cx_app.models.names import model_display_name
from cx_app.reports import charts
from cx_app.reports.definitions import auc_reading, plain_name

a = lifecycle.analysis()
st.title("Compare models")
common.survey_caption(a)
if common.need_models(a):
    st.stop()

chosen = st.multiselect("Models", list(a.models), default=list(a.models), key="cmp_models",
                        format_func=model_display_name)
if not chosen:
    st.stop()
evals = common.run_safely(lambda: {model_display_name(m): a.evaluation(m) for m in chosen})
if evals is None:
    st.stop()
first = next(iter(evals.values()))  # evaluations by the models' display names
levels = first.levels
binary = [lv for lv in levels if lv.is_binary]
grouping = common.run_safely(lambda: views.grouping_by_level(a.resolved_plan())) or {}

# --------------------------------------------------------------------------- ROC of the 2x2+IM
if binary:
    level = binary[-1]
    grouped = grouping.get(level.name, "grouping")
    st.subheader(f"ROC of the {common.md_escape(level.name)}, {common.md_escape(grouped)} "
                 f"(positive: {common.md_escape(plain_name(level.positive))})")
    st.caption("Score = summed probability of the positive group's classes. The curve ends at "
               "TPR = TP/P_actual of the most likely prediction (below 1 when the positive group "
               "has intragroup mismatch); the dashed line is random selection up to that point. "
               "Read each AUC against its random-selection area (grey bar), not against 0.5: "
               "with intragroup mismatch both are below 0.5.")
    curves, aucs = [], []
    for m, ev in evals.items():
        roc = ev.roc[level.name]
        curves.append(pd.DataFrame({"model": m, "fpr": roc.fpr, "tpr": roc.tpr}))
        aucs.append({"model": m, "auc": roc.auc, "random_auc": roc.random_auc})
    auc_frame = pd.DataFrame(aucs)
    randoms = charts.random_selection_lines({m: ev.roc[level.name].tpr[-1]
                                             for m, ev in evals.items()})
    left, right = st.columns([3, 2])
    left.altair_chart(charts.roc_chart(pd.concat(curves), randoms,
                                       title=f"ROC, {level.name}, {grouped}"), width="content")
    right.altair_chart(charts.auc_bars(auc_frame, title=f"AUC, {level.name}, {grouped}"),
                       width="stretch")
    for row in aucs:
        st.text(auc_reading(row["model"], row["auc"], row["random_auc"]))
    with right:
        common.table(auc_frame, key="auc", file_name=f"auc_{level.name}.csv",
                     headers={"model": "Model", "auc": "AUC", "random_auc": "AUC of random "
                              "selection"}, column_config={c: st.column_config.NumberColumn(
                                  format="%.3f") for c in ("auc", "random_auc")})

# --------------------------------------------------------------------------- one-vs-rest ROC
st.subheader("One-vs-rest ROC of the original classes")
ovr_model = st.selectbox("Model", chosen, key="ovr_model", format_func=model_display_name)
ovr = a.ovr_roc(ovr_model)
frames = [pd.DataFrame({"model": f"class {c}", "fpr": curve.fpr, "tpr": curve.tpr})
          for c, curve in ovr.curves.items() if curve is not None]
if frames:
    diagonal = charts.random_selection_lines({"random": 1})
    st.altair_chart(charts.roc_chart(pd.concat(frames), diagonal,
                                     title=f"{model_display_name(ovr_model)}: one curve per class"), width="content")
per_class = pd.DataFrame({m: {str(c): v for c, v in ev.roc["original"].per_class_auc.items()}
                          for m, ev in evals.items()})
per_class.index.name = "class"
macro = {m: ev.roc["original"].auc for m, ev in evals.items()}
st.text("Macro-average AUC: " + ", ".join(f"{m} {v:.3f}" for m, v in macro.items()))
if ovr.undefined:
    st.text(f"No curve for classes absent from the data: {list(ovr.undefined)}")
common.table(per_class.round(3).reset_index(), key="ovr_auc", file_name="ovr_auc.csv", headers={"class": "Class", **{m: f"AUC, {model_display_name(m)}" for m in evals}})

# --------------------------------------------------------------------------- t-tests
st.subheader("Are the differences real? Paired t-tests over the folds")
if len(chosen) < 2:
    st.info("Choose at least two models to compare them.")
else:
    c1, c2 = st.columns(2)
    level_names = [lv.name for lv in levels]
    test_level = c1.selectbox("Level", level_names, index=len(level_names) - 1, key="t_level",
                              format_func=lambda n: f"{n}, {grouping[n]}" if n in grouping
                              else n)
    if (note := views.baseline_note(a, level_names.index(test_level))) is not None:
        (st.warning if note[1] else st.caption)(common.md_escape(note[0]))
    metric_keys = list(first.per_fold[test_level])
    preferred = "f1" if "f1" in metric_keys else "f1_macro"
    metric = c2.selectbox("Metric", metric_keys, index=metric_keys.index(preferred),
                          format_func=metric_name, key="t_metric")
    comparisons = common.run_safely(lambda: compare_models(evals, test_level, metric))
    if comparisons:
        plain_holm = holm([c.p for c in comparisons])
        rows = []
        for c, ph in zip(comparisons, plain_holm, strict=True):
            for test, p in (("plain t-test, Holm-adjusted", ph),
                            ("corrected t-test (Nadeau–Bengio), Holm-adjusted", c.p_holm)):
                rows += [{"test": test, "model_a": x, "model_b": y, "p_value": p, "mean_difference": d}
                         for x, y, d in ((c.a, c.b, c.mean_diff), (c.b, c.a, -c.mean_diff))]
        st.altair_chart(charts.pvalue_heatmap(pd.DataFrame(rows), lower_is_better=lower_is_better(metric)), width="content")
        st.write(f"**Reading** (corrected test, Holm-adjusted over {len(comparisons)} pair(s)):")
        for c in comparisons:
            st.text(c.verdict)
        table = pd.DataFrame([{
            "Model A": model_display_name(c.a), "Model B": model_display_name(c.b), "Mean A":
            c.mean_a, "Mean B": c.mean_b, "Mean A − B": c.mean_diff, "t (plain)": c.t, "p (plain)": c.p, "p (plain, Holm)": ph,
            "t (corrected)": c.t_corrected, "p (corrected)": c.p_corrected,
            "p (corrected, Holm)": c.p_holm} for c, ph in zip(comparisons, plain_holm, strict=True)])
        common.table(table, key="ttests", file_name=f"ttests_{test_level}_{metric}.csv",
                     column_config={col: st.column_config.NumberColumn(col, format="%.4f")
                                    for col in table.columns[2:]})  # after model A, model B
        st.caption("The plain test over k folds is known to be too liberal (the training sets "
                   "overlap); the corrected test widens the variance by the ratio of the test-fold to the training-fold size. "
                   f"Smallest p shown as {common.md_escape(format_p(min(c.p_holm for c in comparisons)))}.")

# --------------------------------------------------------------------------- rhombus
if binary:
    level = binary[-1]
    st.subheader(f"φ–δ rhombus of the {common.md_escape(level.name)}, "
                 f"{common.md_escape(grouping.get(level.name, 'grouping'))}: one point per fold")
    st.caption("δ = TPR − FPR (discriminant capability: higher is better); φ = TPR + FPR − 1 "
               "(characteristic capability: how much the model leans towards the positive "
               "group). A tight cloud means a stable model.")
    points = []
    for m, ev in evals.items():
        values = ev.per_fold[level.name]
        for f, (phi, delta) in enumerate(zip(values["phi"], values["delta"], strict=True)):
            points.append({"series": m, "label": f"fold {f + 1}", "phi": phi, "delta": delta})
    frame = pd.DataFrame(points)
    st.altair_chart(charts.rhombus_chart(frame), width="content")
    summary = frame.groupby("series")[["phi", "delta"]].agg(["mean", "std"])
    summary.columns = [f"{a_} {b_}" for a_, b_ in summary.columns]
    common.table(summary.round(4).reset_index(names="model"), key="rhombus", file_name="phi_"
                 "delta_per_model.csv", headers={"model": "Model", **{f"{k} {s_}": f"{sym}, {w}" for k, sym in (
                     ("phi", "φ"), ("delta", "δ")) for s_, w in (("mean", "mean over the folds"), ("std", "standard deviation"))}})
    if np.isnan(frame[["phi", "delta"]].to_numpy(dtype=float)).any():
        st.text("Some folds have an undefined rate (no positive or no negative respondent).")
