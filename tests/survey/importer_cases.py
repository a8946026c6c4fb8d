"""The importer's reference cases: every fixture the importer reads, and how it is read.

Issue 26 replaces the importer's reading layer; before the switch, the outputs of the importer
as it was (respondents, exclusions with reasons and sheet rows, inferred schema, notes) were
saved in ``importer_reference/`` by ``make_importer_reference.py``. ``test_importer_reference.py`` loads every case
with the current importer and compares it with what was saved: same answers, or the test names
the first difference.

A case is a name, a file (bundled, in the hostile corpus, or generated here with a fixed seed)
and the keyword arguments of :func:`cx_app.survey.importing.load_survey`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cx_app.errors import CxAppError
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
SAMPLES = ROOT / "sample_surveys"
SCHEMAS = ROOT / "survey_schemas"
SAVED = Path(__file__).resolve().parent / "importer_reference"

SURVEY_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods", ".csv")


@dataclass(frozen=True)
class Case:
    """One importer call: ``file(folder)`` gives the path (generated files go to ``folder``)."""

    name: str
    file: Callable[[Path], Path]
    options: dict[str, Any] = field(default_factory=dict)
    schema_file: Path | None = None

    def load(self, folder: Path) -> dict:
        """The importer's outcome as plain JSON values (see :func:`outcome`)."""
        path = self.file(folder)
        options = dict(self.options)
        if self.schema_file is not None:
            options["schema"] = load_schema(self.schema_file)
        try:
            survey = load_survey(path, **options)
        except CxAppError as exc:
            return {"error": type(exc).__name__, "message": str(exc)}
        return outcome(survey)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def outcome(survey) -> dict:
    """What must not change: the respondents (columns, sheet rows, values, dtypes), the model
    base, absent attributes, the data-quality report and the schema used (inferred or given).
    The file's SHA-256 is left out: generated workbooks carry their creation time."""
    frame = survey.frame
    source = survey.source.to_dict()
    source.pop("sha256")
    return {
        "source": source,
        "schema_yaml": survey.schema.to_yaml(),
        "columns": [str(c) for c in frame.columns],
        "dtypes": [str(t) for t in frame.dtypes],
        "index": [_plain(i) for i in frame.index],
        "values": [[_plain(v) for v in row] for row in frame.itertuples(index=False)],
        "in_model": None if survey.in_model is None else [bool(b) for b in survey.in_model],
        "absent_attributes": list(survey.absent_attributes),
        "quality": json.loads(json.dumps(survey.quality.to_dict(), default=str)),
    }


def _bundled(folder_name: Path, name: str) -> Callable[[Path], Path]:
    return lambda _folder: folder_name / name


def _bank(kind: str) -> Callable[[Path], Path]:
    """The messy bank export (issue 12's fixture): title rows, a cover sheet, 99 = n/a, "N/A"
    and "Don't know" texts, signed scales, a weight column; as xlsx, its third wave lacking an
    attribute, and as a semicolon CSV in cp1252."""

    def make(folder: Path) -> Path:
        from cx_app.simulation.bank_export import simulate_bank_waves, write_bank_export

        waves = simulate_bank_waves(400, waves=3, seed=12)
        labels = list(waves)
        training = pd.concat([waves[labels[0]], waves[labels[1]]], ignore_index=True)
        if kind == "training":
            return write_bank_export(training, folder / "bank_tracker.xlsx")
        if kind == "wave3":
            return write_bank_export(waves[labels[2]], folder / "bank_wave3.xlsx")
        path = folder / "bank_tracker.csv"
        training.to_csv(path, sep=";", index=False, encoding="cp1252")
        return path

    return make


def cases() -> list[Case]:
    """Every reference case, in a fixed order."""
    out: list[Case] = []
    bad_schema = BAD / "schema.yaml"
    for path in sorted(BAD.iterdir()):
        if path.suffix not in SURVEY_SUFFIXES:
            continue
        out.append(Case(f"bad/{path.name}/schema", _bundled(BAD, path.name),
                        schema_file=bad_schema))
        out.append(Case(f"bad/{path.name}/inferred", _bundled(BAD, path.name)))
    telecom = SCHEMAS / "telecom_nps.yaml"
    out += [
        Case("sample/telecom_nps/schema", _bundled(SAMPLES, "telecom_nps.xlsx"),
             schema_file=telecom),
        Case("sample/telecom_nps/inferred", _bundled(SAMPLES, "telecom_nps.xlsx")),
        Case("sample/wave7_unlabeled/scoring",
             _bundled(SAMPLES, "telecom_nps_wave7_unlabeled.xlsx"),
             {"require_target": False, "scoring": True}, schema_file=telecom),
        Case("sample/wave7_labeled/scoring", _bundled(SAMPLES, "telecom_nps_wave7_labeled.xlsx"),
             {"require_target": False, "scoring": True}, schema_file=telecom),
        Case("sample/retail_csat/schema", _bundled(SAMPLES, "retail_csat.csv"),
             schema_file=SCHEMAS / "csat_5.yaml"),
        Case("sample/retail_csat/inferred", _bundled(SAMPLES, "retail_csat.csv")),
        Case("bank/training/inferred", _bank("training")),
        Case("bank/training/median", _bank("training"), {"missing_policy": "impute_median"}),
        Case("bank/training/exclude", _bank("training"), {"missing_policy": "exclude"}),
        Case("bank/csv/inferred", _bank("csv")),
        Case("bank/wave3/inferred", _bank("wave3")),
    ]
    return out


def saved_path(case: Case) -> Path:
    return SAVED / (case.name.replace("/", "__") + ".json.gz")
