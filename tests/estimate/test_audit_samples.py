"""Audit samples by prediction-powered inference (cx_app.estimate.audit): ppi-python as the
oracle, hand-computed identities, coverage on concept-shifted waves, matching of audit rows."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cx_app.errors import AnalysisError
from cx_app.estimate.document import WaveEstimateDocument
from cx_app.estimate.new_wave import estimate_wave
from cx_app.estimate.ppi import MIN_AUDIT, f1_macro_ppi, shift_test, wave_ppi_mean
from cx_app.estimate.training import train_model
from cx_app.simulation.concept_shift import ConceptShift, shifted_wave
from cx_app.simulation.drift_waves import (
    ID_COLUMN,
    TARGET_COLUMN,
    drift_schema_yaml,
    simulate_drift_waves,
)
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_yaml_text

SCHEMA = schema_from_yaml_text(drift_schema_yaml(), name="drift_waves")
Z95 = 1.959963984540054


def _score(p: np.ndarray) -> np.ndarray:
    return 100.0 * (p[:, 9:].sum(axis=1) - p[:, :7].sum(axis=1))


def _scores(y: np.ndarray) -> np.ndarray:
    return 100.0 * ((y >= 9).astype(float) - (y <= 6))


def _inputs(seed=0, n=120, big_n=900):
    rng = np.random.default_rng(seed)
    yhat_all = rng.uniform(-80, 80, size=big_n)
    y_all = np.clip(yhat_all + rng.normal(0, 40, size=big_n), -100, 100)
    audit = rng.choice(big_n, n, replace=False)
    return y_all, yhat_all, audit


# ---------------------------------------------------------------- the oracle: ppi-python

ORACLE = Path(os.environ.get("CX_APP_ORACLE_PATH",
                             Path(__file__).resolve().parents[2] / ".venv" / "oracle"))
"""Where `make install-test` puts ppi-python (with numba and llvmlite): a folder of its own, not
the environment, because its wheel also installs a top-level ``tests`` package that would hide
this suite's own ``tests``. The oracle runs in a child process with that folder on its path."""

ORACLE_CODE = """
import json, sys
import numpy as np
import ppi_py
request = json.load(sys.stdin)
y, yhat = np.array(request["y"]), np.array(request["yhat"])
answers = []
for call in request["calls"]:
    unlabeled = np.array(call["unlabeled"])
    lam = {} if call["lam"] is None else {"lam": call["lam"]}
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.05, **lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, **lam)
    answers.append([float(np.ravel(v)[0]) for v in (point, lo, hi)])
print(json.dumps(answers))
"""


def _ppi_python(y, yhat, calls: list[tuple[np.ndarray, float | None]]) -> list[list[float]]:
    """ppi-python's (point, ci low, ci high) of each call (unlabelled predictions, λ or None
    for its own power tuning), computed in a child process (:data:`ORACLE`)."""
    assert (ORACLE / "ppi_py").is_dir(), f"ppi-python is missing from {ORACLE}: run make install-test"
    request = {"y": y.tolist(), "yhat": yhat.tolist(),
               "calls": [{"unlabeled": u.tolist(), "lam": lam} for u, lam in calls]}
    done = subprocess.run([sys.executable, "-c", ORACLE_CODE], input=json.dumps(request),
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ORACLE)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_wave_ppi_mean_equals_ppi_python_to_1e9():
    for seed in (0, 1, 2):
        y_all, yhat_all, audit = _inputs(seed)
        y, yhat = y_all[audit], yhat_all[audit]
        waves = [wave_ppi_mean(y, yhat, yhat_all, lam=lam) for lam in (None, 0.0, 0.37, 1.0)]
        answers = _ppi_python(y, yhat, [(yhat_all, w.lam) for w in waves])
        assert 0.0 < waves[0].lam < 1.0
        # the wave's estimator is PPI's point estimate with the whole wave as the unlabelled set
        for wave, (point, _, _) in zip(waves, answers, strict=True):
            assert wave.value == pytest.approx(point, abs=1e-9), (seed, wave.lam)


# ---------------------------------------------------------------- identities by hand

def test_wave_ppi_mean_by_hand():
    y = np.array([100.0, 0, -100, 100, 100, 0])
    yhat = np.array([60.0, 10, -50, 40, 70, -20])
    wave = np.concatenate([yhat, [30.0, -10, 0, 50]])
    m = wave_ppi_mean(y, yhat, wave)
    lam = np.cov(y, yhat)[0, 1] / np.var(yhat, ddof=1)
    lam = min(max(lam, 0.0), 1.0)
    d = y - lam * yhat
    assert m.lam == pytest.approx(lam, abs=1e-12)
    assert m.value == pytest.approx(lam * wave.mean() + d.mean(), abs=1e-12)
    assert m.se == pytest.approx(math.sqrt((1 - 6 / 10) * d.var(ddof=1) / 6), abs=1e-12)
    alone = wave_ppi_mean(y, yhat, wave, lam=0.0)  # the audit alone, with the FPC
    assert alone.value == pytest.approx(y.mean(), abs=1e-12)
    assert alone.se == pytest.approx(math.sqrt(0.4 * y.var(ddof=1) / 6), abs=1e-12)
    whole = wave_ppi_mean(y, yhat, yhat)  # the whole wave audited: its realized mean, no error
    assert whole.value == pytest.approx(y.mean(), abs=1e-12) and whole.se == 0.0


def test_f1_macro_without_audit_error_is_the_realized_f1():
    """Audit = whole wave: the estimate is the realized macro F1 (no sampling error)."""
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(5)
    proba = rng.dirichlet(np.ones(3), size=300)
    pred = proba.argmax(axis=1)
    y = np.array([rng.choice(3, p=p) for p in proba])
    m = f1_macro_ppi(y, proba, pred, proba, pred)
    assert m.value == pytest.approx(f1_score(y, pred, average="macro"), abs=1e-12)
    assert m.se == 0.0


def test_shift_test_by_hand():
    s = np.array([100.0, -100, 0, 100, -100, -100])
    f = np.array([20.0, 10, -5, 30, 0, 10])
    t = shift_test(s, f, 2.0)
    d = s - f
    se = math.sqrt(d.var(ddof=1) / 6 + 4.0)
    assert t.difference == pytest.approx(d.mean()) and t.se == pytest.approx(se)
    assert t.z == pytest.approx(d.mean() / se)
    from scipy.stats import norm
    assert t.p_value == pytest.approx(2 * norm.sf(abs(d.mean() / se)))


# ---------------------------------------------------------------- coverage, width

def _coverage(shift: ConceptShift, runs: int, n_audit: int = 200, n_wave: int = 1200):
    """Share of waves whose realized NPS the audited and the label-free intervals cover, and
    the mean width ratio audited/audit-alone. The model: the true P(y|x) before the shift."""
    ppi = free = 0
    ratio = []
    for seed in range(runs):
        w = shifted_wave(n_wave, seed=seed, shift=shift)
        s = _scores(w.wave.frame[TARGET_COLUMN].to_numpy())
        f = _score(w.reference_proba)
        audit = np.random.default_rng([seed, 7]).choice(n_wave, n_audit, replace=False)
        m = wave_ppi_mean(s[audit], f[audit], f)
        ppi += m.ci95[0] <= s.mean() <= m.ci95[1]
        ratio.append(m.se / wave_ppi_mean(s[audit], f[audit], f, lam=0.0).se)
        p = w.reference_proba
        pos, neg = p[:, 9:].sum(axis=1), p[:, :7].sum(axis=1)
        se_free = 100 * math.sqrt((pos + neg - (pos - neg) ** 2).sum()) / n_wave
        free += abs(f.mean() - s.mean()) <= Z95 * se_free
    return ppi / runs, free / runs, float(np.mean(ratio))


def test_audit_covers_shifted_waves_that_the_label_free_interval_misses():
    ppi, free, _ = _coverage(ConceptShift(offset=-0.15, reweight=(0.5, 0, 0, -0.5, 0)), 100)
    assert ppi >= 0.90
    assert free < 0.50


def test_audit_is_narrower_than_the_audit_alone_on_stable_waves():
    ppi, free, ratio = _coverage(ConceptShift(), 100)
    assert ratio <= 0.8
    assert ppi >= 0.88 and free >= 0.88


# ---------------------------------------------------------------- end to end

@pytest.fixture(scope="module")
def model():
    sim = simulate_drift_waves(900, 10, waves=0, seed=4)
    survey = load_survey(sim.reference.frame.to_csv(index=False).encode(), schema=SCHEMA,
                         filename="reference.csv")
    return train_model(survey, "lr", calibration="none", folds=3).model


def _wave_bytes(shift: ConceptShift, n=600, seed=3):
    return shifted_wave(n, seed=seed, shift=shift).wave.frame


def _load(frame, name, *, target=True):
    data = (frame if target else frame.drop(columns=[TARGET_COLUMN])).to_csv(index=False)
    return load_survey(data.encode(), schema=SCHEMA, filename=name, require_target=False,
                       scoring=True, require_attributes=False)


def test_audit_by_respondent_id_end_to_end(model):
    from cx_app.estimate.audit import audit_wave

    frame = _wave_bytes(ConceptShift(offset=-0.3))
    wave = _load(frame, "wave.csv", target=False)
    est = estimate_wave(model, wave)
    sample = frame.sample(150, random_state=1)
    extra = frame.iloc[:1].assign(**{ID_COLUMN: "nobody"})  # not in the wave: excluded
    twice = sample.iloc[:1]  # one respondent twice in the audit: the reader keeps the first
    audit_frame = pd.concat([sample, extra, twice])
    result = audit_wave(model, wave, est, _load(audit_frame, "audit.csv"))
    assert result.n_audit == 150 and result.matched_by == "respondent id"
    reasons = sorted(r.reason for r in result.excluded)
    assert len(reasons) == 2 and reasons[1] == "respondent id not in the wave"
    assert ID_COLUMN in reasons[0] and [r.row for r in result.excluded if r.reason == reasons[0]
                                        ] == [len(audit_frame) + 1]  # its sheet row
    # the audited value by hand: wave predictions of the matched rows
    proba = est.predictions[[f"p_{c}" for c in model.classes]].to_numpy()
    f = _score(proba)
    rows = est.predictions.reset_index().set_index("respondent_id").loc[
        sample[ID_COLUMN], "index"].to_numpy()
    s = _scores(sample[TARGET_COLUMN].to_numpy())
    assert result.audited_nps.value == pytest.approx(wave_ppi_mean(s, f[rows], f).value,
                                                     abs=1e-9)
    assert result.audited_nps.label_free == pytest.approx(est.estimated_nps.value, abs=1e-9)
    realized = _scores(frame[TARGET_COLUMN].to_numpy()).mean()
    lo, hi = result.audited_nps.ci95
    assert lo <= realized <= hi
    assert not est.estimated_nps.ci95[0] <= realized <= est.estimated_nps.ci95[1]
    assert result.shift_detected and result.shift_test.p_value < 0.05
    # the JSON beside estimated_nps, read back by the typed document
    doc = json.loads(est.model_copy(update={"audit": result}).to_json())
    assert {"value", "ci95", "n"} <= set(doc["audited_nps"]) and doc["shift_detected"] is True
    assert WaveEstimateDocument.from_dict(doc).to_dict() == doc


def test_the_wave_file_itself_with_some_answers(model):
    from cx_app.estimate.audit import audit_wave

    frame = _wave_bytes(ConceptShift(), seed=8).drop(columns=[ID_COLUMN])
    partial = frame.copy()
    partial.loc[partial.index[40:], TARGET_COLUMN] = np.nan
    wave = _load(partial, "wave.csv")
    est = estimate_wave(model, wave)
    result = audit_wave(model, wave, est, _load(partial, "wave.csv"))
    assert result.n_audit == 40 and result.unanswered == len(frame) - 40
    assert result.excluded == [] and "wave file" in result.matched_by
    assert not result.shift_detected
    # without ids, another file is scored from its own attributes (and a note says so)
    other = audit_wave(model, wave, est, _load(frame.iloc[:40], "audit.csv"))
    assert other.audited_nps.value == pytest.approx(result.audited_nps.value, abs=1e-9)
    assert any("random sample" in n for n in other.notes)


def test_too_small_an_audit_is_refused_in_one_sentence(model):
    from cx_app.estimate.audit import audit_wave

    frame = _wave_bytes(ConceptShift(), n=200, seed=9)
    wave = _load(frame, "wave.csv", target=False)
    est = estimate_wave(model, wave)
    with pytest.raises(AnalysisError, match=f"at least {MIN_AUDIT}"):
        audit_wave(model, wave, est, _load(frame.iloc[:MIN_AUDIT - 1], "audit.csv"))


def test_concept_shift_changes_the_answers_not_the_attributes():
    stable, moved = (shifted_wave(400, seed=2, shift=s) for s in
                     (ConceptShift(), ConceptShift(offset=-0.2, reweight=(1.0, 0, 0, 0, 0))))
    assert np.array_equal(stable.reference_proba, stable.wave.true_proba)
    attributes = [c for c in stable.wave.frame.columns if c != TARGET_COLUMN]
    pd.testing.assert_frame_equal(stable.wave.frame[attributes], moved.wave.frame[attributes])
    assert np.array_equal(stable.reference_proba, moved.reference_proba)
    assert _score(moved.wave.true_proba).mean() < _score(moved.reference_proba).mean() - 5


def test_audited_accuracy_and_f1_cover_the_realized_ones_on_shifted_waves():
    """The model: the true P(y|x) before the shift; the wave's realized accuracy and macro F1
    of its argmax predictions, covered by the audited intervals of 150 answers."""
    from sklearn.metrics import f1_score

    runs, acc, f1 = 60, 0, 0
    for seed in range(runs):
        w = shifted_wave(800, seed=seed, shift=ConceptShift(offset=-0.15))
        y = w.wave.frame[TARGET_COLUMN].to_numpy()
        p = w.reference_proba
        pred = p.argmax(axis=1)
        a = np.random.default_rng([seed, 3]).choice(800, 150, replace=False)
        m = wave_ppi_mean(y[a] == pred[a], p[a].max(axis=1), p.max(axis=1))
        acc += m.ci95[0] <= np.mean(y == pred) <= m.ci95[1]
        present = np.union1d(y, pred)  # sklearn's macro F1 over the classes that occur
        f = f1_macro_ppi(y[a], p[a], pred[a], p, pred)
        f1 += f.ci95[0] <= f1_score(y, pred, labels=present, average="macro") <= f.ci95[1]
    assert acc / runs >= 0.88 and f1 / runs >= 0.85
