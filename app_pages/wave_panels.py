"""The New wave page's parts: the program's waves (add, estimate, track, remove) and one
wave's details. Not a page itself; the waves live in the workspace program.

What the page draws from a program is cached (``st.cache_data``, bounded in entries and age
like the caches of :mod:`app_pages.common`): the tracker's table and chart spec, and a wave's
ALP matrix charts. Each key holds the workspace, the person the page acts for (in team mode
two people may see different programs) and the program's version: :mod:`cx_app.app.cache_keys`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from app_pages import common, lifecycle, team_mode
from cx_app.app import cache_keys, views
from cx_app.app.cache_keys import program_key
from cx_app.app.session import Analysis
from cx_app.engine.catalogue import metric_name
from cx_app.engine.grouping import resolve_plan
from cx_app.estimate.tracker import split_waves
from cx_app.reports import chart_specs, charts
from cx_app.reports.definitions import ALP, TRACKER_HEADERS, explain
from cx_app.reports.program_tracker import program_tracker_frame
from cx_app.safe_text import to_safe_csv
from cx_app.survey.vocabulary import vocabulary
from cx_app.workspace.services import part_key
from cx_app.workspace.views import ProgramView, WaveView

BUNDLED = {
    "Bundled wave 7 (unlabeled)": "telecom_nps_wave7_unlabeled",
    "Bundled wave 7 (labeled, for a backtest)": "telecom_nps_wave7_labeled",
}
ADDED = "nw_added"  # SHA-256 of the uploads already added to the program in this session
CACHED = 64  # entries of each cache of this module


def _viewer() -> dict[str, str]:
    """The workspace and the person the page acts for: the first parts of every cache key."""
    return {"workspace_url": st.session_state.get(common.WORKSPACE_URL, ""),
            "user": team_mode.current_user()}


def _program_key(view: ProgramView) -> tuple:
    return program_key(view, **_viewer())


def add_waves(name: str, files: list, bundled: list[str], label: str = "",
              audit=None) -> None:
    """Add the uploaded files and the chosen bundled waves to the program (content-addressed:
    the same file twice is one wave); each file once per session. ``label``: the analyst's
    label for a single new file (else its wave column or file name labels it); ``audit``:
    an uploaded audit sample of that one new wave (:mod:`cx_app.estimate.audit`)."""
    from cx_app.provenance import sha256_hex

    added: set = st.session_state.setdefault(ADDED, set())
    items = [(f.getvalue(), f.name) for f in files or []]
    items += [tuple(reversed(common.sample_bytes(BUNDLED[b]))) for b in bundled]
    workspace = common.workspace()
    sample = None if audit is None else (audit.getvalue(), audit.name)
    if sample is not None and len(items) > 1:
        st.warning("An audit sample belongs to one wave: add one wave file with it.")
        return
    audit_sha = None if sample is None else sha256_hex(sample[0])
    new = [(data, filename) for data, filename in items
           if (name, sha256_hex(data), audit_sha) not in added]
    given = label.strip() or None if len(new) == 1 else None
    for data, filename in new:
        key = (name, sha256_hex(data), audit_sha)
        result = common.run_safely(
            lambda data=data, filename=filename: workspace.add_waves(
                name, [(data, filename)], label=given, audit_sample=sample),
            what=filename)
        if result is None:
            continue
        added.add(key)
        for wave in result:
            (st.success if wave.status == "added" else st.info)(common.md_escape(
                wave.describe()))


def audit_summary(wave: WaveView) -> None:
    """The audit of a wave added with an audit sample: the audited score, what it adds and
    whether the label-free estimate holds (:mod:`cx_app.estimate.audit`)."""
    audit = wave.estimate.audit
    if audit is None:
        return
    (st.warning if audit.shift_detected else st.info)(common.md_escape(
        f"{audit.headline()}. {audit.shift_test.sentence[0].upper()}"
        f"{audit.shift_test.sentence[1:]}."))
    for note in audit.notes:
        st.caption(common.md_escape(note))
    if audit.excluded:
        st.caption(common.md_escape(
            f"{len(audit.excluded)} row(s) of the audit sample left out: " + "; ".join(
                f"row {r.row}: {r.reason}" for r in audit.excluded[:20])
            + (" …" if len(audit.excluded) > 20 else "")))


def bundled_choice(a: Analysis, name: str) -> list[str]:
    """On the bundled sample: its bundled waves, added by a button each (the unlabelled one
    added by itself the first time the sample's program has no wave, so that a newcomer sees
    an estimate at once)."""
    if a.survey.source.filename != common.sample_bytes(common.SAMPLE_NAME)[0]:
        return []
    chosen = [label for i, label in enumerate(BUNDLED)
              if st.button(common.md_escape(f"Add {label[0].lower()}{label[1:]}"),
                         key=f"nw_bundled_{i}")]
    first = ("sample wave", name)
    if first not in st.session_state.setdefault(ADDED, set()):
        st.session_state[ADDED].add(first)
        if lifecycle.analysis_store().wave_count(name) == 0:
            chosen.append(next(iter(BUNDLED)))
    return chosen


@dataclass(frozen=True)
class TrackerParts:
    """What the tracker draws: its table (rounded), its chart's Vega-Lite spec and the number
    of changes tested."""

    table: pd.DataFrame
    chart: dict
    changes: int


@st.cache_data(max_entries=CACHED, ttl=common.TTL, show_spinner=False)
def tracker_parts(key: tuple, by: str | None, score: str, _view: ProgramView) -> TrackerParts:
    """The tracker of ``_view`` by the segment ``by`` (``key``: :func:`program_key` of
    ``_view``)."""
    table = program_tracker_frame(_view, by)
    chart = charts.nps_trend_chart(table.dropna(subset=["nps"]), wave_title="Wave",
                                   score_title=score)
    return TrackerParts(table.round(2), chart_specs.vega_lite_spec(chart),
                        int(table["p"].notna().sum()))


def tracker(view: ProgramView, score: str, segments: dict[str, str]) -> None:
    """The tracker over every wave of the program (wave order), by segment on request, with
    the realized score of labelled waves beside the estimate."""
    by = st.selectbox("By segment", [None, *segments], key="nw_by", persist_state="session",
                      format_func=lambda s: "all respondents only" if s is None
                      else segments[s])
    parts = tracker_parts(_program_key(view), by, score, view)
    st.vega_lite_chart(parts.chart, width="stretch")
    covers = view.waves[0].estimated_nps.covers
    st.caption("Estimated from the model's probabilities (ALP); ◆ the realized "
               f"{common.md_escape(score)} of a "
               f"labelled wave. 95% intervals cover {common.md_escape(covers)}. ▲ / ▼: a "
               "significant change from the previous wave of the same line (z test on both "
               "estimates with their whole uncertainty, Holm-adjusted over the "
               f"{int(parts.changes)} changes, 5%). Waves in wave order (date, "
               "then label), whenever they were added.")
    common.table(parts.table, key="nw_tracker", file_name="tracker.csv",
                 headers={**TRACKER_HEADERS, "nps": f"Estimated {score}"})


def remove_wave(name: str, view: ProgramView) -> None:
    """Remove one wave of the program (and its estimates). The expander keeps its state (open
    or closed) through the page's runs; the wave is removed by the button's callback, before
    the run that shows the program without it (one run, not two)."""
    with st.expander("Remove a wave", key="nw_remove_open", on_change="rerun"):
        labels = [f"{w.label} · {w.filename} · {w.sha256[:12]}" for w in view.waves]
        chosen = st.selectbox("Wave", labels, index=None, key="nw_remove")
        if chosen is not None:
            wave = view.waves[labels.index(chosen)]
            st.button("Remove this wave", key="nw_remove_go", on_click=_remove,
                      args=(name, wave.label, wave.sha256))


def _remove(name: str, label: str, sha256: str) -> None:
    common.run_safely(lambda: common.workspace().remove_wave(name, label, sha256=sha256))


def wave_key(name: str, model_key: str, wave: WaveView) -> tuple:
    """The key of what is cached from one wave's estimate by the model ``model_key``."""
    return cache_keys.wave_key(name, model_key, wave, **_viewer())


def wave_estimate(a: Analysis, name: str, model, model_key: str, wave: WaveView):
    """The full estimate of one stored wave (matrices, drift, predictions), computed again from
    the file the program keeps; None when the file is not kept."""
    data = lifecycle.analysis_store().kept_file(name, wave.sha256)
    if data is None:
        return None
    survey = common.cached_survey(data, wave.filename or "wave", None, model.schema_yaml,
                                  require_target=False, require_attributes=False,
                                  scoring=True)
    parts = split_waves(survey)
    part = next((p for p in parts if part_key(p, len(parts)) == wave.part), None)
    if part is None:
        return None
    return a.stored_wave_estimate(model, model_key, wave.sha256, wave.part, part)


def adhoc_waves(model) -> None:
    """Waves scored by an uploaded model file (not a model of this analysis): estimated here
    for this session only, not kept in a program."""
    from cx_app.estimate.tracker import track_waves, tracker_frame

    if team_mode.viewer_only():  # a viewer uploads nothing (issue 33)
        return
    files = st.file_uploader("Upload one or more waves (.xlsx, .xls, .ods, .csv)",
                             type=common.SURVEY_TYPES, key="nw_adhoc_files",
                             accept_multiple_files=True)
    items = [(f.getvalue(), f.name) for f in files or []]
    if not items and model.training.filename == common.sample_bytes(common.SAMPLE_NAME)[0]:
        filename, data = common.sample_bytes(next(iter(BUNDLED.values())))
        items = [(data, filename)]  # a model of the sample: its bundled wave to start with
    if not items:
        st.info("Upload the wave(s) to estimate with this model file. To keep waves in a "
                "program, estimate them with a model trained in the app.")
        st.stop()
    surveys = common.run_safely(lambda: [
        part for data, filename in items for part in split_waves(common.cached_survey(
            data, filename, None, model.schema_yaml, require_target=False,
            require_attributes=False, scoring=True))])
    tracked = None if surveys is None else common.run_safely(lambda: track_waves(model, surveys))
    if not tracked:
        st.stop()
    score = common.md_escape(vocabulary(model.schema).title)
    if len(tracked) > 1:
        table = tracker_frame(tracked)
        st.altair_chart(charts.nps_trend_chart(table.dropna(subset=["nps"]),
                                               score_title=score), width="stretch")
        common.table(table.round(2), key="nw_adhoc_tracker", file_name="tracker.csv",
                     headers={**TRACKER_HEADERS, "nps": f"Estimated {score}"})
    names = [t.file for t in tracked]
    chosen = st.selectbox("Details of wave", names, index=len(names) - 1, key="nw_adhoc_detail")
    estimate = tracked[names.index(chosen)].estimate
    st.session_state["last_wave_estimate"] = common.run_safely(estimate.document)
    details(estimate, score, chosen, model.schema.plan_spec)


def details(estimate, score: str, filename: str, plan_spec, key: tuple | None = None) -> None:
    """One wave's estimates, realized values, metrics, ALP matrices, drift and predictions
    (``key``: :func:`wave_key` of a program's wave; None: not cached)."""
    common.warnings(estimate.warnings)
    nps = estimate.estimated_nps
    c1, c2, c3 = st.columns(3)
    c1.metric(f"Estimated {common.md_escape(score)}", f"{nps.value:+.1f}",
              help=f"95% interval {nps.ci95[0]:+.1f} to {nps.ci95[1]:+.1f}: it covers "
                   f"{common.md_escape(nps.covers)}")
    c2.metric("Estimated accuracy", common.pct(estimate.estimated["accuracy"]),
              help=common.md_escape(explain(ALP)))
    c3.metric("Respondents", f"{estimate.n:,}")
    st.text(f"Estimated {score} {nps.value:+.1f} (95% interval {nps.ci95[0]:+.1f} to "
            f"{nps.ci95[1]:+.1f})")
    for alert in estimate.alerts:  # estimated accuracy and net score against their limits
        (st.warning if alert.alert else st.caption)(common.md_escape(alert.sentence()))
    if estimate.realized_nps is not None:
        r = estimate.realized_nps
        st.text(f"Realized {score} {r.value:+.1f} (95% interval {r.ci95[0]:+.1f} to "
                f"{r.ci95[1]:+.1f}); realized accuracy "
                f"{common.pct(estimate.realized['accuracy'])}")
    metrics = pd.DataFrame([r.to_dict() for r in estimate.metric_comparison()]).rename(
        columns={"estimated": "estimated (ALP)"})
    values = [c for c in metrics.columns if c not in ("level", "metric")]
    shown = metrics.assign(metric=metrics["metric"].map(metric_name))  # the CSV keeps keys
    common.table(common.scale_percent(shown, values), key="nw_metrics",
                 file_name="wave_metrics.csv", csv_frame=metrics,
                 headers=views.WAVE_METRIC_HEADERS,
                 column_config={c: st.column_config.NumberColumn(c, format="%.1f%%")
                                for c in values})
    alp_matrices(estimate, plan_spec, key)
    st.subheader("Drift against the training data")
    labels = {a.name: a.display for a in lifecycle.analysis().survey.schema.attributes}
    common.table(views.drift_table(estimate.drift, labels), key="nw_drift",
                 file_name="wave_drift.csv")
    st.subheader("Per-respondent predictions")
    predictions = estimate.predictions_frame()
    st.dataframe(predictions.head(200), hide_index=True, key="df_predictions",
                 column_config=common.plain_config(predictions, {
                     c: {"label": h} for c, h in views.prediction_headers(predictions).items()}))
    st.download_button("Download all predictions (CSV)", data=lambda: to_safe_csv(predictions),
                       file_name=f"predictions_{Path(filename).stem}.csv", mime="text/csv",
                       key="dl_predictions", on_click="ignore")


@st.cache_data(max_entries=CACHED, ttl=common.TTL, show_spinner=False)
def alp_chart_specs(key: tuple, grouping: tuple[tuple[str, str], ...],
                    _estimate) -> list[dict]:
    """:func:`alp_specs` of a program's wave (``key``: :func:`wave_key`)."""
    return alp_specs(grouping, _estimate)


def alp_specs(grouping: tuple[tuple[str, str], ...], estimate) -> list[dict]:
    """The Vega-Lite specs of the wave's ALP matrices, the reduced levels titled by their
    ``grouping`` (level name, grouping in words)."""
    names = dict(grouping)
    original, *reduced = estimate.levels
    chart_list = [charts.confusion_heatmap(original.to_frame(), count_format=",.1f",
                                           title="Estimated (ALP), original classes")]
    chart_list += [charts.confusion_heatmap(
        level.to_frame(), count_format=",.1f",
        title=f"Estimated (ALP), {level.name}, {names.get(level.name, 'grouping')}")
        for level in reduced]
    return [chart_specs.vega_lite_spec(chart) for chart in chart_list]


def alp_matrices(estimate, plan_spec, key: tuple | None = None) -> None:
    """The wave's confusion matrices estimated from the model's probabilities (ALP): the
    original classes, then each reduced level with its grouping (cached under ``key``; None:
    drawn afresh)."""
    st.subheader("Confusion matrix estimated from the model's probabilities (ALP)")
    st.caption("Rows: estimated actual class (each respondent counts with the model's probability "
               "of every class) · columns: predicted class. Real-valued counts; no scores needed. "
               "See the Glossary page.")
    grouping = common.run_safely(lambda: views.grouping_by_level(
        resolve_plan(plan_spec, estimate.classes))) or {}
    groups = tuple(sorted(grouping.items()))
    specs = (alp_specs(groups, estimate) if key is None
             else alp_chart_specs(key, groups, estimate))
    for spec in specs:
        st.vega_lite_chart(spec, width="content")
