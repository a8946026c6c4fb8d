"""How often a "top driver" headline is false: surveys whose attributes matter equally.

The deck names an attribute "the strongest driver, above the others beyond its uncertainty"
when the 95 % bootstrap interval of its relative weight's difference to the others' mean lies
above 0 (:mod:`cx_app.models.importance_performance`), each attribute tested on its own. On a
survey where every attribute has the same true weight no attribute should be named; this counts
the surveys where one is, with k attributes (the generator of
``tests/survey/platform_exports.answers``: score = 2 × mean of the items + noise). The next step
(a Holm-adjusted decision over the attributes) is to be measured against this baseline, with
the share of true drivers still found.
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

N, SEEDS, ATTRIBUTES = 1_400, 40, (4, 8)
CLASSES = list(range(11))


def _named(k: int, seed: int) -> bool:
    """Whether an equal-weight survey of ``k`` attributes gets a top driver named."""
    rng = np.random.default_rng(100 + seed)
    items = rng.integers(1, 6, size=(N, k)).astype(float)
    score = np.clip(np.round(items.mean(axis=1) * 2 + rng.normal(0, 1.2, N)), 0, 10)
    frame = pd.DataFrame(items, columns=[f"attribute {i + 1}" for i in range(k)])
    weights = relative_weights(frame, score, CLASSES)
    table = importance_performance(
        frame, dict(zip(weights.attributes, weights.percent, strict=True)),
        importance_on=lambda rows: relative_weights(frame.iloc[rows], score[rows],
                                                    CLASSES).percent, seed=0)
    return bool(important_above_others(table))


def run() -> str:
    start = time.perf_counter()
    rows = [(k, sum(_named(k, s) for s in range(SEEDS))) for k in ATTRIBUTES]
    lines = ["## Driver headlines on equal-weight surveys (false 'top driver')", "",
             f"`bench/bench_driver_headlines.py` (module docstring): {SEEDS} surveys of {N:,} "
             f"respondents per row, every attribute of the same true weight, "
             f"{BOOTSTRAP_RESAMPLES} bootstrap resamples (the default). A named top driver is a "
             "false headline.", "",
             "| attributes | surveys | a top driver named (false) |", "|---:|---:|---:|"]
    lines += [f"| {k} | {SEEDS} | {hits} ({hits / SEEDS:.0%}) |" for k, hits in rows]
    lines += ["", "Reading: each attribute is tested at 95 % on its own, so the chance that some "
              "attribute is named grows with their number. A Holm-adjusted decision over the "
              "attributes is the mend to measure next (with the share of true drivers still "
              f"found). {time.perf_counter() - start:.0f} s."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
