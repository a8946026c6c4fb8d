"""Tables the pages show, built from an :class:`~cx_app.app.session.Analysis` (no widgets).

The pages render them, the tests check them. Also the grouping editor's plan check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml

from cx_app.engine.binary import BINARY_KEYS
from cx_app.engine.catalogue import (
    BINARY_SUMMARY,
    MULTICLASS_ALL,
    MULTICLASS_SUMMARY,
    metric_definition,
    metric_name,
)
from cx_app.models.analysis import BEST_MODEL_RULE, rank_models
from cx_app.reports.definitions import grouping_name

if TYPE_CHECKING:
    from cx_app.app.session import Analysis
    from cx_app.engine.levels import Level
    from cx_app.engine.plan import PlanSpec
    from cx_app.survey.schema import SurveySchema

GAP_COLUMNS: tuple[str, str] = ("estimated − real accuracy (ALP)", "class-share gap")

TRAINED_MODEL_HEADERS: dict[str, str] = {
    "model": "Model", "algorithm": "Algorithm", "preset": "Preset",
    "calibration": "Probability calibration", "folds": "Folds", "seed": "Seed",
    "fit seconds": "Fit time (seconds)", "respondents": "Respondents",
    "survey weights": "Survey weights",
    GAP_COLUMNS[0]: "Estimated − real accuracy (ALP)", GAP_COLUMNS[1]: "Class-share gap",
}

IMPORTANCE_HEADERS: dict[str, str] = {
    "attribute": "Attribute", "importance": "Importance", "ci_low": "95% low",
    "ci_high": "95% high", "direction": "Direction (+1: higher rating, higher score)"}

QUADRANT_HEADERS: dict[str, str] = {
    "attribute": "Attribute", "importance": "Importance (% of R²)",
    "performance": "Performance (mean rating)", "base": "Respondents who answered",
    "na_share": "Unanswered share", "direction": "Direction",
    "performance_pct": "Performance (% of its scale)", "importance_low": "Importance 95% low",
    "importance_high": "Importance 95% high", "importance_vs_others": "Importance vs the others",
    "importance_p_holm": "Importance p (Holm)", "performance_p_holm": "Performance p (Holm)",
    "performance_low": "Performance 95% low", "performance_high": "Performance 95% high",
    "performance_vs_others": "Performance vs the others", "quadrant": "Quadrant"}

CAPABILITY_HEADERS: dict[str, str] = {
    "attribute": "Attribute", "target": "Target group", "base": "Respondents who answered",
    "top_box_share": "Top-box share", "tpr": "True positive rate (TPR)",
    "fpr": "False positive rate (FPR)", "delta": "Discriminant capability (δ)",
    "phi": "Characteristic capability (φ)"}

WAVE_METRIC_HEADERS: dict[str, str] = {
    "level": "Level", "metric": "Measure", "estimated (ALP)": "Estimated (ALP)",
    "ci_low": "95% low", "ci_high": "95% high", "realized": "Realized"}


@dataclass(frozen=True)
class MetricTable:
    frame: pd.DataFrame
    percent_columns: tuple[str, ...]
    number_columns: tuple[str, ...]


def leaderboard(analysis: Analysis, level_index: int) -> MetricTable:
    """Every trained model's headline metrics at one level, best model first by the one
    best-model rule."""
    rows, means, binary = [], {}, False
    for model_id in analysis.models:
        level = analysis.levels(model_id)[level_index]
        binary = binary or level.is_binary
        keys = BINARY_SUMMARY if level.is_binary else MULTICLASS_SUMMARY
        rows.append({"model": model_id, **{metric_name(k, binary=level.is_binary):
                                           level.metrics.get(k) for k in keys}})
        means[model_id] = analysis.evaluation(model_id).mean(level.name, BEST_MODEL_RULE[1])
    order = {m: i for i, m in enumerate(rank_models(means, BEST_MODEL_RULE[1]))}
    frame = pd.DataFrame(rows).sort_values("model", key=lambda s: s.map(order),
                         ignore_index=True)
    keys = BINARY_SUMMARY if binary else MULTICLASS_SUMMARY
    percent = tuple(metric_name(k, binary=binary) for k in keys
                    if metric_definition(k, binary=binary).format == "percent")
    number = tuple(metric_name(k, binary=binary) for k in keys
                   if metric_name(k, binary=binary) not in percent)
    return MetricTable(frame, percent, number)


def baseline_note(analysis: Analysis, level_index: int) -> tuple[str, bool] | None:
    """The leaderboard's baseline in words (the same rule as results.json) and whether any
    model is below it; None without scores or models."""
    from cx_app.models.baseline import below_baseline, majority_baseline
    from cx_app.models.names import model_display_name
    from cx_app.reports.definitions import plain_name

    if analysis.survey.y is None or not analysis.models:
        return None
    baseline = majority_baseline(analysis.survey.y, analysis.resolved_plan())
    level_name = analysis.levels(next(iter(analysis.models)))[level_index].name
    if level_name not in baseline:
        return None
    base = baseline[level_name]
    below = [model_display_name(m) for m in analysis.models
             if below_baseline({level_name: analysis.levels(m)[level_index].metrics.get(
                 "accuracy")}, baseline)]
    text = (f"Baseline: always answering {plain_name(base['class'])} is right for "
            f"{base['accuracy']:.1%} of respondents at this level. ")
    if below:
        return text + (f"Below it: {', '.join(below)}; such a model is no better than no "
                       "model here."), True
    return text + "Every model here beats it.", False


def level_metric_table(analysis: Analysis, level_index: int) -> MetricTable:
    """Every metric of every trained model at one level, one column per metric key."""
    binary = any(analysis.levels(m)[level_index].is_binary for m in analysis.models)
    keys = list(BINARY_KEYS) if binary else list(MULTICLASS_ALL)
    keys = [k for k in keys if any(k in analysis.levels(m)[level_index].metrics
                                   for m in analysis.models)]
    frame = pd.DataFrame([{"model": m, **{k: analysis.levels(m)[level_index].metrics.get(k)
                                          for k in keys}} for m in analysis.models])
    formats = {k: metric_definition(k, binary=binary).format for k in keys}
    return MetricTable(frame, tuple(k for k in keys if formats[k] == "percent"),
                       tuple(k for k in keys if formats[k] == "number"))


def per_class_table(level: Level) -> pd.DataFrame:
    frame = pd.DataFrame.from_dict(level.metrics["per_class"], orient="index")
    frame.index = frame.index.map(str)
    return frame.reset_index(names="class")


def per_class_headers(frame: pd.DataFrame) -> dict[str, str]:
    return {"class": "Class", **{k: metric_name(k) for k in frame.columns
                                 if metric_definition(k) is not None}}


DEFINITION_HEADERS: dict[str, str] = {"metric": "Measure", "meaning": "Meaning",
                                      "formula": "Formula", "source": "Source"}


def prediction_headers(frame: pd.DataFrame) -> dict[str, str]:
    fixed = {"respondent_id": "Respondent ID", "sheet_row": "Row in the sheet",
             "predicted": "Predicted score", "group": "Predicted group"}
    return {c: fixed.get(c) or (f"Probability of {c[2:]}" if c.startswith("p_") else c)
            for c in map(str, frame.columns)}


def definitions_table(binary: bool) -> pd.DataFrame:
    keys = BINARY_KEYS if binary else MULTICLASS_ALL
    defs = [metric_definition(k, binary=binary) for k in keys]
    return pd.DataFrame([{"metric": d.name, "meaning": d.words, "formula": d.formula,
                          "source": d.source} for d in defs if d is not None])


def trained_models_table(analysis: Analysis) -> tuple[pd.DataFrame, list[str]]:
    """One row per trained model and the calibration advice for those whose gap is large."""
    from cx_app.estimate.calibration import gap_advice
    from cx_app.models.algorithms import ALGORITHMS

    rows, advice = [], []
    for m in analysis.models.values():
        gap = analysis.held_out_gap(m.model_id)
        name = ALGORITHMS[m.algorithm_id].name
        rows.append({"model": m.model_id, "algorithm": name,
                     "preset": getattr(m.cv, "preset", "papers"),
                     "calibration": m.cv.calibration, "folds": m.folds, "seed": m.seed,
                     "fit seconds": m.cv.fit_seconds, "respondents": m.cv.n,
                     GAP_COLUMNS[0]: gap.accuracy_gap, GAP_COLUMNS[1]: gap.share_gap,
                     "Net score gap (points)": gap.net_gap}
                    | ({} if m.cv.weighted is None else {"survey weights": "used" if m.cv.weighted
                        else f"not used: {m.cv.unweighted_reason}"}))
        text = gap_advice(gap, f"{name} ({m.model_id})", m.cv.calibration)
        if text:
            advice.append(text)
    return pd.DataFrame(rows), advice


def setting_text(value: Any) -> str:
    """A setting that is not a bool, number or text as one line of YAML: ``(1, 2)`` → ``'[1, 2]'``."""
    shown = list(value) if isinstance(value, tuple) else value
    return yaml.safe_dump(shown, default_flow_style=True).replace("\n...\n", "").strip()


def parse_setting(text: str, default: Any) -> Any:
    """:func:`setting_text` read back: a list becomes a tuple when the default is one."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"'{text}' is not a valid value") from exc
    return tuple(value) if isinstance(default, tuple) and isinstance(value, list) else value


def edited_plan(current: PlanSpec, classes: Sequence,
                steps: Sequence[Mapping[str, Any]]) -> PlanSpec | None:
    """The plan the grouping editor's ``steps`` describe, checked against ``classes``; None
    when it is ``current``."""
    from cx_app.engine.grouping import resolve_plan
    from cx_app.engine.plan import PlanSpec, parse_plan

    candidate = parse_plan({"classes": list(classes), "plan": [dict(s) for s in steps]},
                           source="grouping editor")
    resolve_plan(candidate, classes)
    if candidate.model_dump(mode="json") == current.model_dump(mode="json"):
        return None
    return PlanSpec(classes=current.classes, plan=candidate.plan)


def plan_yaml(plan: PlanSpec) -> str:
    return yaml.safe_dump(plan.model_dump(mode="json", exclude_none=True), sort_keys=False,
                          allow_unicode=True)


def grouping_by_level(resolved_plan: Any) -> dict[str, str]:
    """Each reduced level's grouping in words, for chart titles (Relaxed, Strict, Hybrid)."""
    return {step.name: grouping_name([g.option for g in step.groups],
                                     [g.name for g in step.groups])
            for step in resolved_plan.steps}


def wave_changes_table(results: Sequence, p_holm: Sequence[float], score: str) -> pd.DataFrame:
    """The NPS page's wave-on-wave changes under the net score's name ``score``."""
    from cx_app.survey.nps import nps_changes

    changes = nps_changes(list(results)).assign(p_holm=list(p_holm))
    return changes.rename(columns={
        "a_label": "from", "b_label": "to", "a_value": f"{score} from", "b_value": f"{score} to",
        "delta": "change", "ci_low": "95% low", "ci_high": "95% high", "p_holm": "p (Holm)"})[
        ["from", "to", f"{score} from", f"{score} to", "change", "95% low", "95% high", "p",
         "p (Holm)"]]


def mapping_change(old: SurveySchema, new: SurveySchema) -> str:
    """What of the mapping that the models see changed, in words (``""`` when nothing did)."""
    before, after = old.training_fields(), new.training_fields()
    parts = []
    if before["target"] != after["target"]:
        parts.append(f"the target is now {new.target.column}" if old.target.column
                     != new.target.column else "the target's scale")
    old_attributes = {a["column"]: a for a in before["attributes"]}
    new_attributes = {a["column"]: a for a in after["attributes"]}
    if added := [c for c in new_attributes if c not in old_attributes]:
        parts.append(f"attributes added: {', '.join(added)}")
    if dropped := [c for c in old_attributes if c not in new_attributes]:
        parts.append(f"attributes left out: {', '.join(dropped)}")
    if changed := [c for c in new_attributes if c in old_attributes
                   and new_attributes[c] != old_attributes[c]]:
        parts.append(f"scale or name of {', '.join(changed)}")
    for key, words in (("missing_attributes", "how unanswered scores are handled"),
                       ("weight", "the survey weight"), ("missing_codes", "the missing codes"),
                       ("respondent_id", "the respondent id")):
        if before.get(key) != after.get(key):
            parts.append(words)
    return "; ".join(parts)


DRIFT_HEADERS: dict[str, str] = {
    "attribute": "Attribute",
    "present": "In the wave",
    "level": "Change",
    "psi": "Shift in the answers (PSI)",
    "p_value": "p, test of the answer shares (χ²)",
    "n_reference": "Training respondents",
    "n_current": "Wave respondents",
    "na_share_reference": "Unanswered in training",
    "na_share_current": "Unanswered in the wave",
    "na_share_changed": "Unanswered share changed",
    "unseen_values": "Answers not seen in training",
    "out_of_scale_values": "Answers outside the scale",
}


def drift_table(drift: Any, labels: Mapping[str, str]) -> pd.DataFrame:
    frame = drift.to_frame()
    frame["attribute"] = [labels.get(n, n) for n in frame["attribute"]]
    frame["unseen_values"] = [", ".join(map(str, v)) for v in frame["unseen_values"]]
    frame["out_of_scale_values"] = [", ".join(map(str, v)) for v in frame["out_of_scale_values"]]
    keep = [c for c in DRIFT_HEADERS if c in frame.columns]
    return frame[keep].rename(columns=DRIFT_HEADERS)
