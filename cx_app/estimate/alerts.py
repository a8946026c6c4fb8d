"""Alerts on estimated performance: estimated accuracy or net score outside the normal band.

CBPE's band with the reference's spread kept per respondent, so that waves and segments of any
size are checked at their own n: mean ± 3·√(unit_sd²/n + level_sd²) (docs/alp.md, "Alerts").
Accuracy on 0–1, the net score in points. Types and checks only, so that the estimate documents
can use them without importing a model file's metadata.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import Field, computed_field

from cx_app.errors import AnalysisError
from cx_app.result import Result

__all__ = ["DEFAULT_SIGMAS", "Alert", "AlertThresholds", "ReferenceBand",
           "change_alert", "check_alert", "estimate_alerts", "parse_limits",
           "series_changes"]

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
    level_sd: float = 0.0
    """The uncertainty of ``mean`` itself (a segment's level estimated from few respondents);
    it widens the band at every size."""
    comparison: str = "reference"
    """"reference" (the whole training data) or "own reference" (a segment's own band)."""

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

    def sd(self, n: int) -> float:
        """The SD of a wave's or segment's figure of ``n`` respondents: ``unit_sd/√n``."""
        return self.unit_sd / math.sqrt(max(n, 1))

    def limits(self, n: int, sigmas: float = DEFAULT_SIGMAS) -> tuple[float, float]:
        """(lower, upper) for a wave or segment of ``n`` respondents, within the metric's range."""
        half = sigmas * math.hypot(self.sd(n), self.level_sd)
        lo, hi = METRIC_RANGE.get(self.metric, (-math.inf, math.inf))
        return max(lo, self.mean - half), min(hi, self.mean + half)


@dataclass(frozen=True)
class AlertThresholds:
    """Analyst-set limits per metric, ``(lower, upper)`` (either may be None: no limit that
    side); a metric left None keeps the reference band."""

    accuracy: tuple[float | None, float | None] | None = None
    net_score: tuple[float | None, float | None] | None = None


def _fmt(metric: str, x: float) -> str:
    return f"{x:.3f}" if metric == "accuracy" else f"{x:+.1f}"


def _name(metric: str) -> str:
    return "accuracy" if metric == "accuracy" else "net score"


class Alert(Result):
    """One metric of one wave or segment checked against its limits."""

    metric: str
    value: float
    lower: float | None = None
    upper: float | None = None
    alert: bool
    source: str = ""
    """"analyst" or the reference band's basis ("" in documents written before it was kept)."""
    comparison: str = ""
    """What the value was compared with: "reference", "own reference", "previous wave" or
    "analyst" ("" in documents written before it was kept)."""
    sd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """The SD of the value at its size (its band's ``unit_sd/√n``; None for analyst limits):
    what :func:`change_alert` compares consecutive waves with."""

    @computed_field
    @property
    def direction(self) -> str:
        if not self.alert:
            return ""
        return "below" if self.lower is not None and self.value < self.lower else "above"

    def short(self) -> str:
        """A raised alert in a few words, saying which comparison fired (``""`` when not raised).

        >>> def short(metric, value, lower, upper, comparison):
        ...     return Alert(metric=metric, value=value, lower=lower, upper=upper, alert=True,
        ...                  comparison=comparison).short()
        >>> short("accuracy", 0.5, 0.64, 0.8, "reference")
        'accuracy below 0.640'
        >>> short("net_score", -30.0, -20.0, 5.0, "own reference")
        'net score below -20.0 (its own usual range)'
        >>> short("net_score", 20.0, -9.0, 11.0, "previous wave")
        'net score rose since the previous wave (above +11.0)'
        """
        if not self.alert:
            return ""
        limit = self.lower if self.direction == "below" else self.upper
        shown = "" if limit is None else _fmt(self.metric, limit)
        if self.comparison == "previous wave":
            moved = "fell" if self.direction == "below" else "rose"
            return f"{_name(self.metric)} {moved} since the previous wave ({self.direction} {shown})"
        own = " (its own usual range)" if self.comparison == "own reference" else ""
        return f"{_name(self.metric)} {self.direction} {shown}{own}"

    def sentence(self, where: str = "") -> str:
        """One line for the CLI, reports and page: ``"ALERT: estimated accuracy 0.61 is below
        0.64 (…)"`` or ``"estimated accuracy 0.71 within 0.64–0.78"``."""
        name, value = _name(self.metric), _fmt(self.metric, self.value)
        lo = "−∞" if self.lower is None else _fmt(self.metric, self.lower)
        hi = "∞" if self.upper is None else _fmt(self.metric, self.upper)
        head = f"{where}: " if where else ""
        if self.alert:
            limit = _fmt(self.metric, self.lower if self.direction == "below" else self.upper)
            if self.comparison == "previous wave":
                moved = "fell" if self.direction == "below" else "rose"
                return (f"ALERT: {head}estimated {name} {value} {moved} since the previous "
                        f"wave: {self.direction} {limit} ({self.source})")
            return (f"ALERT: {head}estimated {name} {value} is {self.direction} "
                    f"{limit} ({self.source})")
        return f"{head}estimated {name} {value} within {lo} to {hi}"


def check_alert(metric: str, value: float, n: int, band: ReferenceBand | None,
                thresholds: AlertThresholds | None = None) -> Alert | None:
    """``value`` (the estimate for n respondents) against the analyst's limits when set, else
    the reference band; None when there is neither."""
    fixed = None if thresholds is None else getattr(thresholds, metric)
    sd = None if band is None else band.sd(n)
    if fixed is not None:
        lower, upper = fixed
        source, comparison = "analyst", "analyst"
    elif band is not None:
        lower, upper = band.limits(n)
        source, comparison = band.basis, band.comparison
    else:
        return None
    out = (lower is not None and value < lower) or (upper is not None and value > upper)
    return Alert(metric=metric, value=float(value), lower=lower, upper=upper, alert=bool(out),
                 source=source, comparison=comparison, sd=sd)


def change_alert(previous: Alert, current: Alert,
                 sigmas: float = DEFAULT_SIGMAS) -> Alert | None:
    """The change of one metric of one series (the whole wave, or one segment) since its
    previous wave: an alert when ``current.value`` leaves ``previous.value ± sigmas·√(sd₀² +
    sd₁²)`` (both SDs at their own sizes, as kept by :func:`check_alert`). None when either
    check keeps no SD (analyst limits, documents written before it was kept) or the metrics
    differ; a change alert is never compared again.

    >>> a = Alert(metric="net_score", value=10.0, lower=-5.0, upper=25.0, alert=False,
    ...           source="x", comparison="own reference", sd=4.0)
    >>> b = Alert(metric="net_score", value=30.0, lower=-5.0, upper=25.0, alert=True,
    ...           source="x", comparison="own reference", sd=3.0)
    >>> change = change_alert(a, b)
    >>> change.lower, change.upper, change.alert, change.short()
    (-5.0, 25.0, True, 'net score rose since the previous wave (above +25.0)')
    """
    if previous.metric != current.metric or previous.sd is None or current.sd is None \
            or "previous wave" in (previous.comparison, current.comparison):
        return None
    half = sigmas * math.hypot(previous.sd, current.sd)
    lo, hi = METRIC_RANGE.get(current.metric, (-math.inf, math.inf))
    lower, upper = max(lo, previous.value - half), min(hi, previous.value + half)
    out = current.value < lower or current.value > upper
    return Alert(metric=current.metric, value=float(current.value), lower=lower, upper=upper,
                 alert=bool(out),
                 source=f"previous wave {_fmt(current.metric, previous.value)} ± {sigmas:g} SD "
                        "of the change between two waves of these sizes",
                 comparison="previous wave", sd=float(current.sd))


def series_changes(previous: Sequence[Alert],
                   current: Sequence[Alert]) -> tuple[Alert, ...]:
    """The change alerts of one series between two consecutive waves: each metric of
    ``current`` checked (:func:`change_alert`) against the same metric of ``previous`` (their
    band checks; change checks are skipped)."""
    before = {a.metric: a for a in previous if a.comparison != "previous wave"}
    return tuple(change for now in current
                 if now.metric in before and (change := change_alert(before[now.metric], now)))


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


def estimate_alerts(accuracy: float | None, net_score: float | None, n: int,
                    bands: dict[str, ReferenceBand],
                    thresholds: AlertThresholds | None = None) -> tuple[Alert, ...]:
    """The alerts of one wave, segment or chunk (accuracy, then net score; a metric with
    neither a band nor a limit is left out)."""
    checked = (check_alert(metric, value, n, bands.get(metric), thresholds)
               for metric, value in (("accuracy", accuracy), ("net_score", net_score))
               if value is not None)
    return tuple(alert for alert in checked if alert is not None)
