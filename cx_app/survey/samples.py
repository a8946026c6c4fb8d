"""The bundled sample surveys: where they are, and how they are written.

``python sample_surveys/generate.py`` writes them from :mod:`cx_app.simulation.waves`
(re-exported here: further waves come from the same true model), byte-identical each time.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from openpyxl import Workbook
from openpyxl.styles import Font

from cx_app.atomic_files import write_bytes_atomic, write_text_atomic
from cx_app.errors import SurveyFileError
from cx_app.json_values import plain
from cx_app.simulation.waves import (
    CSAT_ATTRIBUTES,
    NPS_COLUMN,
    TELECOM_ATTRIBUTES,
    TELECOM_COLUMNS,
    TELECOM_TRUTH,
    TelecomTruth,
    simulate_retail_csat,
    simulate_telecom_waves,
    wave_label,
)

__all__ = [
    "CSAT_ATTRIBUTES", "NPS_COLUMN", "SAMPLE_DIR", "SAMPLE_FILES", "SAMPLE_SEED",
    "TELECOM_ATTRIBUTES", "TELECOM_COLUMNS", "TELECOM_TRUTH", "TelecomTruth", "sample_path",
    "simulate_retail_csat", "simulate_telecom_waves", "wave_label", "write_sample_files",
    "write_workbook",
]

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_surveys"
"""The sample folder of a source checkout (``<repo>/sample_surveys``)."""

SAMPLE_SEED = 2021
"""The seed of every bundled sample."""

SAMPLE_FILES: dict[str, str] = {
    "telecom_nps": "telecom_nps.xlsx",
    "telecom_nps_wave7_unlabeled": "telecom_nps_wave7_unlabeled.xlsx",
    "telecom_nps_wave7_labeled": "telecom_nps_wave7_labeled.xlsx",
    "retail_csat": "retail_csat.csv",
}
"""Short name → file name of each bundled sample."""

RESPONSES_SHEET = "Responses"
TRUE_WEIGHTS_SHEET = "True weights"
TRUE_PARAMETERS_SHEET = "True parameters"
_FIXED_TIME = dt.datetime(2021, 8, 1, 9, 0, 0)


def sample_path(name: str) -> Path:
    """The path of a bundled sample, by short name (``"telecom_nps"``) or file name.

    >>> sample_path("telecom_nps").name
    'telecom_nps.xlsx'
    """
    file_name = SAMPLE_FILES.get(name, name)
    if file_name not in SAMPLE_FILES.values():
        raise SurveyFileError(
            f"no bundled sample called {name!r}; choose one of {sorted(SAMPLE_FILES)}"
        )
    path = SAMPLE_DIR / file_name
    if not path.is_file():
        raise SurveyFileError(
            f"the sample file {path} is missing: run 'python sample_surveys/generate.py' in a "
            "source checkout to write it"
        )
    return path


def _cell(value: object) -> object:
    if isinstance(value, pd.Timestamp):
        return value.date()
    return plain(value)  # numpy scalars → Python


def _normalise_xlsx(data: bytes) -> bytes:
    """Fix the document dates and zip entry times: the same content gives the same bytes."""
    stamp = _FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            content = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                text = content.decode("utf-8")
                text = re.sub(r"(<dcterms:(?:created|modified)[^>]*>)[^<]*(<)", rf"\g<1>{stamp}\2",
                              text)
                content = text.encode("utf-8")
            entry = zipfile.ZipInfo(info.filename, date_time=_FIXED_TIME.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o600 << 16
            dst.writestr(entry, content)
    return out.getvalue()


def write_workbook(sheets: Mapping[str, pd.DataFrame], path: str | Path) -> Path:
    """Write data frames as the sheets of a byte-for-byte reproducible .xlsx file."""
    path = Path(path)
    book = Workbook()
    book.remove(book.active)
    book.properties.creator = "cx-app sample generator"
    book.properties.created = _FIXED_TIME
    bold = Font(bold=True)
    for title, frame in sheets.items():
        sheet = book.create_sheet(title)
        sheet.append([str(c) for c in frame.columns])
        for cell in sheet[1]:
            cell.font = bold
        for row in frame.itertuples(index=False):
            sheet.append([_cell(v) for v in row])
        for index, column in enumerate(frame.columns):
            if pd.api.types.is_datetime64_any_dtype(frame[column]):
                for (cell,) in sheet.iter_rows(min_row=2, min_col=index + 1, max_col=index + 1):
                    cell.number_format = "yyyy-mm-dd"
            letter = sheet.cell(row=1, column=index + 1).column_letter
            sheet.column_dimensions[letter].width = max(10, len(str(column)) + 2)
        sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    book.save(buffer)
    write_bytes_atomic(path, _normalise_xlsx(buffer.getvalue()))
    return path


def write_sample_files(directory: str | Path = SAMPLE_DIR, *, seed: int = SAMPLE_SEED) -> list[Path]:
    """Simulate and write every bundled sample into ``directory``; returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    waves = simulate_telecom_waves(range(1, 7), respondents_per_operator=417, seed=seed)
    sheets = {
        RESPONSES_SHEET: waves,
        TRUE_WEIGHTS_SHEET: TELECOM_TRUTH.weights_frame(),
        TRUE_PARAMETERS_SHEET: TELECOM_TRUTH.parameters_frame(),
    }
    written = [write_workbook(sheets, directory / SAMPLE_FILES["telecom_nps"])]
    wave7 = simulate_telecom_waves([7], respondents_per_operator=400, seed=seed)
    written.append(write_workbook({RESPONSES_SHEET: wave7},
                                  directory / SAMPLE_FILES["telecom_nps_wave7_labeled"]))
    written.append(write_workbook({RESPONSES_SHEET: wave7.drop(columns=NPS_COLUMN)},
                                  directory / SAMPLE_FILES["telecom_nps_wave7_unlabeled"]))
    csat_path = directory / SAMPLE_FILES["retail_csat"]
    csat = simulate_retail_csat(1500, seed=seed)
    write_text_atomic(csat_path, csat.to_csv(index=False, lineterminator="\n"))
    written.append(csat_path)
    return written
