"""Alerts on estimated performance: estimated accuracy or net score outside the normal band.

Is a wave's (or segment's) estimated accuracy or net score outside what the reference data
makes normal?

Default band, as NannyML's CBPE: CBPE computes the *realized* metric on chunks of the
reference data and alerts when a chunk's *estimated* metric leaves mean ± 3·SD of those
values (``StandardDeviationThreshold(3, 3)``). Our waves and segments have many sizes, and a
chunk's spread shrinks as 1/√n, so the reference spread is kept per respondent
(:class:`ReferenceBand`: ``unit_sd`` = SD over chunks × √(chunk size)) and the band of a wave
or segment of n respondents is mean ± 3·unit_sd/√n — with chunks of the reference's own size
it is CBPE's band exactly. Without reference chunks (a model file keeps only its pooled
held-out accuracy a) the spread is the binomial one, unit_sd = √(a(1−a)), which is what the
chunk SD estimates when the reference is stable.

A segment is checked against the whole reference's band at the segment's own size: the model
file keeps no per-segment reference, so a segment whose customers always score lower than
the rest (a structurally unhappy region) is flagged on its net score; the alert says "unusual
against the training data", not "changed since last wave" (the tracker's change test says
that). The analyst can replace either band by fixed limits (:class:`AlertThresholds`). Accuracy is
on the 0–1 scale, the net score in points (−100..100).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cx_app.errors import AnalysisError

if TYPE_CHECKING:
    from cx_app.estimate.model_metadata import HeldOutFigures

__all__ = ["DEFAULT_SIGMAS", "Alert", "AlertThresholds", "ReferenceBand", "check_alert",
           "estimate_alerts", "model_bands", "parse_limits"]

DEFAULT_SIGMAS = 3.0
"""Width of the default band in reference standard deviations (CBPE's default)."""

METRIC_RANGE = {"accuracy": (0.0, 1.0), "net_score": (-100.0, 100.0)}


@dataclass(frozen=True)
class ReferenceBand:
    """The reference's level and spread of one metric: ``mean`` and the SD a chunk of n
    respondents shows, ``unit_sd/√n``; ``basis`` says where they come from."""

    metric: str
    mean: float
    unit_sd: float
    basis: str

    @classmethod
    def from_chunks(cls, metric: str, values: Sequence[float], sizes: Sequence[int], *,
                    unit_sd_floor: float = 0.0) -> ReferenceBand:
        """From the realized metric of reference chunks (≥ 2) and their sizes (CBPE's
        way; SD with ``ddof=0`` as NannyML's ``np.std``). ``unit_sd_floor``: the answers' own
        spread per respondent; the band is never narrower than it (the SD of a handful of
        chunks, e.g. 3 to 10 cross-validation folds, can be small by chance)."""
        v = np.asarray(values, dtype=float)
        n = np.asarray(sizes, dtype=float)
        if v.size < 2:
            raise AnalysisError(f"the {metric} alert band needs at least 2 reference chunks, "
                                f"got {v.size}")
        return cls(metric, float(v.mean()),
                   max(float(v.std() * math.sqrt(n.mean())), float(unit_sd_floor)),
                   f"reference: mean ± {DEFAULT_SIGMAS:g} SD of {v.size} chunks of about "
                   f"{n.mean():.0f}, SD scaled to each wave's size, at least the answers' "
                   "own spread")

    @classmethod
    def binomial(cls, accuracy: float, n_reference: int) -> ReferenceBand:
        """Accuracy ``a`` of ``n_reference`` held-out respondents: unit SD √(a(1−a))."""
        return cls("accuracy", float(accuracy), math.sqrt(max(accuracy * (1 - accuracy), 0.0)),
                   f"held-out accuracy of {n_reference} respondents ± {DEFAULT_SIGMAS:g} "
                   "binomial SD at each wave's size")

    def limits(self, n: int, sigmas: float = DEFAULT_SIGMAS) -> tuple[float, float]:
        """(lower, upper) for a wave or segment of ``n`` respondents, within the metric's range."""
        half = sigmas * self.unit_sd / math.sqrt(max(n, 1))
        lo, hi = METRIC_RANGE.get(self.metric, (-math.inf, math.inf))
        return max(lo, self.mean - half), min(hi, self.mean + half)


@dataclass(frozen=True)
class AlertThresholds:
    """Analyst-set limits per metric, ``(lower, upper)`` (either may be None: no limit that
    side); a metric left None keeps the reference band."""

    accuracy: tuple[float | None, float | None] | None = None
    net_score: tuple[float | None, float | None] | None = None

    def for_metric(self, metric: str) -> tuple[float | None, float | None] | None:
        return {"accuracy": self.accuracy, "net_score": self.net_score}[metric]


@dataclass(frozen=True)
class Alert:
    """One metric of one wave or segment checked against its limits."""

    metric: str
    value: float
    lower: float | None
    upper: float | None
    alert: bool
    source: str
    """"analyst" or the reference band's basis."""

    @property
    def direction(self) -> str:
        if not self.alert:
            return ""
        return "below" if self.lower is not None and self.value < self.lower else "above"

    def to_dict(self) -> dict:
        return {"metric": self.metric, "value": self.value, "lower": self.lower,
                "upper": self.upper, "alert": self.alert, "direction": self.direction,
                "source": self.source}

    def _fmt(self, x: float) -> str:
        return f"{x:.3f}" if self.metric == "accuracy" else f"{x:+.1f}"

    def short(self) -> str:
        """``"accuracy below 0.640"`` (a raised alert), else ``""``."""
        if not self.alert:
            return ""
        limit = self.lower if self.direction == "below" else self.upper
        name = "accuracy" if self.metric == "accuracy" else "net score"
        return f"{name} {self.direction} {self._fmt(limit)}"

    def sentence(self, where: str = "") -> str:
        """One line for the CLI, reports and page: ``"ALERT: estimated accuracy 0.61 is below
        0.64 (…)"`` or ``"estimated accuracy 0.71 within 0.64–0.78"``."""
        fmt = self._fmt
        name = "accuracy" if self.metric == "accuracy" else "net score"
        lo = "−∞" if self.lower is None else fmt(self.lower)
        hi = "∞" if self.upper is None else fmt(self.upper)
        head = f"{where}: " if where else ""
        if self.alert:
            limit = self.lower if self.direction == "below" else self.upper
            return (f"ALERT: {head}estimated {name} {fmt(self.value)} is {self.direction} "
                    f"{fmt(limit)} ({self.source})")
        return f"{head}estimated {name} {fmt(self.value)} within {lo} to {hi}"


def check_alert(metric: str, value: float, n: int, band: ReferenceBand | None,
                thresholds: AlertThresholds | None = None) -> Alert | None:
    """``value`` (the estimate for n respondents) against the analyst's limits when set, else
    the reference band; None when there is neither."""
    fixed = None if thresholds is None else thresholds.for_metric(metric)
    if fixed is not None:
        lower, upper = fixed
        source = "analyst"
    elif band is not None:
        lower, upper = band.limits(n)
        source = band.basis
    else:
        return None
    out = (lower is not None and value < lower) or (upper is not None and value > upper)
    return Alert(metric, float(value), lower, upper, bool(out), source)


def parse_limits(text: str | None, what: str) -> tuple[float | None, float | None] | None:
    """``"LOW"`` or ``"LOW,HIGH"`` (either side may be empty) as a pair; None for None.
    AnalysisError naming ``what`` for anything else.

    >>> parse_limits("0.6", "--alert-accuracy"), parse_limits(",40", "--alert-nps")
    ((0.6, None), (None, 40.0))
    """
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 2 or not any(parts):
        raise AnalysisError(f"{what}: give LOW or LOW,HIGH (e.g. 0.6 or 0.6,0.9), not {text!r}")
    try:
        values = [float(p) if p else None for p in parts]
    except ValueError:
        raise AnalysisError(f"{what}: {text!r} is not a number or a pair of numbers") from None
    lower = values[0]
    upper = values[1] if len(values) == 2 else None
    if lower is not None and upper is not None and lower > upper:
        raise AnalysisError(f"{what}: the lower limit {lower:g} is above the upper {upper:g}")
    return lower, upper


def model_bands(cv: HeldOutFigures) -> dict[str, ReferenceBand]:
    """The default bands of a saved model from its cross-validation metadata: accuracy from
    its pooled held-out figures (binomial spread), the net score from its held-out folds (the
    folds' realized SD, CBPE's chunk SD). A figure the file does not keep gets no band.

    Centred on the estimator's own value on the held-out rows (held-out ALP accuracy, mean
    held-out estimated net score), not on the realized one: CBPE calibrates first, so there
    the two agree; a saved model may carry a known held-out gap (reported by its own warning),
    and a band around the realized value would flag every wave for that bias instead of for a
    change."""
    bands: dict[str, ReferenceBand] = {}
    gap = cv.alp_gap
    if gap is not None and gap.accuracy_alp is not None and gap.accuracy_cm is not None \
            and cv.n:
        held = ReferenceBand.binomial(float(gap.accuracy_cm), int(cv.n))
        bands["accuracy"] = ReferenceBand("accuracy", float(gap.accuracy_alp), held.unit_sd,
                                          f"held-out ALP accuracy of {cv.n} respondents ± "
                                          f"{DEFAULT_SIGMAS:g} binomial SD at each wave's size")
    net = cv.net_score_error
    if net is not None and len(net.fold_realized) >= 2 \
            and None not in (*net.fold_realized, *net.fold_estimated):
        # the answers' spread per respondent: fold variance V_f = 100²·ΣVar(s_i)/n_f²
        unit = [v * m for v, m in zip(net.fold_outcome_variance, net.fold_n, strict=False)
                if v is not None]
        realized = ReferenceBand.from_chunks(
            "net_score", net.fold_realized, net.fold_n,
            unit_sd_floor=math.sqrt(float(np.mean(unit))) if unit else 0.0)
        centre = float(np.average(net.fold_estimated, weights=net.fold_n))
        bands["net_score"] = ReferenceBand("net_score", centre, realized.unit_sd,
                                           realized.basis.replace("reference:", "held-out "
                                                                  "estimate:"))
    return bands


def estimate_alerts(accuracy: float | None, net_score: float | None, n: int,
                    bands: dict[str, ReferenceBand],
                    thresholds: AlertThresholds | None = None) -> tuple[Alert, ...]:
    """The alerts of one wave, segment or chunk (accuracy, then net score; a metric with
    neither a band nor a limit is left out)."""
    out = []
    for metric, value in (("accuracy", accuracy), ("net_score", net_score)):
        if value is None:
            continue
        alert = check_alert(metric, value, n, bands.get(metric), thresholds)
        if alert is not None:
            out.append(alert)
    return tuple(out)
