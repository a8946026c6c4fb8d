"""The sample surveys: generator determinism, the committed files, realism and difficulty."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from cx_app.errors import AnalysisError, SurveyFileError
from cx_app.simulation.waves import wave_label
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import nps_change, nps_summary
from cx_app.survey.samples import (
    SAMPLE_DIR,
    SAMPLE_FILES,
    TELECOM_ATTRIBUTES,
    TELECOM_TRUTH,
    sample_path,
    simulate_retail_csat,
    simulate_telecom_waves,
    write_sample_files,
)
from cx_app.survey.schema import load_schema

SCHEMAS = SAMPLE_DIR.parent / "survey_schemas"
NPS = "Likelihood to recommend (0-10)"
ATTRIBUTE_COLUMNS = [
    "Tariff plan", "Network - voice", "Network - data", "Shops", "Call center", "Website",
    "Mobile app", "Billing", "Roaming",
]


@pytest.fixture(scope="module")
def telecom() -> pd.DataFrame:
    return pd.read_excel(sample_path("telecom_nps"), sheet_name="Responses", engine="calamine")


def nps_of(scores) -> float:
    return nps_summary(np.asarray(scores)).value


def frame_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode() + pd.util.hash_pandas_object(
        frame.astype(str), index=True).to_numpy().tobytes()


# --------------------------------------------------------------------------- determinism


def test_same_seed_gives_identical_frames_and_another_seed_does_not():
    a = simulate_telecom_waves([1, 2], respondents_per_operator=50, seed=11)
    b = simulate_telecom_waves([1, 2], respondents_per_operator=50, seed=11)
    c = simulate_telecom_waves([1, 2], respondents_per_operator=50, seed=12)
    assert frame_bytes(a) == frame_bytes(b)
    assert frame_bytes(a) != frame_bytes(c)
    assert frame_bytes(simulate_retail_csat(200, seed=3)) == frame_bytes(
        simulate_retail_csat(200, seed=3))


def test_a_wave_does_not_depend_on_the_other_waves_simulated():
    alone = simulate_telecom_waves([7], respondents_per_operator=40, seed=5)
    together = simulate_telecom_waves([6, 7], respondents_per_operator=40, seed=5)
    assert frame_bytes(together[together["Wave"] == "2021-07"].reset_index(drop=True)) == \
        frame_bytes(alone)


def test_committed_files_are_exactly_what_the_generator_writes(tmp_path):
    written = write_sample_files(tmp_path)
    assert sorted(p.name for p in written) == sorted(SAMPLE_FILES.values())
    for path in written:
        assert path.read_bytes() == sample_path(path.name).read_bytes(), (
            f"{path.name} differs from the committed file: run python sample_surveys/generate.py"
        )


def test_sample_path_errors():
    with pytest.raises(SurveyFileError, match="no bundled sample called 'nope'"):
        sample_path("nope")
    assert sample_path("retail_csat.csv") == SAMPLE_DIR / "retail_csat.csv"


def test_simulation_argument_errors():
    with pytest.raises(AnalysisError, match="wave numbers repeat"):
        simulate_telecom_waves([1, 1])
    with pytest.raises(AnalysisError, match="drift names unknown attributes \\['Coverage'\\]"):
        simulate_telecom_waves([1], drift={"Coverage": 0.2})
    with pytest.raises(AnalysisError, match="wave numbers start at 1"):
        wave_label(0)
    assert wave_label(13) == "2022-01"


def test_drift_shifts_attribute_means_and_moves_nps_through_the_same_model():
    base = simulate_telecom_waves([8], respondents_per_operator=1000, seed=1)
    up = simulate_telecom_waves([8], respondents_per_operator=1000, seed=1,
                                drift={"network_data": 1.0, "Tariff plan": 1.0})
    unlabeled = simulate_telecom_waves([8], respondents_per_operator=1000, seed=1,
                                       include_target=False)
    assert NPS not in unlabeled.columns

    def mean(frame, column):
        v = frame[column]
        return v[v.map(lambda x: isinstance(x, int) and x != 99)].astype(int).mean()

    # Same random draws, latent mean +1: rounding and the cap at 10 keep the shift just under 1.
    assert 0.8 < mean(up, "Network - data") - mean(base, "Network - data") < 1.0
    assert mean(up, "Website") == mean(base, "Website")
    # The two heaviest attributes up one point each: the NPS rises by a lot.
    assert nps_of(up[NPS]) - nps_of(base[NPS]) > 10


# --------------------------------------------------------------------------- the committed files


def test_telecom_layout_and_sizes(telecom):
    assert list(telecom.columns) == ["Respondent ID", "Operator", "Wave", "Interview date",
                                     "Region", NPS, *ATTRIBUTE_COLUMNS]
    assert 7400 <= len(telecom) <= 7600
    assert telecom["Respondent ID"].is_unique
    assert telecom["Respondent ID"].str.fullmatch(r"T\d{6}").all()
    per_operator = telecom["Operator"].value_counts()
    assert sorted(per_operator.index) == ["Operator A", "Operator B", "Operator C"]
    assert per_operator.between(2400, 2600).all()
    assert sorted(telecom["Wave"].unique()) == [f"2021-0{m}" for m in range(1, 7)]
    assert (telecom["Interview date"].dt.strftime("%Y-%m") == telecom["Wave"]).all()
    assert set(telecom["Region"]) == {"Attica", "Central Macedonia", "Crete", "Thessaly",
                                      "Western Greece"}
    assert set(telecom[NPS]) == set(range(11))
    for column in ATTRIBUTE_COLUMNS:
        values = set(telecom[column])
        assert values <= set(range(1, 11)) | {99, "Don't know"}, column


def test_true_weights_sheet_records_the_model():
    sheet = pd.read_excel(sample_path("telecom_nps"), sheet_name="True weights",
                          engine="calamine")
    assert sheet["Column"].tolist() == ATTRIBUTE_COLUMNS
    assert dict(zip(sheet["Attribute"], sheet["Weight"], strict=True)) == TELECOM_TRUTH.weights
    weights = sheet.set_index("Column")["Weight"]
    assert weights.is_unique  # a strict ranking
    assert weights.idxmax() == "Network - data" and weights.idxmin() == "Roaming"
    assert weights["Tariff plan"] > weights["Network - voice"] > weights["Shops"]
    params = pd.read_excel(sample_path("telecom_nps"), sheet_name="True parameters",
                           engine="calamine")
    assert "Utility noise sd" in set(params["Parameter"])
    assert params["Parameter"].str.startswith("Threshold").sum() == 10


def test_wave7_twins(telecom):
    labeled = pd.read_excel(sample_path("telecom_nps_wave7_labeled"), engine="calamine")
    unlabeled = pd.read_excel(sample_path("telecom_nps_wave7_unlabeled"), engine="calamine")
    assert NPS not in unlabeled.columns
    assert unlabeled.equals(labeled.drop(columns=NPS))
    assert set(labeled["Wave"]) == {"2021-07"} and 1100 <= len(labeled) <= 1300
    assert not set(labeled["Respondent ID"]) & set(telecom["Respondent ID"])


def test_nps_heaping_at_0_5_8_10_and_realistic_group_shares(telecom):
    share = telecom[NPS].value_counts(normalize=True).sort_index()
    assert share[0] > 2 * share[1]
    assert share[5] > 2 * share[4] and share[5] > share[6]
    assert share[8] > share[7] and share[8] > share[9]
    assert share[10] > share[9] and share[10] == share.max()
    r = nps_summary(telecom[NPS].to_numpy())
    assert 0.35 <= r.shares["detractors"] <= 0.45
    assert 0.25 <= r.shares["passives"] <= 0.30
    assert 0.30 <= r.shares["promoters"] <= 0.35


def test_not_used_and_dont_know_shares(telecom):
    not_used = (telecom[ATTRIBUTE_COLUMNS] == 99).mean()
    assert 0.40 <= not_used["Roaming"] <= 0.60
    for column in ("Shops", "Call center", "Mobile app"):
        assert 0.05 <= not_used[column] <= 0.30, column
    for column in ("Tariff plan", "Network - data", "Billing"):
        assert not_used[column] == 0, column
    dont_know = (telecom[ATTRIBUTE_COLUMNS] == "Don't know").to_numpy().mean()
    assert 0 < dont_know < 0.01


def test_operators_differ_by_several_points_and_waves_trend_slightly(telecom):
    by_op = {op: nps_summary(g[NPS].to_numpy(), label=op) for op, g in telecom.groupby("Operator")}
    assert by_op["Operator A"].value > by_op["Operator B"].value > by_op["Operator C"].value
    change = nps_change(by_op["Operator C"], by_op["Operator A"])
    assert change.delta > 8 and change.p < 0.001
    waves = [nps_of(g[NPS]) for _, g in telecom.groupby("Wave")]
    assert max(waves) - min(waves) < 15
    assert np.mean(waves[3:]) > np.mean(waves[:3])  # the small upward trend


def test_attributes_are_correlated(telecom):
    numeric = telecom[ATTRIBUTE_COLUMNS].where(
        telecom[ATTRIBUTE_COLUMNS].map(lambda v: isinstance(v, int) and v != 99)).astype(float)
    corr = numeric.corr().to_numpy()[np.triu_indices(9, 1)]
    assert 0.25 <= corr.mean() <= 0.6


def test_the_importer_reads_every_sample_without_losing_rows():
    for short, schema in [("telecom_nps", "telecom_nps"), ("telecom_nps_wave7_unlabeled",
                          "telecom_nps"), ("retail_csat", "csat_5")]:
        data = load_survey(sample_path(short), schema=load_schema(SCHEMAS / f"{schema}.yaml"),
                           require_target=False)
        assert data.quality.rows_used == data.quality.rows_read, short
        assert len(data.quality.excluded) == 0, short


def test_linear_driver_weights_recover_the_true_ranking(telecom):
    X = telecom[ATTRIBUTE_COLUMNS].replace({99: np.nan, "Don't know": np.nan}).astype(float)
    X = X.fillna(X.median())
    X = (X - X.mean()) / X.std()
    y = telecom[NPS].to_numpy(dtype=float)
    coef, *_ = np.linalg.lstsq(np.c_[np.ones(len(X)), X.to_numpy()], y, rcond=None)
    truth = [a.weight for a in TELECOM_ATTRIBUTES]
    assert spearmanr(coef[1:], truth).statistic >= 0.9


def test_difficulty_bands_of_the_readme(telecom):
    """Single 80/20 split; README reports 10-fold CV: 0.376 (11 classes), 0.617 (3 groups)."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = telecom[ATTRIBUTE_COLUMNS].replace({99: np.nan, "Don't know": np.nan}).astype(float)
    y = telecom[NPS].to_numpy()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y,
                                                        random_state=0)
    model = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                          LogisticRegression(max_iter=2000)).fit(X_train, y_train)
    predicted = model.predict(X_test)
    group = {**dict.fromkeys(range(7), 0), 7: 1, 8: 1, 9: 2, 10: 2}
    accuracy_11 = np.mean(predicted == y_test)
    accuracy_3 = np.mean([group[p] == group[t] for p, t in zip(predicted, y_test, strict=True)])
    assert 0.33 <= accuracy_11 <= 0.42
    assert 0.55 <= accuracy_3 <= 0.67


def test_retail_csat_layout():
    frame = pd.read_csv(sample_path("retail_csat"), encoding="utf-8")
    assert list(frame.columns) == [
        "Customer ID", "Store", "Month", "Overall satisfaction (1-5)", "Staff friendliness",
        "Checkout speed", "Product availability", "Store cleanliness", "Prices",
        "Returns process"]
    assert len(frame) == 1500 and frame["Customer ID"].is_unique
    assert frame.iloc[:, 3:].isin(range(1, 6)).all().all()
    share = frame["Overall satisfaction (1-5)"].value_counts(normalize=True)
    assert share[4] == share.max() and 0.55 <= share[4] + share[5] <= 0.75
    assert frame["Store"].nunique() == 5 and frame["Month"].nunique() == 6
