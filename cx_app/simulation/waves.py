"""Simulated survey waves with a known true model (the bundled samples and the backtests).

**Telecom NPS market survey** (:func:`simulate_telecom_waves`), after the reduced-confusion-matrix
paper (Section 5.1): three operators, monthly waves, nine attributes 1–10, recommend 0–10. A
factor ``F ~ N(mu_operator + trend·(wave − 1), 1)``; attributes ``mean_j + shift_{operator,j} +
drift_j + loading_j·F + noise_j·e_j`` rounded to 1–10 with a little heaping on 5, 8 and 10;
"not used" as the code 99 (Roaming about half the time), rarely "Don't know" (which hides the
answer only: the score still counts); the utility ``U = Σ_j w_j·z_j + operator_effect + σ·e``
(``z_j`` standardised, 0 when not used) cut at fixed thresholds that heap 0, 5, 8 and 10. The
weights are clearly ranked, so a driver analysis can be checked; ``drift`` moves the attributes'
means only. **Retail CSAT** (:func:`simulate_retail_csat`): five stores, six attributes and the
satisfaction on 1–5, the same kind of model. Every wave has its own stream
``SeedSequence([seed, wave])``: its rows do not depend on which other waves are simulated.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from cx_app.errors import AnalysisError

NOT_USED = 99
DONT_KNOW = "Don't know"

ID_COLUMN = "Respondent ID"
OPERATOR_COLUMN = "Operator"
WAVE_COLUMN = "Wave"
DATE_COLUMN = "Interview date"
REGION_COLUMN = "Region"
NPS_COLUMN = "Likelihood to recommend (0-10)"

OPERATORS = ("Operator A", "Operator B", "Operator C")
REGIONS = ("Attica", "Central Macedonia", "Crete", "Thessaly", "Western Greece")
REGION_SHARES = (0.40, 0.20, 0.12, 0.14, 0.14)


@dataclass(frozen=True)
class AttributeTruth:
    """One attribute of the true model: its weight in the utility, its answer model and how
    its "not used" answers are written (the code 99, the text "N/A" or a routing blank)."""

    name: str
    column: str
    weight: float
    mean: float
    loading: float
    noise: float
    not_used: float
    scale: tuple[int, int] = (1, 10)
    not_used_as: str = "code"  # "code", "text" or "blank"
    dont_know: float = 0.0
    unanswered_effect: float = 0.0  # the utility of a respondent who did not answer

    @property
    def sd(self) -> float:
        """The standard deviation used to standardise the score in the utility."""
        return float(np.hypot(self.loading, self.noise))


TELECOM_ATTRIBUTES: tuple[AttributeTruth, ...] = (
    AttributeTruth("tariff_plan", "Tariff plan", 0.26, 6.6, 1.3, 1.5, 0.00),
    AttributeTruth("network_voice", "Network - voice", 0.18, 7.8, 1.2, 1.3, 0.00),
    AttributeTruth("network_data", "Network - data", 0.30, 7.1, 1.3, 1.5, 0.00),
    AttributeTruth("shops", "Shops", 0.04, 7.6, 1.1, 1.4, 0.15),
    AttributeTruth("call_center", "Call center", 0.10, 6.8, 1.2, 1.6, 0.20),
    AttributeTruth("website", "Website", 0.06, 7.3, 1.1, 1.4, 0.00),
    AttributeTruth("mobile_app", "Mobile app", 0.08, 7.6, 1.1, 1.4, 0.15),
    AttributeTruth("billing", "Billing", 0.14, 7.4, 1.2, 1.4, 0.00),
    AttributeTruth("roaming", "Roaming", 0.02, 7.4, 1.0, 1.5, 0.50),
)
"""The true telecom model's attributes, in file column order."""

TELECOM_COLUMNS: tuple[str, ...] = (
    ID_COLUMN, OPERATOR_COLUMN, WAVE_COLUMN, DATE_COLUMN, REGION_COLUMN, NPS_COLUMN,
    *(a.column for a in TELECOM_ATTRIBUTES),
)

# Operator differences: the factor's mean, attribute-specific shifts (scale points) and a small
# direct effect on the utility. A is the network leader, B the value brand, C the laggard.
OPERATOR_FACTOR_MEAN = {"Operator A": 0.08, "Operator B": 0.0, "Operator C": -0.03}
OPERATOR_SHIFTS: dict[str, dict[str, float]] = {
    "Operator A": {"network_data": 0.5, "network_voice": 0.3, "tariff_plan": -0.3},
    "Operator B": {"tariff_plan": 0.4, "network_data": -0.1, "mobile_app": 0.2},
    "Operator C": {"network_data": -0.25, "network_voice": -0.15, "call_center": -0.25,
                   "tariff_plan": 0.1},
}
OPERATOR_EFFECT = {"Operator A": 0.02, "Operator B": 0.0, "Operator C": -0.02}
WAVE_TREND = 0.02
"""Factor-mean change per wave: a small upward trend of the market's satisfaction."""

HEAP_PROBABILITY = 0.15
DONT_KNOW_PROBABILITY = 0.004
UTILITY_NOISE = 0.65
NPS_THRESHOLDS: tuple[float, ...] = (
    -1.346, -1.229, -1.078, -0.901, -0.753, -0.413, -0.250, -0.016, 0.485, 0.751,
)
"""Cuts of the utility into 0..10: score k when ``t[k-1] <= U < t[k]``."""


def ordered_probit(mean_utility: np.ndarray, thresholds: tuple[float, ...] = NPS_THRESHOLDS,
                   noise: float = UTILITY_NOISE) -> np.ndarray:
    """P(score k) of each respondent (n × len(thresholds)+1) when the utility is
    ``mean_utility + noise·e`` cut at ``thresholds``: the simulators' closed-form truth."""
    cuts = np.concatenate([[-np.inf], thresholds, [np.inf]])
    return np.diff(norm.cdf((cuts[None, :] - mean_utility[:, None]) / noise), axis=1)


@dataclass(frozen=True)
class TelecomTruth:
    """The whole true model, as recorded in the sample workbook's "True weights" sheet."""

    attributes: tuple[AttributeTruth, ...] = TELECOM_ATTRIBUTES
    thresholds: tuple[float, ...] = NPS_THRESHOLDS
    utility_noise: float = UTILITY_NOISE
    wave_trend: float = WAVE_TREND

    @property
    def weights(self) -> dict[str, float]:
        """Attribute name → true weight."""
        return {a.name: a.weight for a in self.attributes}

    def weights_frame(self) -> pd.DataFrame:
        """One row per attribute (name, column, weight and answer-model parameters)."""
        return pd.DataFrame(
            {
                "Attribute": [a.name for a in self.attributes],
                "Column": [a.column for a in self.attributes],
                "Weight": [a.weight for a in self.attributes],
                "Weight rank": pd.Series([a.weight for a in self.attributes])
                .rank(ascending=False, method="min").astype(int).to_list(),
                "Mean (latent)": [a.mean for a in self.attributes],
                "Factor loading": [a.loading for a in self.attributes],
                "Noise sd": [a.noise for a in self.attributes],
                "Standardising sd": [round(a.sd, 4) for a in self.attributes],
                "Not used share": [a.not_used for a in self.attributes],
            }
        )

    def parameters_frame(self) -> pd.DataFrame:
        """The other true parameters as (parameter, value) rows."""
        rows = [("Utility noise sd", self.utility_noise), ("Wave trend (factor mean)", self.wave_trend),
                ("Heaping probability (attributes)", HEAP_PROBABILITY),
                ("Don't know probability", DONT_KNOW_PROBABILITY)]
        rows += [(f"Threshold {k - 1}|{k}", t) for k, t in enumerate(self.thresholds, start=1)]
        rows += [(f"Factor mean, {op}", v) for op, v in OPERATOR_FACTOR_MEAN.items()]
        rows += [(f"Utility effect, {op}", v) for op, v in OPERATOR_EFFECT.items()]
        rows += [
            (f"Attribute shift, {op}, {name}", v)
            for op, shifts in OPERATOR_SHIFTS.items() for name, v in shifts.items()
        ]
        return pd.DataFrame(rows, columns=["Parameter", "Value"])


TELECOM_TRUTH = TelecomTruth()


def wave_label(wave: int) -> str:
    """Wave 1 is ``"2021-01"``, wave 7 ``"2021-07"``, wave 13 ``"2022-01"``."""
    if wave < 1:
        raise AnalysisError(f"wave numbers start at 1 (2021-01), got {wave}")
    year, month = divmod(wave - 1, 12)
    return f"{2021 + year}-{month + 1:02d}"


def _month_dates(rng: np.random.Generator, wave: int, n: int) -> np.ndarray:
    year, month = divmod(wave - 1, 12)
    first = dt.date(2021 + year, month + 1, 1)
    days = rng.integers(0, calendar.monthrange(first.year, first.month)[1], size=n)
    return np.datetime64(first, "D") + days.astype("timedelta64[D]")


def _drift_by_name(drift: float | Mapping[str, float],
                   attributes: tuple[AttributeTruth, ...]) -> dict[str, float]:
    if isinstance(drift, Mapping):
        by_key = {**{a.name: a.name for a in attributes}, **{a.column: a.name for a in attributes}}
        unknown = sorted(set(drift) - set(by_key))
        if unknown:
            raise AnalysisError(
                f"drift names unknown attributes {unknown}; use names or columns of "
                f"{[a.name for a in attributes]}"
            )
        out = dict.fromkeys((a.name for a in attributes), 0.0)
        for key, value in drift.items():
            out[by_key[key]] += float(value)
        return out
    return dict.fromkeys((a.name for a in attributes), float(drift))


def _scores(latent: np.ndarray, rng: np.random.Generator, lo: int, hi: int,
            heaps: tuple[int, ...]) -> np.ndarray:
    """Round a latent value to the scale; near a heap value, snap to it sometimes."""
    scores = np.clip(np.rint(latent), lo, hi).astype(np.int64)
    if heaps:
        heaps_arr = np.asarray(heaps)
        nearest = heaps_arr[np.abs(scores[..., None] - heaps_arr).argmin(axis=-1)]
        snap = (np.abs(nearest - scores) == 1) & (rng.random(scores.shape) < HEAP_PROBABILITY)
        scores = np.where(snap, nearest, scores)
    return scores


def _simulate_telecom_wave(wave: int, n_per_operator: int, seed: int,
                           drift: dict[str, float], truth: TelecomTruth) -> pd.DataFrame:
    rng = np.random.default_rng(np.random.SeedSequence([seed, wave]))
    attrs = truth.attributes
    n = n_per_operator * len(OPERATORS)
    operator = np.repeat(np.arange(len(OPERATORS)), n_per_operator)
    op_names = np.asarray(OPERATORS)[operator]

    factor_mean = np.array([OPERATOR_FACTOR_MEAN[o] for o in OPERATORS])[operator]
    factor = rng.normal(factor_mean + truth.wave_trend * (wave - 1), 1.0)

    scores = np.empty((n, len(attrs)), dtype=np.int64)
    used = np.empty((n, len(attrs)), dtype=bool)
    for j, a in enumerate(attrs):
        shift = np.array([OPERATOR_SHIFTS[o].get(a.name, 0.0) for o in OPERATORS])[operator]
        latent = a.mean + shift + drift[a.name] + a.loading * factor + a.noise * rng.normal(size=n)
        scores[:, j] = _scores(latent, rng, 1, 10, heaps=(5, 8, 10))
        used[:, j] = rng.random(n) >= a.not_used
    dont_know = used & (rng.random((n, len(attrs))) < DONT_KNOW_PROBABILITY)

    means = np.array([a.mean for a in attrs])
    sds = np.array([a.sd for a in attrs])
    weights = np.array([a.weight for a in attrs])
    z = np.where(used, (scores - means) / sds, 0.0)
    effect = np.array([OPERATOR_EFFECT[o] for o in OPERATORS])[operator]
    utility = z @ weights + effect + truth.utility_noise * rng.normal(size=n)
    nps = np.searchsorted(np.asarray(truth.thresholds), utility, side="right")

    dates = _month_dates(rng, wave, n)
    region = np.asarray(REGIONS)[rng.choice(len(REGIONS), size=n, p=REGION_SHARES)]
    order = np.lexsort((operator, dates))  # interview order: by date, then operator

    frame = pd.DataFrame(
        {
            OPERATOR_COLUMN: op_names,
            WAVE_COLUMN: wave_label(wave),
            DATE_COLUMN: pd.to_datetime(dates),
            REGION_COLUMN: region,
            NPS_COLUMN: nps.astype(np.int64),
        }
    )
    for j, a in enumerate(attrs):
        answers = np.where(used[:, j], scores[:, j], NOT_USED).astype(object)
        answers[dont_know[:, j]] = DONT_KNOW
        frame[a.column] = answers
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, ID_COLUMN, [f"T{wave:02d}{i:04d}" for i in range(1, n + 1)])
    return frame


def simulate_telecom_waves(
    waves: Iterable[int] = range(1, 7),
    *,
    respondents_per_operator: int = 417,
    seed: int = 2021,
    drift: float | Mapping[str, float] = 0.0,
    include_target: bool = True,
    truth: TelecomTruth = TELECOM_TRUTH,
) -> pd.DataFrame:
    """Simulate telecom NPS market-survey waves in the sample file layout.

    ``waves``: wave numbers (1 = 2021-01, 13 = 2022-01), each from its own random stream (wave 7
    is the same simulated alone or with waves 1–6); ``respondents_per_operator``: per operator
    and wave (417 → 1,251 per wave); ``drift``: the attributes' latent means shifted in scale
    points, one number or attribute name (or column) → shift (weights, thresholds and noise do
    not change); ``include_target=False`` drops the recommend column (an unlabeled wave).
    Attributes hold integers 1–10, the code 99 ("not used") or "Don't know"; respondent IDs
    ``T<wave:02d><number:04d>`` are unique across waves.

    >>> frame = simulate_telecom_waves([1], respondents_per_operator=10, seed=1)
    >>> frame.shape, frame["Wave"].unique().tolist()
    ((30, 15), ['2021-01'])
    """
    waves = [int(w) for w in waves]
    if not waves:
        raise AnalysisError("simulate_telecom_waves needs at least one wave number")
    if len(set(waves)) != len(waves):
        raise AnalysisError(f"wave numbers repeat in {waves}: each wave is simulated once")
    if not 1 <= respondents_per_operator <= 3333:
        raise AnalysisError(
            f"respondents_per_operator must be between 1 and 3333, got {respondents_per_operator}"
        )
    shifts = _drift_by_name(drift, truth.attributes)
    frame = pd.concat(
        [_simulate_telecom_wave(w, respondents_per_operator, seed, shifts, truth) for w in waves],
        ignore_index=True,
    )
    if not include_target:
        frame = frame.drop(columns=NPS_COLUMN)
    return frame


# --- Retail CSAT 1–5 -----------------------------------------------------------------------

CSAT_ID_COLUMN = "Customer ID"
CSAT_STORE_COLUMN = "Store"
CSAT_MONTH_COLUMN = "Month"
CSAT_COLUMN = "Overall satisfaction (1-5)"
STORES = ("Athens Centre", "Piraeus", "Thessaloniki", "Patras", "Heraklion")

CSAT_ATTRIBUTES: tuple[AttributeTruth, ...] = (
    AttributeTruth("staff_friendliness", "Staff friendliness", 0.32, 3.9, 0.6, 0.7, 0.0),
    AttributeTruth("checkout_speed", "Checkout speed", 0.14, 3.5, 0.6, 0.8, 0.0),
    AttributeTruth("product_availability", "Product availability", 0.26, 3.6, 0.6, 0.8, 0.0),
    AttributeTruth("store_cleanliness", "Store cleanliness", 0.08, 4.0, 0.5, 0.7, 0.0),
    AttributeTruth("prices", "Prices", 0.20, 3.2, 0.6, 0.9, 0.0),
    AttributeTruth("returns_process", "Returns process", 0.05, 3.7, 0.5, 0.8, 0.0),
)
"""The true CSAT model's attributes, in file column order (no missing answers)."""

CSAT_THRESHOLDS: tuple[float, ...] = (-1.422, -0.894, -0.327, 0.573)
"""Cuts of the CSAT utility into 1..5."""
CSAT_UTILITY_NOISE = 0.45
STORE_EFFECT = {"Athens Centre": 0.05, "Piraeus": -0.05, "Thessaloniki": 0.1, "Patras": -0.1,
                "Heraklion": 0.0}


def simulate_retail_csat(n: int = 1500, *, seed: int = 2021, months: int = 6) -> pd.DataFrame:
    """Simulate a retail CSAT 1–5 survey: customers of five stores over ``months`` months.

    Columns: "Customer ID" (``C00001``…), "Store", "Month" (``2021-01``…), "Overall satisfaction
    (1-5)" and the six attributes of :data:`CSAT_ATTRIBUTES` (integers 1–5, no missing codes).
    Same model as the telecom survey: a latent factor, correlated attributes, a weighted
    utility with noise, cut at :data:`CSAT_THRESHOLDS`.
    """
    if n < 1 or months < 1:
        raise AnalysisError(f"simulate_retail_csat needs n >= 1 and months >= 1, got {n}, {months}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 5]))
    store = rng.choice(len(STORES), size=n, p=(0.3, 0.15, 0.25, 0.15, 0.15))
    month = np.sort(rng.integers(1, months + 1, size=n))
    factor = rng.normal(0.0, 1.0, size=n)
    attrs = CSAT_ATTRIBUTES
    scores = np.empty((n, len(attrs)), dtype=np.int64)
    for j, a in enumerate(attrs):
        latent = a.mean + a.loading * factor + a.noise * rng.normal(size=n)
        scores[:, j] = _scores(latent, rng, 1, 5, heaps=())
    z = (scores - np.array([a.mean for a in attrs])) / np.array([a.sd for a in attrs])
    effect = np.array([STORE_EFFECT[s] for s in STORES])[store]
    utility = z @ np.array([a.weight for a in attrs]) + effect + CSAT_UTILITY_NOISE * rng.normal(
        size=n)
    csat = 1 + np.searchsorted(np.asarray(CSAT_THRESHOLDS), utility, side="right")
    frame = pd.DataFrame(
        {
            CSAT_ID_COLUMN: [f"C{i:05d}" for i in range(1, n + 1)],
            CSAT_STORE_COLUMN: np.asarray(STORES)[store],
            CSAT_MONTH_COLUMN: [wave_label(int(m)) for m in month],
            CSAT_COLUMN: csat.astype(np.int64),
        }
    )
    for j, a in enumerate(attrs):
        frame[a.column] = scores[:, j]
    return frame
