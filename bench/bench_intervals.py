"""Intervals of estimated NPS, per wave and per segment, against a generator with a known truth.

:mod:`cx_app.simulation.drift_waves`: a labelled reference survey (2,400 respondents) and ten
later unlabeled waves of 1,200, three banks whose effect on recommending the attributes do not
explain (SD 0.12 utility ≈ 5 NPS points, drifting by a 0.01 random walk per wave), and a mean
shift of the attributes (0.06 SD of the factor per wave, up or down by seed). For each of
``SEEDS`` replications the default model (logistic regression, the app's first algorithm)
is trained by the product path (:func:`cx_app.estimate.training.train_model`: calibration
chosen on 10 held-out folds, as ``cx-app train``), and the waves are estimated by
:func:`cx_app.estimate.tracker.track_waves` with ``by="bank"``.

Compared on the same waves and probabilities:

* **after** — the tracker now: a segment's estimate corrected by its shrunken held-out error and
  its interval widened by that correction's error (:mod:`cx_app.estimate.segment_error`);
* **before** — the same probabilities with the earlier interval (answers' spread + the model's
  overall held-out error; no reference term, no segment term), what the tracker did before
  issue 25;
* **older model file** — a file without the numbers kept since: the reference term from the
  training class counts and, for a segment, the fresh-sample fallback;
* **oracle** — the generator's true P(y | x, bank): the realized NPS's 95 % half-width given
  the respondents' answers (``SimulatedWave.oracle``), the narrowest honest interval.

Bias is the mean of (estimate − E[realized | answers]) (the oracle mean, so the answers' own
noise does not blur it); the pull is that error signed towards the series' reference NPS
(positive: the estimate leans towards the training value while the truth moved away).
"""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cx_app.estimate import new_wave, segment_error  # noqa: E402
from cx_app.estimate.tracker import track_waves  # noqa: E402
from cx_app.estimate.training import train_model  # noqa: E402
from cx_app.simulation import drift_waves  # noqa: E402
from cx_app.survey.importing import load_survey  # noqa: E402
from cx_app.survey.nps import NPS_GROUPS  # noqa: E402
from cx_app.survey.schema import schema_from_yaml_text  # noqa: E402

SEEDS = tuple(range(10))
N_REFERENCE = 2400
N_PER_WAVE = 1200
WAVES = 10
FOLDS = 10
ALGORITHM = "lr"
SCHEMA = schema_from_yaml_text(drift_waves.drift_schema_yaml(), name="drift_waves")
OLD_FILE = segment_error.SegmentCorrection(0.0, 0.0, fresh_sample=True)


def _survey(frame, name, scoring=False):
    return load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA, filename=name,
                       require_target=not scoring, require_attributes=not scoring,
                       scoring=scoring)


def _row(kind, path, seed, wave, est, realized, oracle, reference):
    half = (est.ci95[1] - est.ci95[0]) / 2
    return {"kind": kind, "path": path, "seed": seed, "wave": wave, "estimate": est.value,
            "half": half, "covered": est.ci95[0] <= realized <= est.ci95[1],
            "ratio": half / oracle.half_width95, "oracle_half": oracle.half_width95,
            "error": est.value - oracle.mean, "realized_error": est.value - realized,
            "pull": -np.sign(oracle.mean - reference) * (est.value - oracle.mean)}


def _replicate(seed: int) -> tuple[list[dict], float, str]:
    sim = drift_waves.simulate_drift_waves(N_REFERENCE, N_PER_WAVE, waves=WAVES, seed=seed)
    start = time.perf_counter()
    model = train_model(_survey(sim.reference.frame, "reference.csv"), ALGORITHM, folds=FOLDS,
                        seed=seed).model
    seconds = time.perf_counter() - start
    tracked = track_waves(model, [_survey(w.unlabeled(), f"{w.label}.csv", scoring=True)
                                  for w in sim.waves], by="bank")
    classes, model_se = model.classes, new_wave.model_net_score_se(model)
    error = model.cv.net_score_error.model_copy(update={"reference_se": None})
    old_se = new_wave.model_reference_se(
        dataclasses.replace(model, cv=model.cv.model_copy(update={"net_score_error": error})))

    def before_and_old(proba, segment=None):
        """The interval before issue 25, and the one an older model file gets now."""
        return (new_wave.estimated_net_score(proba, classes, NPS_GROUPS, model_se=model_se),
                new_wave.estimated_net_score(proba, classes, NPS_GROUPS, model_se=model_se,
                                             reference_se=old_se, segment=segment))

    rows = []
    for wave, t in zip(sim.waves, tracked, strict=True):
        proba = t.estimate.predictions[[f"p_{c}" for c in classes]].to_numpy()
        banks = wave.frame["Bank"].to_numpy()
        before, old = before_and_old(proba)
        for path, e in (("after", t.estimate.estimated_nps), ("before", before),
                        ("older model file", old)):
            rows.append(_row("wave", path, seed, wave.index, e, wave.realized(),
                             wave.oracle(), sim.reference.oracle().mean))
        for s in t.segments:
            before, old = before_and_old(proba[banks == s.label], OLD_FILE)
            for path, e in (("after", s.estimated_nps), ("before", before),
                            ("older model file", old)):
                rows.append(_row("segment", path, seed, wave.index, e, wave.realized(s.label),
                                 wave.oracle(s.label),
                                 sim.reference.oracle(s.label).mean))
    return rows, seconds, model.calibration


def run() -> str:
    start = time.perf_counter()
    rows, train_s, calibrations = [], [], []
    for seed in SEEDS:
        r, s, c = _replicate(seed)
        rows += r
        train_s.append(s)
        calibrations.append(c)
    frame = pd.DataFrame(rows)
    total = time.perf_counter() - start
    table = frame.groupby(["kind", "path"], sort=False).agg(
        n=("covered", "size"), coverage=("covered", "mean"), half=("half", "mean"),
        oracle=("oracle_half", "mean"), ratio=("ratio", "mean"), bias=("error", "mean"),
        pull=("pull", "mean"), rmse=("realized_error", lambda e: float(np.sqrt(np.mean(e**2)))))
    late = frame[frame.wave > WAVES // 2].groupby(["kind", "path"], sort=False)["covered"].mean()
    sc = drift_waves.DriftScenario()
    lines = [
        "## Intervals of estimated NPS: waves and segments against a known truth",
        "",
        f"`bench/bench_intervals.py`, generator `cx_app.simulation.drift_waves` "
        f"({len(SEEDS)} seeds; reference {N_REFERENCE:,} respondents, {WAVES} waves of "
        f"{N_PER_WAVE:,}, {sc.segments} banks; bank effect SD {sc.segment_effect_sd} utility, "
        f"drifting {sc.segment_drift_sd}/wave; attribute mean shift {sc.attribute_shift} "
        f"factor SD/wave). Model: `{ALGORITHM}` trained by `train_model` ({FOLDS} folds, "
        f"calibration auto: chosen {', '.join(sorted(set(calibrations)))}). 95 % intervals; "
        "ratio = mean of half-width / the oracle's half-width (true P(y | x, bank)); bias = "
        "mean(estimate − E[realized | answers]); pull = that error signed towards the series' "
        "reference NPS; RMSE against the realized NPS (points).",
        "",
        "| series | interval | n | coverage | coverage, waves 6–10 | mean half-width | oracle "
        "half-width | ratio | bias | pull | RMSE |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (kind, path), r in table.iterrows():
        lines.append(
            f"| {kind} | {'**after**' if path == 'after' else path} | {int(r.n)} | "
            f"{r.coverage:.1%} | {late[(kind, path)]:.1%} | {r.half:.2f} | {r.oracle:.2f} | "
            f"{r.ratio:.2f} | {r.bias:+.2f} | {r.pull:+.2f} | {r.rmse:.2f} |")
    lines += [
        "",
        "After: the wave's interval adds the training survey's own sampling error "
        "(SE_reference), a segment's also its corrected held-out error (SE_segment). "
        f"Training: {np.median(train_s):.1f} s median per model; whole section {total:.0f} s "
        f"on {platform.machine()}, {os.cpu_count()} cores (shared; load average "
        f"{os.getloadavg()[0]:.1f}). Targets (issue 25): coverage ≥ 90 % over ≥ 200 "
        "segment-waves and ≥ 100 waves, ratio ≤ 1.3.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
