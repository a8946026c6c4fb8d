"""Files as European CX teams export them: Excel's CSV with a semicolon, a decimal comma and
Windows-1252, headers and "no answer" codes in the respondents' language.

Every expected number is computed here with pandas from the frame the file was written from.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.errors import SchemaError
from cx_app.survey.importing import load_survey
from cx_app.survey.inference import infer_schema


def _german_frame(n: int = 600, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    overall = rng.integers(1, 6, n)
    frame = pd.DataFrame({
        "Kunden-ID": [f"K{i:04d}" for i in range(n)],
        "Filiale": rng.choice(["München Süd", "Köln Ehrenfeld", "Düsseldorf"], n),
        "Gewicht": np.round(rng.lognormal(0.0, 0.3, n), 2),
        "Gesamtzufriedenheit (1-5)": overall,
        "Freundlichkeit": np.clip(overall + rng.integers(-1, 2, n), 1, 5),
        "Preise": np.clip(overall + rng.integers(-2, 2, n), 1, 5).astype(object),
        # "process" holds "ces" (customer effort score): it must not read as a target
        "Returns process": np.clip(overall + rng.integers(-1, 3, n), 1, 5),
    })
    frame.loc[rng.random(n) < 0.1, "Preise"] = "k.A."
    return frame


def test_a_german_excel_csv_reads_as_its_analyst_means_it(tmp_path, capsys):
    frame = _german_frame()
    path = tmp_path / "umfrage.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False, encoding="cp1252")
    assert re.search(r";\d+,\d+;", path.read_text(encoding="cp1252"))  # decimal commas
    schema = infer_schema(pd.read_csv(path, sep=";", dtype=str, encoding="cp1252"))
    assert schema.target.column == "Gesamtzufriedenheit (1-5)" and schema.target.kind == "csat"
    assert schema.weight is not None and schema.weight.column == "Gewicht"
    assert "Returns process" in [a.column for a in schema.attributes]
    data = load_survey(path)
    assert data.source.encoding == "cp1252" and data.source.delimiter == ";"
    assert data.schema.target.column == "Gesamtzufriedenheit (1-5)"
    # "k.A." (keine Angabe) is an unanswered score, kept as a gap, not an excluded row
    assert data.quality.rows_excluded == 0 and len(data.model_frame) == len(frame)
    prices = next(a.name for a in data.schema.attributes if a.column == "Preise")
    assert int(data.model_frame[prices].isna().sum()) == int((frame["Preise"] == "k.A.").sum())
    assert main(["nps", str(path), "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    y, w = frame["Gesamtzufriedenheit (1-5)"], frame["Gewicht"]
    expected = 100 * (np.average(y >= 4, weights=w) - np.average(y <= 2, weights=w))
    assert overall["value"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("header", "kind"), [
    ("Wie wahrscheinlich ist es, dass Sie uns weiterempfehlen? (0-10)", "nps"),
    ("Recommanderiez-vous notre banque ? (0-10)", "nps"),
    ("¿Recomendaría nuestro banco? (0-10)", "nps"),
    ("Likelihood of renewing (0-10)", "custom"),
])
def test_the_recommend_question_is_found_in_the_respondents_language(header, kind):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"Claims process": rng.integers(1, 11, 200),
                          "Customer services": rng.integers(1, 11, 200),
                          header: rng.integers(0, 11, 200)})
    schema = infer_schema(frame)
    # "process" and "services" hold "ces"; they once outranked the real question
    assert schema.target.column == header and schema.target.kind == kind


def test_weights_whose_comma_could_be_a_thousands_separator_are_refused_in_one_sentence(
        tmp_path):
    frame = pd.DataFrame({"Overall satisfaction (1-5)": [4, 5, 2, 3],
                          "Staff": [4, 4, 2, 3], "Prices": [3, 5, 1, 3],
                          "Weight": ["1,250", "2,500", "1,000", "3,125"]})
    path = tmp_path / "weights.csv"
    frame.to_csv(path, sep=";", index=False)
    with pytest.raises(SchemaError, match=r"'1,250' reads as 1\.250 with a decimal comma and as "
                                          r"1250 with a thousands separator"):
        load_survey(path)
    frame["Weight"] = ["1,25", "2,5", "1", "3,125"]  # a comma that is no thousands separator
    frame.to_csv(path, sep=";", index=False)
    data = load_survey(path)
    assert data.frame[data.schema.weight.name].tolist() == [1.25, 2.5, 1.0, 3.125]


def test_french_ces_is_a_word_and_ces_in_capitals_the_effort_score():
    rng = np.random.default_rng(4)
    overall = rng.integers(1, 6, 300)
    frame = pd.DataFrame({
        "Accueil dans ces agences": np.clip(overall + rng.integers(-1, 2, 300), 1, 5),
        "Clarté de ces tarifs": np.clip(overall + rng.integers(-2, 2, 300), 1, 5),
        "Satisfaction globale (1-5)": overall})
    schema = infer_schema(frame)
    assert (schema.target.column, schema.target.kind) == ("Satisfaction globale (1-5)", "csat")
    english = frame.rename(columns={"Satisfaction globale (1-5)": "CES (1-5)"})
    assert (infer_schema(english).target.column, infer_schema(english).target.kind) == (
        "CES (1-5)", "ces")



def test_german_choice_text_is_read_as_scores_and_its_no_answer_as_gaps(tmp_path):
    levels = ["Sehr unzufrieden", "Unzufrieden", "Weder zufrieden noch unzufrieden",
              "Zufrieden", "Sehr zufrieden"]
    rng = np.random.default_rng(8)
    n = 300
    overall = rng.integers(0, 11, n)
    staff = rng.integers(1, 6, n)
    frame = pd.DataFrame({
        "Wie wahrscheinlich ist es, dass Sie uns weiterempfehlen?": overall,
        "Freundlichkeit": [levels[s - 1] for s in staff],
        "Wartezeit": rng.integers(1, 6, n).astype(object)})
    frame.loc[::10, "Freundlichkeit"] = "Weiß nicht"
    frame.loc[5::10, "Wartezeit"] = "-"
    path = tmp_path / "umfrage.xlsx"
    frame.to_excel(path, index=False)
    data = load_survey(path)
    assert data.schema.target.kind == "nps"
    staff_name = next(a.name for a in data.schema.attributes if a.column == "Freundlichkeit")
    wait_name = next(a.name for a in data.schema.attributes if a.column == "Wartezeit")
    expected = pd.Series(staff, dtype=float).where(frame["Freundlichkeit"] != "Weiß nicht")
    np.testing.assert_array_equal(data.model_frame[staff_name].to_numpy(float), expected)
    # "-" in a numeric column is "no answer" too: a gap, the respondent stays in
    assert data.quality.rows_excluded == 0
    assert int(data.model_frame[wait_name].isna().sum()) == int((frame["Wartezeit"] == "-").sum())
