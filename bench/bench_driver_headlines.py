"""How often a "top driver" headline is false, and how often a true one is found.

The deck names an attribute "the strongest driver, above the others beyond its uncertainty"
when its relative weight stands above the mean of the others'
(:mod:`cx_app.models.importance_performance`). Two rules on the same bootstrap resamples:

- *each on its own* (the rule until 2026-11-29, the baseline): the attribute's 95% percentile
  interval of the difference lies above 0, each attribute tested alone;
- *Holm* (the rule now): the difference's normal p-value from its bootstrap standard error,
  Holm-adjusted over the attributes, below 5%.

Surveys: k attributes answered 1–5 at random, score = 2 × weighted mean of the items + noise
(the generator of ``tests/survey/platform_exports.answers`` with weights). With every weight
equal no attribute should be named; with attribute 1 weighted r times the others it is the
true top driver and only it should be named first.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cx_app.models.drivers import relative_weights  # noqa: E402
from cx_app.models.importance_performance import (  # noqa: E402
    BOOTSTRAP_RESAMPLES,
    importance_performance,
    important_above_others,
)

N, SEEDS = 1_400, 40
WORLDS = ((4, 1.0), (8, 1.0), (4, 1.5), (8, 1.5), (4, 2.0), (8, 2.0))
"""(attributes, weight of attribute 1 over the others')."""
CLASSES = list(range(11))


def _survey(k: int, ratio: float, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(100 + seed)
    items = rng.integers(1, 6, size=(N, k)).astype(float)
    weights = np.r_[ratio, np.ones(k - 1)]
    score = np.clip(np.round(items @ weights / weights.sum() * 2 + rng.normal(0, 1.2, N)), 0, 10)
    return pd.DataFrame(items, columns=[f"attribute {i + 1}" for i in range(k)]), score


def _named(k: int, ratio: float, seed: int) -> tuple[list[str], list[str]]:
    """The attributes named above the others (most important first), by each on its own and by
    Holm, on one survey."""
    frame, score = _survey(k, ratio, seed)
    weights = relative_weights(frame, score, CLASSES)
    samples: list[np.ndarray] = []

    def importance_on(rows: np.ndarray) -> np.ndarray:
        samples.append(relative_weights(frame.iloc[rows], score[rows], CLASSES).percent)
        return samples[-1]

    table = importance_performance(
        frame, dict(zip(weights.attributes, weights.percent, strict=True)),
        importance_on=importance_on, seed=0)
    drawn = np.array(samples)  # N ≤ RESAMPLE_ROWS: the resamples as drawn
    versus = drawn - (drawn.sum(axis=1, keepdims=True) - drawn) / (k - 1)
    alone = np.percentile(versus, 2.5, axis=0) > 0
    order = np.argsort(-np.asarray(weights.percent), kind="stable")
    return [weights.attributes[i] for i in order if alone[i]], important_above_others(table)


def run() -> str:
    start = time.perf_counter()
    lines = ["## Driver headlines: false and true 'top driver' (each on its own vs Holm)", "",
             f"`bench/bench_driver_headlines.py` (module docstring): {SEEDS} surveys of {N:,} "
             f"respondents per row, {BOOTSTRAP_RESAMPLES} bootstrap resamples (the default), both "
             "rules on the same resamples. *false*: some attribute is named although all weigh "
             "the same (ratio 1), or an attribute other than attribute 1 is named first "
             "(ratio > 1); *true found*: attribute 1 is named first.", "",
             "| attributes | weight of attribute 1 | rule | false | true found |",
             "|---:|---:|---|---:|---:|"]
    for k, ratio in WORLDS:
        named = [_named(k, ratio, s) for s in range(SEEDS)]
        for rule, pick in (("each on its own (before)", 0), ("Holm (now)", 1)):
            firsts = [n[pick][0] if n[pick] else None for n in named]
            if ratio == 1.0:
                false, found = sum(f is not None for f in firsts), "–"
            else:
                false = sum(f not in (None, "attribute 1") for f in firsts)
                hits = sum(f == "attribute 1" for f in firsts)
                found = f"{hits} ({hits / SEEDS:.0%})"
            lines.append(f"| {k} | {ratio:g} | {rule} | {false} ({false / SEEDS:.0%}) | "
                         f"{found} |")
    lines += ["", "Reading: tested each on its own at 95 %, the chance that some attribute is "
              "named grows with their number; Holm's adjustment over the attributes holds it "
              "near or under 5 % whatever their number, at the price of needing more evidence "
              "for a true driver (the rows with ratio > 1). "
              f"{time.perf_counter() - start:.0f} s."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
