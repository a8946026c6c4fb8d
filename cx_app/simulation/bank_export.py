"""A realistic, messy bank NPS-tracker export with a known true model (tests and backtests).

Written the way survey platforms write (``shared/SURVEYS.md``), to judge the app's defaults: a
"Notes" cover sheet and title rows above whole-question headers; wave (quarters), brand, region,
respondent id, weight and free-text comments starting with ``=``, ``+``, ``-`` or ``@``; "not
applicable" as 99 (on more than half of one attribute), as "N/A" and "Don't know" on a 1–5
attribute and as routing blanks on a signed −2..2 one (−1 is a real answer); a target heaped on
5, 8 and 10 with a few invalid answers; an attribute the last wave did not ask. The true model is
the sample's (:mod:`cx_app.simulation.waves`) with ``z_j = 0`` for a service not used and the
answer's value for "Don't know", so the true class probabilities given the answers are closed
form: :func:`bank_true_probabilities` (an oracle for backtests).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from cx_app.atomic_files import atomic_path
from cx_app.errors import AnalysisError
from cx_app.simulation.waves import NPS_THRESHOLDS, AttributeTruth, ordered_probit

NOT_APPLICABLE = 99
NA_TEXT = "N/A"
DONT_KNOW = "Don't know"

ID_COLUMN = "Respondent ID"
WAVE_COLUMN = "Wave"
BRAND_COLUMN = "Brand"
REGION_COLUMN = "Region"
WEIGHT_COLUMN = "Weight"
COMMENT_COLUMN = "Comment"
TARGET_COLUMN = ("Q1. How likely are you to recommend Bank X to a friend or colleague? "
                 "(0 = not at all, 10 = extremely)")
TITLE_ROWS = ("NPS tracker – export", "Confidential: internal use only")

BRANDS = ("Bank A", "Bank B")
BRAND_FACTOR_MEAN = {"Bank A": 0.05, "Bank B": -0.05}
BRAND_EFFECT = {"Bank A": 0.02, "Bank B": -0.02}
REGIONS = ("North", "South", "East", "West")
WAVE_TREND = 0.03
UTILITY_NOISE = 0.65
TARGET_DONT_KNOW = 0.008
TARGET_BLANK = 0.006
COMMENTS = ("Great service", "=1+1", "+ fees too high", "-no comment-", "@branch manager",
            "App keeps crashing", "", "")


BANK_ATTRIBUTES: tuple[AttributeTruth, ...] = (
    AttributeTruth("fees", "Satisfaction with: Fees & charges (1-10)", 0.28, 6.4, 1.3, 1.5, 0.00),
    AttributeTruth("branch_staff", "Satisfaction with: Branch staff (1-10)",
                   0.12, 7.6, 1.1, 1.4, 0.25),
    AttributeTruth("mortgage_advice", "Satisfaction with: Mortgage advice (1-10)",
                   0.08, 6.9, 1.2, 1.5, 0.58),
    AttributeTruth("mobile_app", "Mobile app (1-5)", 0.22, 3.7, 0.7, 0.8, 0.10, (1, 5), "text",
                   dont_know=0.02),
    AttributeTruth("phone_effort", "Phone support: effort (-2 = very hard, 2 = very easy)",
                   0.14, 0.3, 0.7, 0.8, 0.35, (-2, 2), "blank"),
    AttributeTruth("online_banking", "Online banking (1-10)", 0.16, 7.2, 1.2, 1.4, 0.05),
)
"""The true bank model's attributes, in file column order."""

DROPPED_IN_LAST_WAVE = "online_banking"


def wave_label(wave: int) -> str:
    """Quarter labels: wave 1 is ``"2026-Q1"``, wave 5 ``"2027-Q1"``."""
    if wave < 1:
        raise AnalysisError(f"wave numbers start at 1 (2026-Q1), got {wave}")
    year, quarter = divmod(wave - 1, 4)
    return f"{2026 + year}-Q{quarter + 1}"


def _standardised(frame: pd.DataFrame) -> np.ndarray:
    """``z`` of the true utility from the answers as written (0 where not used)."""
    z = np.zeros((len(frame), len(BANK_ATTRIBUTES)))
    for j, a in enumerate(BANK_ATTRIBUTES):
        if a.column not in frame:
            continue
        values = pd.to_numeric(frame[a.column], errors="coerce").to_numpy(dtype=float)
        valid = np.isfinite(values) & (values >= a.scale[0]) & (values <= a.scale[1])
        z[:, j] = np.where(valid, (values - a.mean) / a.sd, 0.0)
    return z


def _simulate_wave(wave: int, n: int, seed: int, last: bool) -> pd.DataFrame:
    rng = np.random.default_rng(np.random.SeedSequence([seed, wave]))
    brand = rng.integers(0, len(BRANDS), size=n)
    brands = np.asarray(BRANDS)[brand]
    factor = rng.normal(np.array([BRAND_FACTOR_MEAN[b] for b in BRANDS])[brand]
                        + WAVE_TREND * (wave - 1), 1.0)
    frame = pd.DataFrame({
        ID_COLUMN: [f"B{wave:02d}-{i:05d}" for i in range(1, n + 1)],
        WAVE_COLUMN: wave_label(wave),
        BRAND_COLUMN: brands,
        REGION_COLUMN: np.asarray(REGIONS)[rng.integers(0, len(REGIONS), size=n)],
        WEIGHT_COLUMN: np.round(rng.lognormal(0.0, 0.35, size=n), 3),
    })
    z = np.zeros((n, len(BANK_ATTRIBUTES)))
    answers: dict[str, np.ndarray] = {}
    for j, a in enumerate(BANK_ATTRIBUTES):
        lo, hi = a.scale
        latent = a.mean + a.loading * factor + a.noise * rng.normal(size=n)
        scores = np.clip(np.rint(latent), lo, hi).astype(np.int64)
        used = rng.random(n) >= a.not_used
        z[:, j] = np.where(used, (scores - a.mean) / a.sd, 0.0)
        hidden = used & (rng.random(n) < a.dont_know)
        written = scores.astype(object)
        written[~used] = {"code": NOT_APPLICABLE, "text": NA_TEXT, "blank": None}[a.not_used_as]
        written[hidden] = DONT_KNOW
        answers[a.column] = written
    effect = np.array([BRAND_EFFECT[b] for b in BRANDS])[brand]
    utility = z @ np.array([a.weight for a in BANK_ATTRIBUTES]) + effect \
        + UTILITY_NOISE * rng.normal(size=n)
    target = np.searchsorted(np.asarray(NPS_THRESHOLDS), utility, side="right").astype(object)
    u = rng.random(n)
    target[u < TARGET_DONT_KNOW] = DONT_KNOW
    target[(u >= TARGET_DONT_KNOW) & (u < TARGET_DONT_KNOW + TARGET_BLANK)] = None
    frame[TARGET_COLUMN] = target
    for a in BANK_ATTRIBUTES:
        if not (last and a.name == DROPPED_IN_LAST_WAVE):
            frame[a.column] = answers[a.column]
    frame[COMMENT_COLUMN] = np.asarray(COMMENTS, dtype=object)[
        rng.integers(0, len(COMMENTS), size=n)]
    return frame


def simulate_bank_waves(n_per_wave: int = 1200, *, waves: int = 3, seed: int = 7,
                        drop_in_last_wave: bool = True) -> dict[str, pd.DataFrame]:
    """Quarterly waves of the messy bank tracker, ``{wave label: rows as written}``.

    With ``drop_in_last_wave`` the last wave has no online-banking column (the questionnaire
    changed). Every wave has its own random stream, so a wave does not depend on the others.
    """
    if n_per_wave < 1 or waves < 1:
        raise AnalysisError("simulate_bank_waves needs at least one wave of one respondent")
    return {wave_label(w): _simulate_wave(w, n_per_wave, seed, drop_in_last_wave and w == waves)
            for w in range(1, waves + 1)}


def bank_true_probabilities(frame: pd.DataFrame) -> np.ndarray:
    """The true model's probability of each recommend score 0..10 (n × 11) given a
    respondent's answers as written and brand: the oracle floor of any estimate.

    "Don't know" hides a score the utility still used, so for those respondents the oracle is
    conditioned on less than the truth (their answer counts as 0, the mean): an approximation
    that affects about 2% of one attribute's answers.
    """
    z = _standardised(frame)
    effect = frame[BRAND_COLUMN].map(BRAND_EFFECT).to_numpy(dtype=float)
    return ordered_probit(z @ np.array([a.weight for a in BANK_ATTRIBUTES]) + effect,
                          NPS_THRESHOLDS, UTILITY_NOISE)


def write_bank_export(waves: dict[str, pd.DataFrame] | pd.DataFrame, path: str | Path, *,
                      title_rows: Sequence[str] = TITLE_ROWS, cover_sheet: bool = True) -> Path:
    """Write waves (stacked) as an Excel export: a "Notes" cover sheet, then the "Data" sheet
    with title rows above the header, as survey platforms do. Returns the path."""
    from openpyxl import Workbook

    frame = waves if isinstance(waves, pd.DataFrame) else pd.concat(list(waves.values()),
                                                                    ignore_index=True)
    book = Workbook()
    notes = book.active
    notes.title = "Notes"
    if cover_sheet:
        notes.append(["Bank NPS tracker"])
        notes.append(["99 = not applicable; blank = question not shown"])
        data = book.create_sheet("Data")
    else:
        notes.title = "Data"
        data = notes
    for line in title_rows:
        data.append([line])
    if title_rows:
        data.append([])
    data.append(list(frame.columns))
    for row in frame.itertuples(index=False):
        data.append([None if (v is None or (isinstance(v, float) and np.isnan(v))) else
                     (v.item() if isinstance(v, np.generic) else v) for v in row])
    path = Path(path)
    with atomic_path(path) as tmp:
        book.save(tmp)
    return path
