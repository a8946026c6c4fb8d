"""The pull of the estimated NPS towards the training NPS under a mean shift (issue 36,
point 3), and what reduces it: calibration choices and a prior-shift adjustment (EM of Saerens
et al. 2002) checked against the plain mean of probabilities (PCC, ``calibration="none"``).

Two worlds, each a labelled reference of 2,400 respondents and ten later waves of 1,200 whose
satisfaction moves by a mean shift (up or down by seed), ``SEEDS`` replications:

* **attributes drive recommending** — :mod:`cx_app.simulation.drift_waves` (the utility is a
  weighted sum of the attribute answers; the factor behind them moves by 0.06 SD per wave);
* **latent satisfaction drives recommending** — the same attributes, but half of the utility is
  the satisfaction factor itself, which the five answers measure with error (the classical
  situation of a recommend question that follows overall satisfaction more than the rated
  attributes; 0.04 SD per wave). Given the answers, a wave whose factor mean moved has a
  different P(y | x) than the reference: a model trained on the reference regresses each
  respondent towards the reference's mean — the pull.

Model: logistic regression on standardised attributes (scikit-learn, the app's ``lr``
settings), reference probabilities out-of-fold (10 folds), the waves scored by the model fitted
on the whole reference; estimates by :func:`cx_app.estimate.estimate_from_probabilities` with
one chunk per wave. Truth: the wave's population NPS (attributes world: E[realized | answers],
the generator's oracle; latent world: 200,000 respondents drawn at the wave's shift). Bias =
mean(estimate − truth); pull = that error signed towards the reference NPS; MAE against the
realized NPS; coverage of the 95 % interval (EM has no interval of its own: PCC's, moved with
its estimate).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cx_app.estimate import estimate_from_probabilities  # noqa: E402
from cx_app.simulation import drift_waves  # noqa: E402
from cx_app.simulation.waves import NPS_THRESHOLDS, UTILITY_NOISE  # noqa: E402

SEEDS = tuple(range(6))
N_REFERENCE, N_WAVE, WAVES = 2400, 1200, 10
LATENT_SHARE, LATENT_SCALE, LATENT_SHIFT = 0.5, 0.6, 0.04
COLUMNS = [name.capitalize() for name, *_ in drift_waves.ATTRIBUTES]
METHODS = ("none", "temperature", "isotonic", "auto", "EM prior shift")


def _latent_wave(rng, n, mean):
    factor = rng.normal(mean, 1.0, size=n)
    answers, utility = [], LATENT_SHARE * LATENT_SCALE * factor
    for _, weight, avg, loading, noise in drift_waves.ATTRIBUTES:
        score = np.clip(np.rint(avg + loading * factor + noise * rng.normal(size=n)), 1, 10)
        answers.append(score)
        utility = utility + (1 - LATENT_SHARE) * weight * (score - avg) / np.hypot(loading, noise)
    y = np.searchsorted(np.asarray(NPS_THRESHOLDS), utility + UTILITY_NOISE * rng.normal(size=n),
                        side="right")
    return np.column_stack(answers), y


def _nps(y):
    return 100.0 * float(np.mean(y >= 9) - np.mean(y <= 6))


def _worlds(seed):
    """(world, reference X, y, [(wave X, wave y, truth)], reference NPS truth)."""
    sim = drift_waves.simulate_drift_waves(N_REFERENCE, N_WAVE, waves=WAVES, seed=seed)
    ref = sim.reference.frame
    waves = [(w.frame[COLUMNS].to_numpy(float), w.frame[drift_waves.TARGET_COLUMN].to_numpy(),
              w.oracle().mean) for w in sim.waves]
    yield ("attributes drive recommending", ref[COLUMNS].to_numpy(float),
           ref[drift_waves.TARGET_COLUMN].to_numpy(), waves, sim.reference.oracle().mean)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 36]))
    sign = rng.choice([-1.0, 1.0])
    x, y = _latent_wave(rng, N_REFERENCE, 0.0)
    waves = []
    for w in range(1, WAVES + 1):
        wx, wy = _latent_wave(rng, N_WAVE, sign * LATENT_SHIFT * w)
        waves.append((wx, wy, _nps(_latent_wave(rng, 200_000, sign * LATENT_SHIFT * w)[1])))
    yield ("latent satisfaction drives recommending", x, y, waves,
           _nps(_latent_wave(rng, 200_000, 0.0)[1]))


def _em_prior_shift(proba, prior, tol=1e-8, max_iter=1000):
    """Saerens, Latinne & Decaestecker (2002): rescale each respondent's probabilities by the
    ratio of the wave's class shares to the reference's until the shares are a fixed point."""
    q = proba.mean(axis=0)
    for _ in range(max_iter):
        adjusted = proba * (q / prior)
        adjusted /= adjusted.sum(axis=1, keepdims=True)
        new_q = adjusted.mean(axis=0)
        if np.abs(new_q - q).max() < tol:
            break
        q = new_q
    return adjusted


def _model_proba(x, y, x_new):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=300))

    def full(p, classes):
        out = np.zeros((len(p), 11))
        out[:, classes] = p
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oof = cross_val_predict(model, x, y, method="predict_proba",
                                cv=StratifiedKFold(10, shuffle=True, random_state=0))
        model.fit(x, y)
    classes = model.classes_
    return full(oof, classes), full(model.predict_proba(x_new), classes)


def _replicate(seed):
    rows = []
    for world, x, y, waves, reference in _worlds(seed):
        oof, new = _model_proba(x, y, np.vstack([w[0] for w in waves]))
        labels = np.repeat(np.arange(1, WAVES + 1), N_WAVE)
        prior = np.maximum(np.bincount(y, minlength=11) / len(y), 1e-12)
        for method in METHODS:
            cal = "none" if method == "EM prior shift" else method
            est = estimate_from_probabilities(oof, y, new, classes=range(11), calibration=cal,
                                              chunks=labels, seed=seed)
            for (_, wy, truth), chunk in zip(waves, est.chunks, strict=True):
                value, (lo, hi) = chunk.net_score.value, chunk.net_score.ci95
                if method == "EM prior shift":
                    p = _em_prior_shift(new[labels == int(chunk.chunk)], prior)
                    moved = 100.0 * float(np.mean(p[:, 9:].sum(axis=1) - p[:, :7].sum(axis=1)))
                    lo, hi, value = lo + moved - value, hi + moved - value, moved
                rows.append({"world": world, "method": method, "seed": seed,
                             "chosen": est.calibration.chosen, "error": value - truth,
                             "realized_error": value - _nps(wy),
                             "pull": -np.sign(truth - reference) * (value - truth),
                             "move": abs(truth - reference),
                             "covered": lo <= _nps(wy) <= hi})
    return rows


def _quapy_check() -> str:
    """Our EM against QuaPy's ``EMQ.EM`` (Saerens et al.'s EM as QuaPy implements it), when
    QuaPy is installed (the ``bench`` extra)."""
    try:
        from quapy.method.aggregative import EMQ
    except ImportError:
        return "QuaPy not installed: the EM is not checked against it in this run."
    rng = np.random.default_rng(0)
    z = rng.normal(size=(1000, 11))
    proba = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    prior = rng.dirichlet(np.full(11, 5.0))
    _, theirs = EMQ.EM(prior, proba, epsilon=1e-10)
    ours = _em_prior_shift(proba, prior, tol=1e-12)
    return (f"The EM equals QuaPy's `EMQ.EM` to {np.abs(ours - theirs).max():.0e} (their "
            "stopping rule differs) on 1,000 random 11-class rows.")


def run() -> str:
    start = time.perf_counter()
    frame = pd.DataFrame([r for seed in SEEDS for r in _replicate(seed)])
    table = frame.groupby(["world", "method"], sort=False).agg(
        n=("error", "size"), mae=("realized_error", lambda e: float(np.mean(np.abs(e)))),
        bias=("error", "mean"), pull=("pull", "mean"), move=("move", "mean"),
        coverage=("covered", "mean"))
    chosen = frame[frame.method == "auto"].groupby("world")["chosen"].agg(
        lambda c: ", ".join(f"{k} ×{v // WAVES}" for k, v in c.value_counts().items()))
    lines = [
        "## Pull towards the training NPS under a mean shift (issue 36, point 3)",
        "",
        f"`bench/bench_pull.py` (module docstring): {len(SEEDS)} seeds × {WAVES} waves of "
        f"{N_WAVE:,} per world, reference {N_REFERENCE:,}; lr, reference probabilities "
        "out-of-fold; `estimate_from_probabilities` one chunk per wave. MAE against the "
        "realized NPS; bias and pull against the wave's true NPS (points); coverage of the "
        "95 % interval of the realized NPS.",
        "",
        "| world | estimate | waves | MAE | bias | pull | mean move | coverage |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (world, method), r in table.iterrows():
        lines.append(f"| {world} | {method} | {int(r.n)} | {r.mae:.2f} | {r.bias:+.2f} | "
                     f"{r.pull:+.2f} | {r.move:.1f} | {r.coverage:.0%} |")
    lines += [
        "",
        "auto chose: " + "; ".join(f"{w}: {c}" for w, c in chosen.items()) + ". "
        f"Whole section {time.perf_counter() - start:.0f} s on {os.cpu_count()} shared cores "
        f"(load average {os.getloadavg()[0]:.1f}). " + _quapy_check(),
        "",
        "Reading: PCC (`none`) has almost no pull when the attributes drive recommending; when "
        "a latent satisfaction does, every calibration keeps a pull of about +2–3 points and "
        "coverage falls to 78–87 %. The prior-shift EM over-corrects by an order of magnitude in "
        "both worlds (pull −10 to −11, MAE ≈ 12): not adopted. Targets of issue 36 point 3 "
        "(MAE ≤ 1.5, bias halved, coverage ≥ 90 % in the shifted world) are not met by any "
        "estimate from the reference's probabilities alone; see docs/alp.md.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
