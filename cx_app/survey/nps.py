"""Net scores as CX teams report them: NPS (and CSAT net score / top-2-box) with intervals.

NPS = 100·(p_promoters − p_detractors) (MATH.md §11). The 95% interval is the adjusted Wald
interval of Rocks (2016): add 3 to n and ¾ to the promoter and the detractor counts, then

    p̃_P = (P + ¾)/(n + 3),  p̃_D = (D + ¾)/(n + 3),
    Var = (p̃_P + p̃_D − (p̃_P − p̃_D)²)/(n + 3),
    interval = 100·(p̃_P − p̃_D ± 1.96·√Var)   (clipped to [−100, 100]).

The reported value is the plain NPS 100·(P − D)/n; ``se`` is 100·√Var. The change between two
independent waves (or segments) A → B is Δ = NPS_B − NPS_A with SE = √(se_A² + se_B²), the
interval Δ ± 1.96·SE and a two-sided z test (z = Δ/SE).

Which answers are promoters and detractors comes from :class:`NetScoreGroups`. For CSAT,
:func:`csat_summary` adds the top-2-box share with a Wilson interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import Field, computed_field, model_serializer
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from cx_app.engine.plan import PlanSpec
from cx_app.errors import AnalysisError, PlanError
from cx_app.result import Estimate, Result
from cx_app.survey.default_plans import boxes
from cx_app.survey.periods import label_order
from cx_app.survey.vocabulary import vocabulary
from cx_app.survey.weights import effective_sample_size

Z95 = float(norm.ppf(0.975))

MISSING_SEGMENT = "(missing)"

_POSITIVE_NAMES = ("promoters", "promoter", "satisfied", "positive", "positives", "top_box",
                   "high")
_NEGATIVE_NAMES = ("detractors", "detractor", "dissatisfied", "negative", "negatives",
                   "bottom_box", "low")


@dataclass(frozen=True)
class NetScoreGroups:
    """Which scores count as positive (promoters) and negative; the rest is neutral."""

    classes: tuple[int, ...]
    positive: frozenset[int]
    negative: frozenset[int]
    positive_name: str = "promoters"
    neutral_name: str = "passives"
    negative_name: str = "detractors"

    def __post_init__(self) -> None:
        unknown = (self.positive | self.negative) - set(self.classes)
        if unknown:
            raise PlanError(
                f"net-score groups name scores {sorted(unknown)} that are not classes "
                f"{list(self.classes)}"
            )
        if self.positive & self.negative:
            raise PlanError(
                f"scores {sorted(self.positive & self.negative)} are both {self.positive_name} "
                f"and {self.negative_name}"
            )
        if not self.positive or not self.negative:
            raise PlanError("net-score groups need at least one positive and one negative score")

    @property
    def neutral(self) -> frozenset[int]:
        return frozenset(self.classes) - self.positive - self.negative

    @property
    def names(self) -> tuple[str, str, str]:
        """(negative, neutral, positive) names, the order of every table."""
        return (self.negative_name, self.neutral_name, self.positive_name)

    def group_of(self, score: int) -> str:
        """The name of the group ``score`` belongs to (negative, neutral or positive)."""
        if score in self.negative:
            return self.negative_name
        return self.positive_name if score in self.positive else self.neutral_name


NPS_GROUPS = NetScoreGroups(
    classes=tuple(range(11)), positive=frozenset({9, 10}), negative=frozenset(range(7))
)
CSAT_GROUPS = NetScoreGroups(
    classes=(1, 2, 3, 4, 5), positive=frozenset({4, 5}), negative=frozenset({1, 2}),
    positive_name="satisfied", neutral_name="neutral", negative_name="dissatisfied",
)

if TYPE_CHECKING:
    from cx_app.survey.schema import SurveySchema


def _norm_name(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def groups_from_plan(plan: PlanSpec, classes: Sequence[int] | None = None) -> NetScoreGroups:
    """The net-score groups of a reduction plan.

    The first step with a group named like promoters/satisfied/positive *and* one named like
    detractors/dissatisfied/negative gives them (members of later steps are expanded into the
    original scores). Otherwise the first step with a declared ``positive`` group gives the
    positive side, and its group holding the lowest score the negative side.
    """
    labels = tuple(classes if classes is not None else (plan.classes or ()))
    if not labels:
        raise PlanError("the plan has no classes: give the classes (the target scale's scores)")
    level: dict[object, frozenset[int]] = {c: frozenset({c}) for c in labels}
    expanded_steps = []
    for step in plan.steps:
        groups: dict[str, frozenset[int]] = {}
        for group in step.groups:
            unknown = [m for m in group.members if m not in level]
            if unknown:
                raise PlanError(f"plan step '{step.name}', group '{group.name}': member "
                                f"{unknown[0]!r} is not a label of the previous level {list(level)}")
            groups[group.name] = frozenset().union(*(level[m] for m in group.members))
        expanded_steps.append((step, groups))
        level = groups

    for _step, groups in expanded_steps:
        by_norm = {_norm_name(n): n for n in groups}
        pos = next((by_norm[n] for n in _POSITIVE_NAMES if n in by_norm), None)
        neg = next((by_norm[n] for n in _NEGATIVE_NAMES if n in by_norm), None)
        if pos and neg:
            return _groups(labels, groups, pos, neg)
    for step, groups in expanded_steps:
        if step.positive is not None:
            lowest = min(labels)
            neg = next(n for n, members in groups.items() if lowest in members)
            if neg != step.positive:
                return _groups(labels, groups, step.positive, neg)
    raise PlanError(
        "the plan names no promoters/detractors groups (nor satisfied/dissatisfied, "
        "positive/negative, nor a step with a 'positive' group): add such a step to the schema's "
        "plan to compute a net score"
    )


def _groups(labels: tuple[int, ...], groups: dict[str, frozenset[int]], pos: str,
            neg: str) -> NetScoreGroups:
    others = [n for n in groups if n not in (pos, neg)]
    default_neutral = "passives" if _norm_name(pos).startswith("promoter") else "neutral"
    return NetScoreGroups(
        classes=labels, positive=groups[pos], negative=groups[neg], positive_name=pos,
        negative_name=neg, neutral_name=others[0] if len(others) == 1 else default_neutral,
    )


def groups_for_schema(schema: SurveySchema) -> NetScoreGroups:
    """A schema's net-score groups: their scores from its plan, else the default of its scale;
    their names always from :func:`cx_app.survey.vocabulary.vocabulary`."""
    words = vocabulary(schema)
    negative, neutral, positive = words.group_names
    named = {"negative_name": negative, "neutral_name": neutral, "positive_name": positive}
    classes = tuple(schema.classes)
    if schema.plan:
        return replace(groups_from_plan(schema.plan_spec, classes), **named)
    if classes == NPS_GROUPS.classes:
        if words.is_nps:
            return replace(NPS_GROUPS, **named)
        return symmetric_groups(classes, words.group_names)
    if classes == CSAT_GROUPS.classes:
        return replace(CSAT_GROUPS, **named)
    raise PlanError(
        f"schema '{schema.name}' has no plan and its scale {classes[0]}–{classes[-1]} has no "
        "default net-score groups: add a plan step with promoters/detractors (or "
        "satisfied/dissatisfied) groups"
    )


def symmetric_groups(classes: Sequence[int], names: Sequence[str] = ("low", "middle", "high")
                     ) -> NetScoreGroups:
    """The symmetric split of a scale of at least 3 points around its midpoint.

    >>> g = symmetric_groups(range(11))
    >>> sorted(g.negative), sorted(g.neutral), sorted(g.positive)
    ([0, 1, 2, 3, 4], [5], [6, 7, 8, 9, 10])
    """
    classes = tuple(int(c) for c in classes)
    low, _, high = boxes(min(classes), max(classes))
    negative, neutral, positive = names
    return NetScoreGroups(classes, frozenset(high), frozenset(low), positive, neutral, negative)


# --------------------------------------------------------------------------- results


class NpsResult(Estimate):
    """A net score (NPS points, −100..100) with its adjusted-Wald 95% interval; ``counts`` and
    ``shares`` (fractions) keyed by the group names, negative first."""

    se: float
    n: int | float
    counts: dict[str, int | float]  # respondents (int), or estimated or weighted (float)
    shares: dict[str, float]
    label: str = ""
    missing: int = 0
    groups: NetScoreGroups = Field(default=NPS_GROUPS, repr=False, exclude=True)
    n_effective: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Weighted results only: Kish's effective sample size, on which the interval rests
    (``n`` and ``counts`` are then respondents, ``value`` and ``shares`` weighted)."""

    @computed_field(exclude_if=lambda v: not v)
    @property
    def weighted(self) -> bool:
        return self.n_effective is not None

    def to_frame(self) -> pd.DataFrame:
        """One row: label, n, counts, shares, value, ci_low, ci_high, se."""
        row = {"label": self.label, "n": self.n}
        if self.weighted:
            row["n_effective"] = self.n_effective
        row.update(self.counts)
        row.update({f"share_{k}": v for k, v in self.shares.items()})
        row.update({"value": self.value, "ci_low": self.ci95[0], "ci_high": self.ci95[1],
                    "se": self.se})
        return pd.DataFrame([row])


class NpsChange(Estimate):
    """The change Δ = b − a between two independent net scores, with its test."""

    a_label: str
    b_label: str
    a_value: float
    b_value: float
    value: float = Field(alias="delta")
    se: float
    z: float
    p: float

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p < alpha

    @property
    def delta(self) -> float:
        return self.value

    def to_frame(self) -> pd.DataFrame:
        row = self.to_dict()
        low, high = row.pop("ci95")
        row.update({"ci_low": low, "ci_high": high})
        return pd.DataFrame([row])


class CsatResult(Result):
    """A CSAT summary: the top-box share with its Wilson 95% interval, and the net score."""

    top_box: Estimate = Field(exclude=True)
    """The top-box share with its Wilson interval, written as ``top_box`` and ``top_box_ci95``."""
    n: int
    net: NpsResult
    label: str = ""

    @model_serializer(mode="wrap")
    def _top_box_flat(self, handler: Any) -> dict[str, Any]:
        return {"top_box": self.top_box.value, "top_box_ci95": self.top_box.ci95, **handler(self)}

    def to_frame(self) -> pd.DataFrame:
        frame = self.net.to_frame().rename(columns={
            "value": "net", "ci_low": "net_ci_low", "ci_high": "net_ci_high", "se": "net_se"})
        frame.insert(2, "top_box", self.top_box.value)
        frame.insert(3, "top_box_ci_low", self.top_box.ci95[0])
        frame.insert(4, "top_box_ci_high", self.top_box.ci95[1])
        return frame


# --------------------------------------------------------------------------- computations


def net_score_from_counts(negative: float, neutral: float, positive: float, *,
                          groups: NetScoreGroups = NPS_GROUPS, label: str = "",
                          missing: int = 0) -> NpsResult:
    """The net score from group counts (real-valued counts, e.g. estimated ones, allowed)."""
    counts = np.array([negative, neutral, positive], dtype=float)
    if np.any(counts < 0) or not np.all(np.isfinite(counts)):
        raise AnalysisError(f"group counts must be finite and non-negative, got {counts.tolist()}")
    n = float(counts.sum())
    if n <= 0:
        where = f" in segment {label!r}" if label else ""
        raise AnalysisError(f"no respondents with a score{where}: a net score needs at least one")
    neg, _, pos = (float(c) for c in counts)
    value = 100.0 * (pos - neg) / n
    n_adj = n + 3.0
    p_pos, p_neg = (pos + 0.75) / n_adj, (neg + 0.75) / n_adj
    centre = p_pos - p_neg
    se = math.sqrt(max(p_pos + p_neg - centre**2, 0.0) / n_adj)
    ci = (max(-100.0, 100.0 * (centre - Z95 * se)), min(100.0, 100.0 * (centre + Z95 * se)))
    as_number = (lambda v: int(v)) if np.all(counts == np.round(counts)) else float
    return NpsResult(
        value=value, ci95=ci, se=100.0 * se, n=as_number(n),
        counts={k: as_number(v) for k, v in zip(groups.names, counts, strict=True)},
        shares={k: float(v / n) for k, v in zip(groups.names, counts, strict=True)},
        label=label, missing=missing, groups=groups,
    )


def _clean_scores(scores: object, groups: NetScoreGroups, label: str) -> tuple[np.ndarray, int]:
    values = pd.to_numeric(pd.Series(np.asarray(scores).ravel()), errors="coerce")
    raw = pd.Series(np.asarray(scores, dtype=object).ravel())
    bad_text = values.isna() & raw.notna()
    if bad_text.any():
        shown = sorted({str(v) for v in raw[bad_text]})[:5]
        raise AnalysisError(f"scores{_in(label)} must be numbers; found {shown}")
    missing = int(values.isna().sum())
    values = values.dropna().to_numpy()
    outside = sorted({float(v) for v in values if v not in set(groups.classes)})
    if outside:
        shown = ", ".join(f"{v:g}" for v in outside[:5])
        raise AnalysisError(
            f"scores{_in(label)} outside the scale {groups.classes[0]}–{groups.classes[-1]}: "
            f"{shown}; check the target column and its scale"
        )
    return values.astype(np.int64), missing


def _in(label: str) -> str:
    return f" in {label!r}" if label else ""


def nps_summary(scores: object, *, groups: NetScoreGroups = NPS_GROUPS, label: str = "",
                weights: object = None) -> NpsResult:
    """NPS of the given scores with its adjusted-Wald 95% interval (MATH.md §11).

    Missing scores (NaN) are left out and counted in ``missing``. ``weights``: the weighted
    shares give the value, the interval rests on Kish's effective sample size; ``n`` and
    ``counts`` stay respondents.

    >>> r = nps_summary([10, 9, 8, 7, 6, 0, 10, 9])
    >>> r.value, r.counts
    (25.0, {'detractors': 2, 'passives': 2, 'promoters': 4})
    >>> w = nps_summary([10, 0, 8], weights=[3, 1, 1])
    >>> w.value, round(w.n_effective, 3), w.counts
    (40.0, 2.273, {'detractors': 1, 'passives': 1, 'promoters': 1})
    """
    if weights is not None:
        return _weighted_summary(scores, weights, groups, label)
    values, missing = _clean_scores(scores, groups, label)
    pos = int(np.isin(values, list(groups.positive)).sum())
    neg = int(np.isin(values, list(groups.negative)).sum())
    return net_score_from_counts(neg, len(values) - pos - neg, pos, groups=groups, label=label,
                                 missing=missing)


def _weighted_summary(scores: object, weights: object, groups: NetScoreGroups,
                      label: str) -> NpsResult:
    raw = np.asarray(scores, dtype=object).ravel()
    w = np.asarray(weights, dtype=float).ravel()
    if len(w) != len(raw):
        raise AnalysisError(f"{len(w)} weights for {len(raw)} scores{_in(label)}")
    answered = pd.notna(pd.to_numeric(pd.Series(raw), errors="coerce")).to_numpy()
    values, missing = _clean_scores(raw[answered], groups, label)
    missing += int((~answered).sum())
    w = w[answered]
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise AnalysisError(f"weights{_in(label)} must be non-negative numbers with a "
                            "positive total")
    is_pos, is_neg = np.isin(values, list(groups.positive)), np.isin(values, list(groups.negative))
    total, n_eff = float(w.sum()), effective_sample_size(w)
    shares = np.array([w[is_neg].sum(), w[~is_pos & ~is_neg].sum(), w[is_pos].sum()]) / total
    interval = net_score_from_counts(*(shares * n_eff), groups=groups, label=label,
                                     missing=missing)
    counts = [int(is_neg.sum()), int((~is_pos & ~is_neg).sum()), int(is_pos.sum())]
    return interval.model_copy(update=dict(
        value=float(100.0 * (shares[2] - shares[0])), n=len(values),
        counts=dict(zip(groups.names, counts, strict=True)),
        shares={k: float(v) for k, v in zip(groups.names, shares, strict=True)},
        n_effective=n_eff))


def change_test(delta: float, se: float) -> tuple[float, float]:
    """(z, two-sided p) of a change; with ``se`` 0 a change is certain, unless it is 0.

    >>> change_test(3.92, 2.0)[1] < 0.05 < change_test(3.9, 2.0)[1]
    True
    """
    z = delta / se if se > 0 else (0.0 if delta == 0 else math.copysign(math.inf, delta))
    return float(z), float(2.0 * norm.sf(abs(z)))


def nps_change(a: NpsResult, b: NpsResult) -> NpsChange:
    """The change Δ = b − a (NPS points) of two independent samples (module docstring)."""
    se = math.hypot(a.se, b.se)
    delta = float(b.value - a.value)
    z, p = change_test(delta, se)
    return NpsChange(a_label=a.label, b_label=b.label, a_value=float(a.value),
                     b_value=float(b.value),
                     delta=delta, se=se, ci95=(delta - Z95 * se, delta + Z95 * se), z=float(z),
                     p=p)


def _segment_label(key: object) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join(MISSING_SEGMENT if pd.isna(p) else str(p) for p in parts)


def segment_frames(frame: pd.DataFrame, by: str | Sequence[str],
                   target: str | None = None) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) per segment of ``by``, sorted (one column: periods in time, other labels
    naturally, :func:`cx_app.survey.periods.label_order`); a missing value is its own segment,
    last."""
    by_cols = [by] if isinstance(by, str) else list(by)
    unknown = [c for c in [*([target] if target else []), *by_cols] if c not in frame.columns]
    if unknown:
        raise AnalysisError(f"columns {unknown} not in the data; available: {list(frame.columns)}")
    grouped = frame.groupby(by_cols if len(by_cols) > 1 else by_cols[0], sort=True,
                            dropna=False, observed=True)
    items = [(_segment_label(key), part) for key, part in grouped]
    if len(by_cols) > 1:
        return items
    rank = {label: i for i, label in enumerate(
        label_order([label for label, _ in items], last=MISSING_SEGMENT))}
    return sorted(items, key=lambda item: rank[item[0]])


def nps_by_results(frame: pd.DataFrame, target: str, by: str | Sequence[str], *,
                   groups: NetScoreGroups = NPS_GROUPS,
                   weight: str | None = None) -> list[NpsResult]:
    """One :class:`NpsResult` per segment (see :func:`segment_frames`)."""
    return [nps_summary(part[target].to_numpy(), groups=groups, label=label,
                        weights=None if weight is None else part[weight].to_numpy())
            for label, part in segment_frames(frame, by, target)]


def nps_by(frame: pd.DataFrame, target: str, by: str | Sequence[str], *,
           groups: NetScoreGroups = NPS_GROUPS, total: bool = False,
           weight: str | None = None) -> pd.DataFrame:
    """NPS per segment of ``by`` as a table; ``total=True`` adds an "All" row."""
    results = nps_by_results(frame, target, by, groups=groups, weight=weight)
    if total:
        results.append(nps_summary(frame[target].to_numpy(), groups=groups, label="All",
                                   weights=None if weight is None else frame[weight].to_numpy()))
    table = pd.concat([r.to_frame() for r in results], ignore_index=True)
    name = by if isinstance(by, str) else " / ".join(by)
    return table.rename(columns={"label": name, "value": "nps"})


def nps_changes(results: Sequence[NpsResult]) -> pd.DataFrame:
    """Consecutive changes (second − first, …) of an ordered list of results, as a table."""
    rows = [nps_change(a, b).to_frame() for a, b in zip(results[:-1], results[1:], strict=True)]
    columns = ["a_label", "b_label", "a_value", "b_value", "delta", "se", "z", "p", "ci_low",
               "ci_high"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


def csat_summary(scores: object, *, groups: NetScoreGroups = CSAT_GROUPS,
                 label: str = "", weights: object = None) -> CsatResult:
    """Top-box (satisfied) share with a Wilson 95% interval, and the net score.

    >>> r = csat_summary([5, 4, 4, 3, 1])
    >>> r.top_box.value, r.net.value
    (0.6, 40.0)
    """
    net = nps_summary(scores, groups=groups, label=label, weights=weights)
    n = int(net.n)
    share = float(net.shares[groups.positive_name])
    base = net.n_effective if net.weighted else n
    low, high = proportion_confint(share * base, base, alpha=0.05, method="wilson")
    return CsatResult(top_box=Estimate(value=share, ci95=(float(low), float(high))), n=n,
                      net=net, label=label)


def score_distribution(scores: object, groups: NetScoreGroups) -> pd.DataFrame:
    """Respondents per score of ``groups.classes`` (zero for a score nobody gave)."""
    classes = list(groups.classes)
    counts = pd.Series(scores).value_counts().reindex(classes, fill_value=0)
    out = pd.DataFrame({"score": classes, "count": counts.to_numpy(),
                        "category": [groups.group_of(c) for c in classes]})
    out["share"] = out["count"] / out["count"].sum()
    return out


def attribute_profiles(attributes: pd.DataFrame, scores: object,
                       groups: NetScoreGroups) -> pd.DataFrame:
    """Mean of each attribute (rows) per score group (columns; groups nobody is in left out)
    over the respondents who answered it."""
    grouped = attributes.assign(_group=[groups.group_of(c) for c in scores]).groupby("_group")
    means = grouped.mean()
    return means.reindex([n for n in groups.names if n in means.index]).T
