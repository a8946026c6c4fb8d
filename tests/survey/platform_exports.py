"""Survey-platform export fixtures built from the platforms' documented formats, with their truth.

- Qualtrics CSV, numeric values: row 1 field names, row 2 question texts (a matrix item as
  "question - item"), row 3 ``{"ImportId": ...}``; platform columns first (dates, status, IP,
  progress, duration, finished, response id, recipient names and e-mail, coordinates, channel,
  language), the NPS question ``Q1`` with Qualtrics' derived ``Q1_NPS_GROUP`` (1/2/3), a 1–5
  satisfaction matrix ``Q2_1``..``Q2_4``, an open question ``Q3_TEXT``, embedded data ``Region``.
- The same answers as an Excel export with choice text ("0 - Not at all likely" …, "Very
  dissatisfied" …, "Not applicable" on the matrix).
- SPSS ``.sav``: variable labels (question texts), value labels, 6 = "Not applicable" declared
  user-missing on the matrix.
- SurveyMonkey "expanded" Excel: row 1 question texts written once over a matrix's columns,
  row 2 sub-questions / "Response" / "Open-Ended Response"; answers as choice text.
- Google Forms CSV (the responses sheet downloaded): one header row, "Timestamp" and
  "Email Address" first, a grid's rows as "question [row]" answered with the column's text, a
  linear scale as its number; no response id.

Partial responses (Finished = 0) answer Q1 and nothing after it. The truth: :data:`ITEMS` are
the attributes on 1–5, ``Q1`` the NPS target, the response id the id.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

RECOMMEND = "How likely are you to recommend Acme Bank to a friend or colleague?"
MATRIX = "How satisfied are you with each of the following?"
ITEMS = ("Speed of service", "Friendliness of staff", "Fees and charges", "Mobile app")
SAT5 = ("Very dissatisfied", "Dissatisfied", "Neither satisfied nor dissatisfied", "Satisfied",
        "Very satisfied")
NA = "Not applicable"


def answers(n: int = 240, seed: int = 7) -> pd.DataFrame:
    """The respondents' answers: ``nps`` 0–10 (some blank), ``items`` 1–5 or 6 (n/a) or 0
    (not shown: partial response), the open answer, region, finished flag, personal data."""
    rng = np.random.default_rng(seed)
    items = rng.integers(1, 6, size=(n, len(ITEMS)))
    nps = np.clip(np.round(items.mean(axis=1) * 2 + rng.normal(0, 1.2, n)), 0, 10).astype(int)
    items[rng.random((n, len(ITEMS))) < 0.15] = 6  # not applicable
    frame = pd.DataFrame(items, columns=[f"Q2_{i + 1}" for i in range(len(ITEMS))])
    frame.insert(0, "Q1", nps.astype(float))
    frame.loc[rng.random(n) < 0.05, "Q1"] = np.nan  # skipped the recommend question
    finished = rng.random(n) > 0.1
    frame.loc[~finished, [f"Q2_{i + 1}" for i in range(len(ITEMS))]] = 0  # never shown
    frame["Finished"] = finished.astype(int)
    frame["Q3_TEXT"] = [f"Comment number {i}: the branch was {w}" if i % 3 else ""
                        for i, w in zip(range(n), rng.choice(["slow", "fine", "great"], n),
                                        strict=True)]
    frame["Region"] = rng.choice(["North", "South", "East"], n)
    frame["ResponseId"] = [f"R_{i:05d}abcXYZ" for i in range(n)]
    frame["Email"] = [f"person{i}@example.com" for i in range(n)]
    frame["IP"] = [f"10.{i // 250}.{i % 250}.7" for i in range(n)]
    return frame


def nps_truth(frame: pd.DataFrame) -> tuple[int, float]:
    """(respondents with a valid recommend answer, their NPS), by hand with pandas."""
    scores = frame["Q1"].dropna()
    return len(scores), 100.0 * ((scores >= 9).mean() - (scores <= 6).mean())


def _nps_group(q1: float) -> str:
    return "" if np.isnan(q1) else str(1 if q1 <= 6 else 2 if q1 <= 8 else 3)


def _qualtrics_table(frame: pd.DataFrame, choice_text: bool) -> list[list[str]]:
    fields = ["StartDate", "EndDate", "Status", "IPAddress", "Progress",
              "Duration (in seconds)", "Finished", "RecordedDate", "ResponseId",
              "RecipientLastName", "RecipientFirstName", "RecipientEmail",
              "ExternalReference", "LocationLatitude", "LocationLongitude",
              "DistributionChannel", "UserLanguage", "Q1", "Q1_NPS_GROUP",
              *[f"Q2_{i + 1}" for i in range(len(ITEMS))], "Q3_TEXT", "Region"]
    texts = ["Start Date", "End Date", "Response Type", "IP Address", "Progress",
             "Duration (in seconds)", "Finished", "Recorded Date", "Response ID",
             "Recipient Last Name", "Recipient First Name", "Recipient Email",
             "External Data Reference", "Location Latitude", "Location Longitude",
             "Distribution Channel", "User Language", RECOMMEND, f"{RECOMMEND} - Group",
             *[f"{MATRIX} - {item}" for item in ITEMS],
             "Is there anything else you would like to tell us?", "Region"]
    ids = [json.dumps({"ImportId": f}) for f in fields]
    rows = [fields, texts, ids]
    for i, r in frame.iterrows():
        q1 = "" if np.isnan(r["Q1"]) else int(r["Q1"])
        if choice_text and q1 != "":
            q1 = {0: "0 - Not at all likely", 10: "10 - Extremely likely"}.get(q1, str(q1))
        items = []
        for k in range(len(ITEMS)):
            code = int(r[f"Q2_{k + 1}"])
            items.append("" if code == 0 else (NA if code == 6 else SAT5[code - 1])
                         if choice_text else "" if code == 0 else str(code))
        rows.append([
            "2026-01-05 10:00:00", "2026-01-05 10:07:00", "IP Address", r["IP"],
            "100" if r["Finished"] else "40", str(300 + i), str(r["Finished"]),
            "2026-01-05 10:07:01", r["ResponseId"], f"Last{i}", f"First{i}", r["Email"],
            "", "51.5072", "-0.1276", "anonymous", "EN", str(q1),
            _nps_group(r["Q1"]) if not choice_text or q1 == "" else
            ["Detractor", "Passive", "Promoter"][int(_nps_group(r["Q1"])) - 1],
            *items, r["Q3_TEXT"], r["Region"]])
    return rows


def qualtrics_csv(frame: pd.DataFrame, path: Path) -> Path:
    """A Qualtrics CSV export with numeric values, without the n/a code (see the docs: a
    numeric CSV cannot say which code is "Not applicable"; the n/a cells are blank here)."""
    table = _qualtrics_table(frame.assign(**{f"Q2_{k + 1}": frame[f"Q2_{k + 1}"].where(
        frame[f"Q2_{k + 1}"] != 6, 0) for k in range(len(ITEMS))}), choice_text=False)
    pd.DataFrame(table).to_csv(path, index=False, header=False, encoding="utf-8-sig")
    return path


def qualtrics_xlsx(frame: pd.DataFrame, path: Path) -> Path:
    """A Qualtrics Excel export with choice text."""
    pd.DataFrame(_qualtrics_table(frame, choice_text=True)).to_excel(
        path, index=False, header=False)
    return path


def qualtrics_tsv(frame: pd.DataFrame, path: Path) -> Path:
    """A Qualtrics TSV export (UTF-16 with a byte-order mark, tab separated), choice text."""
    text = "\n".join("\t".join(row) for row in _qualtrics_table(frame, choice_text=True))
    path.write_bytes(text.encode("utf-16"))
    return path


def spss_sav(frame: pd.DataFrame, path: Path) -> Path:
    """An SPSS file: labels, value labels, 6 = "Not applicable" declared user-missing."""
    import pyreadstat

    data = frame[["ResponseId", "Q1", *[f"Q2_{k + 1}" for k in range(len(ITEMS))],
                  "Q3_TEXT", "Region", "Email"]].copy()
    for k in range(len(ITEMS)):
        data[f"Q2_{k + 1}"] = data[f"Q2_{k + 1}"].where(data[f"Q2_{k + 1}"] != 0).astype(float)
    labels = {"ResponseId": "Response ID", "Q1": RECOMMEND, "Q3_TEXT": "Anything else?",
              "Region": "Region", "Email": "Recipient Email",
              **{f"Q2_{k + 1}": f"{MATRIX} - {item}" for k, item in enumerate(ITEMS)}}
    values = {f"Q2_{k + 1}": {**{i + 1: t for i, t in enumerate(SAT5)}, 6: NA}
              for k in range(len(ITEMS))}
    values["Q1"] = {0: "Not at all likely", 10: "Extremely likely"}
    pyreadstat.write_sav(data, str(path), column_labels=labels, variable_value_labels=values,
                         missing_ranges={f"Q2_{k + 1}": [6] for k in range(len(ITEMS))})
    return path


def surveymonkey_xlsx(frame: pd.DataFrame, path: Path) -> Path:
    """A SurveyMonkey "expanded" Excel export (two header rows, choice text)."""
    top = ["Respondent ID", "Collector ID", "Start Date", "End Date", "IP Address",
           "Email Address", "First Name", "Last Name", "Custom Data 1", RECOMMEND, MATRIX,
           *[""] * (len(ITEMS) - 1), "Is there anything else you would like to tell us?",
           "Region"]
    sub = [""] * 9 + ["Response", *ITEMS, "Open-Ended Response", "Response"]
    rows = [top, sub]
    for i, r in frame.iterrows():
        q1 = "" if np.isnan(r["Q1"]) else int(r["Q1"])
        q1 = {0: "0 - Not at all likely", 10: "10 - Extremely likely"}.get(q1, str(q1))
        items = ["" if r[f"Q2_{k + 1}"] == 0 else NA if r[f"Q2_{k + 1}"] == 6
                 else SAT5[int(r[f"Q2_{k + 1}"]) - 1] for k in range(len(ITEMS))]
        rows.append([str(10_000_000 + i), "4242", "01/05/2026 10:00:00 AM",
                     "01/05/2026 10:07:00 AM", r["IP"], r["Email"], f"First{i}", f"Last{i}",
                     f"cust-{i}", q1, *items, r["Q3_TEXT"], r["Region"]])
    pd.DataFrame(rows).to_excel(path, index=False, header=False)
    return path


def google_forms_csv(frame: pd.DataFrame, path: Path) -> Path:
    """A Google Forms responses sheet downloaded as CSV."""
    top = ["Timestamp", "Email Address", RECOMMEND, *[f"{MATRIX} [{item}]" for item in ITEMS],
           "Is there anything else you would like to tell us?", "Region"]
    rows = [top]
    for i, r in frame.iterrows():
        q1 = "" if np.isnan(r["Q1"]) else str(int(r["Q1"]))
        items = ["" if r[f"Q2_{k + 1}"] == 0 else NA if r[f"Q2_{k + 1}"] == 6
                 else SAT5[int(r[f"Q2_{k + 1}"]) - 1] for k in range(len(ITEMS))]
        rows.append([f"2026/01/05 {1 + i % 12}:{i % 60:02d}:00 PM GMT", r["Email"], q1, *items,
                     r["Q3_TEXT"], r["Region"]])
    pd.DataFrame(rows).to_csv(path, index=False, header=False)
    return path


def qualtrics_csv_numbered_na(frame: pd.DataFrame, path: Path) -> Path:
    """A Qualtrics CSV export with numeric values where "Not applicable" is the number after
    the 1–5 matrix scale (6), as Qualtrics codes it by default."""
    pd.DataFrame(_qualtrics_table(frame, choice_text=False)).to_csv(
        path, index=False, header=False, encoding="utf-8-sig")
    return path
