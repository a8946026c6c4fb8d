"""Qualtrics, SurveyMonkey and SPSS exports read as the analyst means them (issue 34).

Fixtures: :mod:`platform_exports` (built from the platforms' documented formats; the truth is
known). With no mapping: the recommend question is the NPS target on 0–10, exactly the four
satisfaction items are attributes on 1–5, the response id is the id, and no platform column,
personal data, open text or derived column is an attribute or a segment; the NPS equals a
pandas count over the respondents with a valid answer; no e-mail or IP address comes out.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cx_app.cli import main
from cx_app.errors import SchemaError, SurveyFileError
from cx_app.survey.importing import load_survey
from cx_app.survey.inference import infer_schema
from cx_app.survey.nps import nps_summary
from cx_app.survey.schema import schema_from_mapping

sys.path.insert(0, str(Path(__file__).parent))
import platform_exports as exports  # noqa: E402

BUILDERS = {
    "qualtrics.csv": exports.qualtrics_csv,
    "qualtrics.xlsx": exports.qualtrics_xlsx,
    "qualtrics.tsv": exports.qualtrics_tsv,
    "spss.sav": exports.spss_sav,
    "surveymonkey.xlsx": exports.surveymonkey_xlsx,
    "googleforms.csv": exports.google_forms_csv,
}
PERSONAL = re.compile(r"@example\.com|\b10\.\d+\.\d+\.7\b|First\d|Last\d|51\.5072")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("platforms")
    truth = exports.answers()
    return truth, {name: build(truth, folder / name) for name, build in BUILDERS.items()}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_roles_scores_and_nps_are_what_the_analyst_means(files, name):
    truth, paths = files
    survey = load_survey(paths[name])
    schema = survey.schema
    monkey, google = name.startswith("surveymonkey"), name.startswith("google")
    assert schema.target.column == (exports.RECOMMEND if monkey or google else "Q1")
    assert (schema.target.kind, schema.is_nps) == ("nps", True)
    assert (schema.target.scale.min, schema.target.scale.max) == (0, 10)
    items = ([f"{exports.MATRIX} – {item}" for item in exports.ITEMS] if monkey
             else [f"{exports.MATRIX} [{item}]" for item in exports.ITEMS] if google
             else [f"Q2_{k + 1}" for k in range(len(exports.ITEMS))])
    assert [a.column for a in schema.attributes] == items
    assert all((a.scale.min, a.scale.max) == (1, 5) for a in schema.attributes)
    # a matrix item is labelled by its own text (what the drivers and reports show); the
    # question the items share ("question - item" in the export) is named once, in the layout
    assert [a.label for a in schema.attributes] == list(exports.ITEMS)
    assert (f"items labelled by their own text, without the question they share: "
            f"{exports.MATRIX!r} ({', '.join(map(repr, exports.ITEMS))})") in schema.description
    assert [s.column for s in schema.segments] == ["Region"]
    if google:  # a Google form keeps no response id; its timestamp is the platform's own
        assert schema.respondent_id is None
        assert "'Timestamp' (Google Forms metadata, not a survey answer)" in " ".join(
            survey.quality.notes)
    else:
        assert schema.respondent_id.column == ("Respondent ID" if monkey else "ResponseId")
    # NPS over everyone with a valid recommend answer, partial responses included
    n, nps = exports.nps_truth(truth)
    assert survey.quality.respondents == n
    assert nps_summary(survey.scores).value == pytest.approx(nps, abs=1e-9)
    # every attribute answer is the respondent's score; n/a and not shown are gaps
    valid = truth["Q1"].notna().to_numpy()
    for k, attribute in enumerate(schema.attributes):
        expected = truth[f"Q2_{k + 1}"].where(~truth[f"Q2_{k + 1}"].isin([0, 6]))
        if name == "qualtrics.csv":  # the numeric CSV fixture has no n/a code (see fixture)
            expected = truth[f"Q2_{k + 1}"].where(truth[f"Q2_{k + 1}"].between(1, 5))
        got = survey.frame[attribute.name].to_numpy(dtype=float)
        np.testing.assert_array_equal(got, expected.to_numpy(dtype=float)[valid])
    # no personal data anywhere in what the import gives
    shown = (survey.frame.astype(str).to_csv() + schema.to_yaml()
             + json.dumps(survey.quality.to_dict(), default=str))
    assert not PERSONAL.search(shown)


def test_dropped_columns_are_named_with_their_reason(files):
    _, paths = files
    notes = " ".join(load_survey(paths["qualtrics.xlsx"]).quality.notes)
    assert "'RecipientEmail' (personal data (e-mail addresses))" in notes
    assert "'IPAddress' (personal data (IP addresses))" in notes
    assert "'LocationLatitude' (personal data (coordinates))" in notes
    assert "'Finished' (Qualtrics metadata, not a survey answer)" in notes
    assert "'Q1_NPS_GROUP' (derived from the recommend answer" in notes
    assert "44 'Not applicable' answer(s) read as gaps" in notes


def test_rows_are_numbered_as_in_the_file(files):
    truth, paths = files
    survey = load_survey(paths["qualtrics.csv"])
    missing = [e.row for e in survey.quality.excluded if e.reason == "missing target"]
    # three header rows: respondent i (0-based) is on file row i + 4
    assert missing == [int(i) + 4 for i in np.flatnonzero(truth["Q1"].isna())]
    assert survey.source.header_row == 3


def test_cli_validate_and_nps_on_the_excel_export(files, capsys):
    truth, paths = files
    assert main(["validate", str(paths["qualtrics.xlsx"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["target"]["column"], doc["target"]["kind"], doc["target"]["scale"]) == (
        "Q1", "nps", [0, 10])
    assert [a["column"] for a in doc["attributes"]] == ["Q2_1", "Q2_2", "Q2_3", "Q2_4"]
    assert [s["column"] for s in doc["segments"]] == ["Region"]
    assert main(["nps", str(paths["spss.sav"]), "--json"]) == 0
    out = capsys.readouterr().out
    n, nps = exports.nps_truth(truth)
    assert (json.loads(out)["respondents"], json.loads(out)["overall"]["value"]) == (
        n, pytest.approx(nps, abs=1e-9))
    assert not PERSONAL.search(out + json.dumps(doc))


def test_an_attribute_derived_from_the_target_is_refused(tmp_path):
    rng = np.random.default_rng(3)
    nps = rng.integers(0, 11, 120)
    frame = pd.DataFrame({"Recommend (0-10)": nps, "Speed": rng.integers(1, 6, 120),
                          "Group": np.where(nps >= 9, 3, np.where(nps >= 7, 2, 1)),
                          "Copy": nps})
    path = tmp_path / "leak.csv"
    frame.to_csv(path, index=False)
    inferred = infer_schema(pd.read_csv(path).astype(str))
    assert [a.column for a in inferred.attributes] == ["Speed"]
    assert "'Group' is a function of the target" in inferred.description
    for column in ("Group", "Copy"):
        schema = schema_from_mapping(target="Recommend (0-10)", scale="0-10",
                                     attributes=["Speed", column],
                                     attribute_scales={column: "0-10"})
        with pytest.raises(SchemaError, match=rf"^leak\.csv: attribute '{column}' is a function "
                           r"of the target 'Recommend \(0-10\)', so a model would be given"):
            load_survey(path, schema=schema)


def test_plain_survey_roles_free_text_binary_and_ids():
    rng = np.random.default_rng(5)
    n = 200
    frame = pd.DataFrame({
        "idno": rng.permutation(np.arange(10_000, 10_000 + n)).astype(str),
        "female": rng.integers(0, 2, n).astype(str),
        "How likely are you to recommend us?": rng.integers(0, 11, n).astype(str),
        "Value for money": rng.integers(1, 6, n).astype(str),
        "Staff": rng.integers(1, 6, n).astype(str),
        "Why did you give this score?": rng.choice(["Price", "Staff", "Queue"], n),
        "Remarks": [f"the {w} was {v} today" for w, v in zip(
            rng.choice(["queue", "branch", "app"], n), rng.choice(["ok", "bad"], n),
            strict=True)],
        "Country": rng.choice(["BE", "NL"], n),
    })
    schema = infer_schema(frame)
    assert schema.target.column == "How likely are you to recommend us?"
    assert [a.column for a in schema.attributes] == ["Value for money", "Staff"]
    assert schema.respondent_id.column == "idno"
    assert [s.column for s in schema.segments] == ["female", "Country"]
    unnamed = frame.rename(columns={"idno": "number"})
    assert infer_schema(unnamed).respondent_id.column == "number"  # unique integers
    # "Customer" names an identifier alone, not inside a CX attribute's name
    named = frame.rename(columns={"idno": "Customer no.", "Staff": "Customer support"})
    named["Customer service (phone)"] = rng.integers(1, 6, n).astype(str)
    schema = infer_schema(named)
    assert [a.column for a in schema.attributes] == [
        "Value for money", "Customer support", "Customer service (phone)"]
    assert schema.respondent_id.column == "Customer no."
    typeform = frame.drop(columns="idno").assign(
        **{"#": [f"{i:x}q7t{i}" for i in range(n)]})  # Typeform's response token
    assert infer_schema(typeform).respondent_id.column == "#"


def test_stata_and_damaged_statistics_files(tmp_path):
    import pyreadstat

    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"respid": np.arange(1, 61, dtype=float),
                          "recommend": rng.integers(0, 11, 60).astype(float),
                          "speed": rng.integers(1, 6, 60).astype(float),
                          "price": rng.integers(1, 6, 60).astype(float)})
    path = tmp_path / "survey.dta"
    pyreadstat.write_dta(frame, str(path), column_labels={
        "recommend": "How likely are you to recommend us?", "speed": "Speed of service",
        "price": "Prices"})
    survey = load_survey(path)
    assert (survey.schema.target.column, survey.schema.target.kind) == ("recommend", "nps")
    assert [a.label for a in survey.schema.attributes] == ["Speed of service", "Prices"]
    assert survey.schema.respondent_id.column == "respid"
    assert survey.quality.respondents == 60
    broken = tmp_path / "broken.sav"
    broken.write_bytes(b"$FL2" + bytes(range(256)) * 4)
    with pytest.raises(SurveyFileError, match=r"^broken\.sav: not a readable SPSS data file"):
        load_survey(broken)
    renamed = tmp_path / "renamed.sav"
    renamed.write_bytes(b"%PDF-1.4 not a survey")
    with pytest.raises(SurveyFileError, match=r"^renamed\.sav: the file is a PDF document"):
        load_survey(renamed)


def test_choice_vocabulary_orders_scales_and_makes_gaps():
    from cx_app.survey.choices import score_choices

    seven = ["Strongly disagree", "Disagree", "Somewhat disagree",
             "Neither agree nor disagree", "Somewhat agree", "Agree", "Strongly agree"]
    found = score_choices(pd.Series([*seven, "Don’t know", "Prefer not to say", None]))
    assert found.scale == "agreement_7"
    assert found.codes.tolist() == ["1", "2", "3", "4", "5", "6", "7", None, None, None]
    assert found.gaps == 2
    five = score_choices(pd.Series(["Strongly agree", "Agree", "Disagree"]))
    assert (five.scale, five.codes.tolist()) == ("agreement_5", ["5", "4", "2"])
    assert score_choices(pd.Series(["Brand A", "Very satisfied"])) is None


def test_a_statistics_file_beyond_the_limits_is_refused_before_its_data(files):
    from cx_app.survey.limits import ImportLimits

    _, paths = files
    with pytest.raises(SurveyFileError, match=r"^spss\.sav: 240 rows, more than the limit of 100 "
                       r"\(CX_APP_MAX_ROWS\); refused$"):
        load_survey(paths["spss.sav"], limits=ImportLimits(max_rows=100))


def test_a_file_with_personal_data_is_never_kept_in_the_workspace(files, tmp_path):
    from cx_app.workspace.analyses import AnalysisStore
    from cx_app.workspace.programs import Workspace

    _, paths = files
    path = paths["qualtrics.csv"]
    survey = load_survey(path)
    assert survey.source.held_personal_data
    url = f"sqlite:///{tmp_path / 'workspace.db'}"
    workspace = Workspace.open(url)
    try:
        store = AnalysisStore(workspace)
        name = store.program_for(survey, path.read_bytes(), keep_files=True)
        assert store.kept_file(name, survey.source.sha256) is None
        assert not store.reopen(name).keep_files
    finally:
        workspace.close()
    stored = (tmp_path / "workspace.db").read_bytes()
    assert b"@example.com" not in stored and b"10.0.0.7" not in stored


def test_legacy_qualtrics_and_surveymonkey_csv(files, tmp_path):
    truth, _ = files
    n, nps = exports.nps_truth(truth)
    legacy = [["V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "Q1", "Q2_1", "Q2_2"],
              ["ResponseID", "ResponseSet", "Name", "ExternalDataReference", "EmailAddress",
               "IPAddress", "Status", "StartDate", "EndDate", "Finished", exports.RECOMMEND,
               f"{exports.MATRIX}-{exports.ITEMS[0]}", f"{exports.MATRIX}-{exports.ITEMS[1]}"]]
    for i, r in truth.iterrows():
        items = ["" if v in (0, 6) else str(int(v)) for v in (r["Q2_1"], r["Q2_2"])]
        legacy.append([r["ResponseId"], "Default Response Set", f"Last{i}, First{i}", "",
                       r["Email"], r["IP"], "0", "2026-01-05 10:00:00", "2026-01-05 10:05:00",
                       str(r["Finished"]), "" if np.isnan(r["Q1"]) else str(int(r["Q1"])),
                       *items])
    path = tmp_path / "legacy.csv"
    pd.DataFrame(legacy).to_csv(path, index=False, header=False)
    survey = load_survey(path)
    assert (survey.schema.target.column, survey.schema.is_nps) == ("Q1", True)
    assert [a.column for a in survey.schema.attributes] == ["Q2_1", "Q2_2"]
    assert survey.schema.respondent_id.column == "ResponseID"
    assert survey.schema.segments == ()
    assert nps_summary(survey.scores).value == pytest.approx(nps, abs=1e-9)
    assert not PERSONAL.search(survey.frame.astype(str).to_csv() + survey.schema.to_yaml())
    monkey = tmp_path / "monkey.csv"
    pd.read_excel(exports.surveymonkey_xlsx(truth, tmp_path / "m.xlsx"), header=None,
                  dtype=str, engine="openpyxl").to_csv(monkey, index=False, header=False)
    survey = load_survey(monkey)
    assert (survey.quality.respondents, survey.schema.is_nps) == (n, True)
    assert len(survey.schema.attributes) == len(exports.ITEMS)


def test_surveymonkey_condensed_one_header_row(files, tmp_path):
    truth, _ = files
    n, nps = exports.nps_truth(truth)
    rows = pd.read_excel(exports.surveymonkey_xlsx(truth, tmp_path / "m.xlsx"), header=None,
                         dtype=str, engine="openpyxl")
    header = [*rows.iloc[0, :10].tolist(),
              *[f"{exports.MATRIX} - {item}" for item in exports.ITEMS],
              "Is there anything else you would like to tell us?", "Region"]
    condensed = pd.concat([pd.DataFrame([header]), rows.iloc[2:]], ignore_index=True)
    path = tmp_path / "condensed.csv"
    condensed.to_csv(path, index=False, header=False)
    survey = load_survey(path)
    assert (survey.quality.respondents, survey.schema.is_nps) == (n, True)
    assert nps_summary(survey.scores).value == pytest.approx(nps, abs=1e-9)
    assert [a.column for a in survey.schema.attributes] == header[10:14]
    assert [s.column for s in survey.schema.segments] == ["Region"]
    assert survey.schema.respondent_id.column == "Respondent ID"
    assert {c for c, _ in survey.source.left_out} == {
        "Collector ID", "Start Date", "End Date", "IP Address", "Email Address", "First Name",
        "Last Name", "Custom Data 1"}


def test_matrix_items_are_cut_only_from_question_texts_and_only_where_they_stay_distinct():
    """A plain file's headers are the analyst's names ("Network - voice" stays); two matrices
    asking about the same items keep the question in the labels that would read alike."""
    rng = np.random.default_rng(0)
    plain = pd.DataFrame({"NPS": rng.integers(0, 11, 200), "Network - voice": rng.integers(1, 6, 200),
                          "Network - data": rng.integers(1, 6, 200)})
    schema = infer_schema(plain)
    assert [(a.column, a.label) for a in schema.attributes] == [
        ("Network - voice", None), ("Network - data", None)]
    assert "items labelled" not in schema.description
    two = pd.DataFrame({"Q1": rng.integers(0, 11, 200),
                        **{f"Q{q}_{k}": rng.integers(1, 6, 200) for q in (2, 3) for k in (1, 2, 3)}})
    texts = {"Q1": "How likely are you to recommend us to a friend?"}
    for q, question in ((2, "How satisfied are you with"), (3, "How important is")):
        texts.update({f"Q{q}_1": f"{question} - Fees", f"Q{q}_2": f"{question} - Staff",
                      f"Q{q}_3": f"{question} - App" if q == 2 else f"{question} - Branches"})
    two.attrs["labels"] = texts
    labels = {a.column: a.label for a in infer_schema(two).attributes}
    assert labels == {"Q2_1": "How satisfied are you with - Fees",
                      "Q2_2": "How satisfied are you with - Staff", "Q2_3": "App",
                      "Q3_1": "How important is - Fees", "Q3_2": "How important is - Staff",
                      "Q3_3": "Branches"}


def test_an_spss_file_names_its_cases_and_its_missing_codes(tmp_path):
    # SPSS numbers cases from 1 and the file has no header row: case 3 is "row 3" in every
    # message (it was row 4); a declared-missing code is named with its value label.
    import pyreadstat

    frame = pd.DataFrame({"q1": [7.0, 5.0, 99.0, 1.0, 6.0, 2.0, 4.0, 3.0],
                          "speed": [5.0, 4.0, 3.0, 1.0, 5.0, 2.0, 3.0, 2.0],
                          "price": [4.0, 4.0, 2.0, 2.0, 5.0, 1.0, 3.0, 3.0]})
    path = tmp_path / "csat.sav"
    pyreadstat.write_sav(frame, str(path), column_labels=[
        "Overall, how satisfied are you?", "Speed of service", "Prices"],
        variable_value_labels={"q1": {1.0: "Very dissatisfied", 7.0: "Very satisfied",
                                      99.0: "Prefer not to say"}},
        missing_ranges={"q1": [99.0]})
    survey = load_survey(path)
    assert survey.source.header_row == 0
    assert survey.source.rows_read == "variable names as headers; row N is case N"
    assert list(survey.frame.index) == [1, 2, 4, 5, 6, 7, 8]
    (excluded,) = survey.quality.excluded
    assert (excluded.row, excluded.column) == (3, "q1")
    assert ("column 'q1': 1 answer(s) coded 99 ('Prefer not to say'), declared missing or "
            "'not applicable', read as gaps, not scores") in survey.quality.notes


def test_an_spss_segment_is_named_by_its_value_labels(tmp_path):
    # Region 1/2/3 labelled North/South/East: the segment's values are the labels, with a
    # note; a code without a label stays the code; the scores stay numbers.
    import pyreadstat

    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame({"region": np.tile([1.0, 2.0, 3.0, 4.0], n // 4),
                          "recommend": rng.integers(0, 11, n).astype(float),
                          "speed": rng.integers(1, 6, n).astype(float),
                          "price": rng.integers(1, 6, n).astype(float)})
    path = tmp_path / "regions.sav"
    pyreadstat.write_sav(frame, str(path), column_labels=[
        "Region", "How likely are you to recommend us?", "Speed of service", "Prices"],
        variable_value_labels={"region": {1.0: "North", 2.0: "South", 3.0: "East"},
                               "speed": {1.0: "Very poor", 5.0: "Very good"}})
    survey = load_survey(path)
    (segment,) = survey.schema.segments
    assert segment.column == "region"
    values = survey.frame[segment.name]
    assert values.tolist() == ["North", "South", "East", "4"] * (n // 4)
    assert survey.frame["speed"].tolist() == frame["speed"].tolist()
    assert ("segment column(s) 'region': codes read as their value labels (as the file's own "
            "tool shows them)") in survey.quality.notes


def test_an_spss_category_coded_as_numbers_is_a_segment_not_a_score(tmp_path):
    # "Which store did you visit?" coded 1–5 (Athens … Volos) was read as a 1–5 attribute and
    # trained on as a driver; a rating labelled on every point (Poor … Excellent) stays a score.
    import pyreadstat

    rng = np.random.default_rng(4)
    n = 120
    frame = pd.DataFrame({"q7": rng.integers(1, 6, n).astype(float),
                          "q1": rng.integers(0, 11, n).astype(float),
                          "q2": rng.integers(1, 6, n).astype(float),
                          "q3": rng.integers(1, 6, n).astype(float),
                          "q9": rng.integers(1, 5, n).astype(float)})
    stores = {1.0: "Athens", 2.0: "Patras", 3.0: "Piraeus", 4.0: "Larissa", 5.0: "Volos"}
    path = tmp_path / "stores.sav"
    pyreadstat.write_sav(frame, str(path), column_labels=[
        "Which store did you visit?", "How likely are you to recommend us to a friend?",
        "Speed of service", "Prices", "Your age"], variable_value_labels={
        "q7": stores, "q2": {1.0: "Poor", 2.0: "Fair", 3.0: "Good", 4.0: "Very good",
                             5.0: "Excellent"},
        "q9": {1.0: "18-24", 2.0: "25-34", 3.0: "35-54", 4.0: "55+"}})
    survey = load_survey(path)
    assert [a.column for a in survey.schema.attributes] == ["q2", "q3"]
    segment, age = survey.schema.segments
    assert (segment.column, age.column) == ("q7", "q9")
    assert set(survey.frame[age.name]) == {"18-24", "25-34", "35-54", "55+"}
    assert survey.frame[segment.name].tolist() == [stores[v] for v in frame["q7"]]
    assert ("column 'q7': codes read as the categories their value labels name (Athens, "
            "Patras, Piraeus, Larissa, …), not as scores") in survey.quality.notes


def test_a_qualtrics_export_saved_as_spss_drops_its_own_columns(tmp_path):
    # Qualtrics' SPSS export names its variables as its CSV fields (Duration__in_seconds_ for
    # "Duration (in seconds)"): they and Q1_NPS_GROUP (the target's own group, labelled
    # Detractor/Passive/Promoter) were segments; they are left out, as from its CSV.
    import pyreadstat

    rng = np.random.default_rng(8)
    n = 90
    q1 = rng.integers(0, 11, n).astype(float)
    frame = pd.DataFrame({
        "StartDate": ["2026-10-01 09:00:00"] * n, "Status": np.zeros(n),
        "Progress": np.full(n, 100.0), "Duration__in_seconds_": rng.integers(60, 900, n) * 1.0,
        "Finished": np.ones(n), "ResponseId": [f"R_{i:05d}x" for i in range(n)],
        "UserLanguage": ["EN"] * n, "Q1": q1,
        "Q1_NPS_GROUP": np.where(q1 >= 9, 3.0, np.where(q1 >= 7, 2.0, 1.0)),
        "Q2_1": rng.integers(1, 6, n) * 1.0, "Q2_2": rng.integers(1, 6, n) * 1.0})
    path = tmp_path / "qualtrics.sav"
    pyreadstat.write_sav(frame, str(path), column_labels={
        "Q1": "How likely are you to recommend us to a friend or colleague?",
        "Q2_1": "How satisfied were you with the following? - Check-in",
        "Q2_2": "How satisfied were you with the following? - Room"}, variable_value_labels={
        "Q1_NPS_GROUP": {1.0: "Detractor", 2.0: "Passive", 3.0: "Promoter"},
        "Finished": {0.0: "False", 1.0: "True"}, "Status": {0.0: "IP Address", 1.0: "Preview"}})
    survey = load_survey(path)
    assert survey.schema.target.column == "Q1"
    assert [a.label for a in survey.schema.attributes] == ["Check-in", "Room"]
    assert survey.schema.segments == () and survey.schema.respondent_id.column == "ResponseId"
    assert dict(survey.source.left_out) == {
        **{c: "Qualtrics metadata, not a survey answer" for c in (
            "StartDate", "Status", "Progress", "Duration__in_seconds_", "Finished",
            "UserLanguage")},
        "Q1_NPS_GROUP": "derived from the recommend answer by the platform (its NPS group)"}
    assert survey.quality.respondents == n
