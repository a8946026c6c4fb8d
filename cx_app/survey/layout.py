"""Platform exports (Qualtrics, SurveyMonkey, Google Forms, SPSS): one header row with labels.

The layout stage of the import: a platform's header rows folded into one column name plus a
label (the question text), personal data and the platform's own columns dropped, each with a
note and kept on :attr:`Grid.left_out` with its reason. The layouts recognised, and what is
dropped, are in ``docs/platform-exports.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pandas as pd

from cx_app.survey.cells import DATE_TEXT
from cx_app.survey.personal import personal_data
from cx_app.survey.reading import TEXT, Grid
from cx_app.survey.schema import unique_names

_QUALTRICS_FIELDS = {
    "startdate", "enddate", "status", "ipaddress", "progress", "duration (in seconds)",
    "finished", "recordeddate", "responseid", "recipientlastname", "recipientfirstname",
    "recipientemail", "externalreference", "locationlatitude", "locationlongitude",
    "distributionchannel", "userlanguage"}
_QUALTRICS_LEGACY = {"responseid", "responseset", "name", "externaldatareference",
                     "emailaddress", "ipaddress", "status", "startdate", "enddate", "finished"}
_QUALTRICS_METADATA = {
    "startdate", "enddate", "status", "progress", "duration (in seconds)", "finished",
    "recordeddate", "externalreference", "externaldatareference", "distributionchannel",
    "userlanguage", "responseset", "locationaccuracy"}
_SURVEYMONKEY_METADATA = {"collector id", "start date", "end date"}  # and "custom data ..."
_SURVEYMONKEY_SUBS = {"response", "open-ended response"}
_RESPONSE_IDS = {"responseid", "respondent id"}
_GOOGLE_METADATA = {"timestamp", "score"}  # "Score": a quiz's own total
GRID_ITEM = re.compile(r"(.*\S)\s*\[([^\[\]]+)\]")
"""A Google Forms grid column: "question [row]"."""
HEADER_SCAN_ROWS = 30
"""A header row is looked for among a file's first rows."""
_NUMBER_TEXT = re.compile(r"-?\d+(?:\.\d+)?")


def _fold(cell: str | None) -> str:
    return " ".join(str(cell).split()).casefold() if cell is not None else ""


def _qualtrics_own(folded: str) -> bool:
    """Whether a folded column name is one of Qualtrics' own columns (not an answer)."""
    return (folded in _QUALTRICS_METADATA or folded.startswith("q_")
            or folded.endswith("_nps_group"))


def _variable_field(name: str) -> str:
    """An SPSS/Stata variable name as the Qualtrics field it stands for: the variable
    ``Duration__in_seconds_`` is the field "Duration (in seconds)"."""
    folded = _fold(name)
    return "duration (in seconds)" if folded == "duration__in_seconds_" else folded


def _row(grid: Grid, i: int) -> list[str | None]:
    head = grid.head(i + 1)
    return head[i] if len(head) > i else []


def _qualtrics_rows(names: set[str], first: list[str | None], second: list[str | None],
                    third: list[str | None]) -> tuple[str, int] | None:
    """("qualtrics" or "qualtrics (legacy)", header rows) when the first rows (``names``: the
    first's folded) are a Qualtrics export's header, else None."""
    if len(names & _QUALTRICS_FIELDS) >= 4:
        ranks = [j for j, c in enumerate(first) if _fold(c) in ("finished", "progress",
                                                                  "status", "startdate")]
        texts = second and all(j < len(second) and second[j] is not None
                               and not re.fullmatch(r"[\d.\- :/]+", second[j]) for j in ranks)
        import_ids = import_id_row(third)
        rows = 1 + bool(texts) + bool(texts and import_ids)
        return "qualtrics", rows
    if len({_fold(c) for c in second} & _QUALTRICS_LEGACY) >= 4 and any(
            re.fullmatch(r"v\d+", _fold(c)) for c in first):
        return "qualtrics (legacy)", 2
    return None


def _headers(grid: Grid, platform: str, rows: int) -> tuple[list[str], list[str | None],
                                                             set[int], set[int]]:
    """(column names, labels, positions of platform columns, of the response id)."""
    width = grid.cells.shape[1]
    first, second = ((_row(grid, i) + [None] * width)[:width] for i in (0, 1))
    names: list[str] = []
    labels: list[str | None] = []
    platform_cols: set[int] = set()
    ids: set[int] = set()
    question = ""
    for j in range(width):
        top, sub = (first[j] or "").strip(), (second[j] or "").strip() if rows > 1 else ""
        label = None
        if platform.startswith("qualtrics"):
            if platform.endswith("(legacy)") and re.fullmatch(r"V\d+", top) and sub:
                top, sub = sub, ""
            folded, label = _fold(top), (sub if sub and sub != top else None)
            own = _qualtrics_own(folded)
        elif platform == "google forms":  # one header row; a grid's rows as "question [row]"
            folded = _fold(top)
            own, label = folded in _GOOGLE_METADATA, (top if GRID_ITEM.fullmatch(top) else None)
        else:  # SurveyMonkey: the question text is written over its first column
            question = top or question
            folded = _fold(top) if platform.endswith("(condensed)") or not sub else ""
            own = folded in _SURVEYMONKEY_METADATA or folded.startswith("custom data")
        if platform == "surveymonkey" and (sub or not top):
            names.append(question if _fold(sub) == "response" else f"{question} – {sub}")
            label = None if _fold(sub) == "response" else names[-1]  # a matrix item's text
        else:
            names.append(top or f"Column {j + 1}")
        labels.append(label)
        if own:
            platform_cols.add(j)
        if folded in _RESPONSE_IDS:
            ids.add(j)
    return unique_names(names), labels, platform_cols, ids


def _platform_of(grid: Grid) -> tuple[str, int]:
    if grid.variables is not None:
        return ("spss" if grid.labels is not None else "stata"), 1
    first, second, third = _row(grid, 0), _row(grid, 1), _row(grid, 2)
    names = {_fold(c) for c in first}
    found = _qualtrics_rows(names, first, second, third)
    if found:
        return found
    if "respondent id" in names and bool(names & {"collector id", "start date"}) and any(
            _fold(c) in _SURVEYMONKEY_SUBS for c in second):
        return "surveymonkey", 2
    if (_fold(first[0] if first else None) == "timestamp"
            and ("email address" in names
                 or any(GRID_ITEM.fullmatch((c or "").strip()) for c in first))):
        return "google forms", 1
    if "respondent id" in names and "collector id" in names:
        return "surveymonkey (condensed)", 1
    return "plain", 1


def guess_header_row(grid: Grid) -> int:
    """A plain file's header row (title rows may sit above it): the first row whose text
    cells fill at least half the table width."""
    head = grid.head(HEADER_SCAN_ROWS)
    texts = [sum(present(c) and not (grid.typed and (_NUMBER_TEXT.fullmatch(c)
                                                    or re.fullmatch(DATE_TEXT, c)))
                 for c in row) for row in head]
    width = max((sum(map(present, row)) for row in head), default=0)
    return next((i for i, n in enumerate(texts) if n >= 2 and n >= 0.5 * width), 0)


def present(cell: str | None) -> bool:
    """Whether a cell holds something (not empty, not only spaces)."""
    return cell is not None and bool(cell.strip())


def recognise_layout(grid: Grid) -> tuple[Grid, tuple[str, ...]]:
    """The layout stage (module docstring): the grid with one header row, and notes."""
    if grid.empty:
        return grid, ()
    platform, rows = _platform_of(grid)
    maker = platform  # who wrote the columns: Qualtrics for its own SPSS export
    notes: list[str] = []
    dropped: list[tuple[str, str]] = []  # (column, why)
    width = grid.cells.shape[1]
    platform_cols: set[int] = set()
    ids: set[int] = set()
    if platform == "plain":
        h = guess_header_row(grid)
        first = (_row(grid, h) + [None] * width)[:width]
        names = [str(c).strip() if c is not None and str(c).strip() else f"column {j + 1}"
                 for j, c in enumerate(first)]
        labels: list[str | None] = [None] * width
        top, body, shift = grid.cells.iloc[:h + 1], grid.cells.iloc[h + 1:], 0
    else:
        if platform in ("spss", "stata"):
            names = [v.name for v in grid.variables or ()]
            labels = list(grid.labels or [None] * len(names))
            body = grid.cells.iloc[1:]
            fields = [_variable_field(n) for n in names]
            if len(set(fields) & _QUALTRICS_FIELDS) >= 4:  # Qualtrics' own SPSS export
                maker = "qualtrics"
                platform_cols = {j for j, f in enumerate(fields) if _qualtrics_own(f)}
                ids = {j for j, f in enumerate(fields) if f in _RESPONSE_IDS}
                notes.append(f"read as a Qualtrics export saved as an {_PLATFORM_NAMES[platform]}"
                             " file: its own columns recognised")
        else:
            names, labels, platform_cols, ids = _headers(grid, platform, rows)
            body = grid.cells.iloc[rows:]
            notes.append(f"read as a {_PLATFORM_NAMES[platform]} export: "
                         + ("its own columns recognised" if rows == 1 else
                            f"{rows} header rows folded into one column name")
                         + (" plus the question text as its label"
                            if platform.startswith("qualtrics") and rows > 1 else ""))
        top, shift = None, rows - 1
    keep: list[int] = []
    for j in range(width):
        kind = personal_data(names[j], body.iloc[:_PERSONAL_SAMPLE, j])
        if kind is not None and j not in ids:
            dropped.append((names[j], f"personal data ({kind})"))
        elif j in platform_cols:
            reason = ("derived from the recommend answer by the platform (its NPS group)"
                      if _fold(names[j]).endswith("_nps_group")
                      else f"{_PLATFORM_NAMES[maker]} metadata, not a survey answer")
            dropped.append((names[j], reason))
        else:
            keep.append(j)
    if dropped:
        notes.append("columns left out at import: " + "; ".join(
            f"{column!r} ({reason})" for column, reason in dropped))
    if platform == "plain" and not dropped:
        return grid, ()
    if top is None:
        top = pd.DataFrame([names], dtype=object).astype(TEXT)
    cells = pd.DataFrame({k: pd.concat([top.iloc[:, j].reset_index(drop=True),
                                        body.iloc[:, j].reset_index(drop=True)],
                                       ignore_index=True) for k, j in enumerate(keep)})
    kept_labels = tuple(labels[j] for j in keep)
    widths = None if grid.widths is None else tuple(
        min(w, len(keep)) for w in (grid.widths[:len(top)] + grid.widths[len(top) + shift:]))
    out = replace(grid, cells=cells, widths=widths, row_offset=grid.row_offset + shift,
                  errors={keep.index(j): {r - shift: e for r, e in found.items() if r >= rows}
                          for j, found in grid.errors.items() if j in keep},
                  labels=kept_labels if any(kept_labels) else None,
                  variables=None if grid.variables is None else tuple(
                      grid.variables[j] for j in keep),
                  left_out=tuple(dropped))
    return out, tuple(notes)


_PERSONAL_SAMPLE = 5_000
_PLATFORM_NAMES = {"qualtrics": "Qualtrics", "qualtrics (legacy)": "Qualtrics (legacy)",
                   "surveymonkey": "SurveyMonkey",
                   "surveymonkey (condensed)": "SurveyMonkey (condensed)",
                   "google forms": "Google Forms", "spss": "SPSS", "stata": "Stata",
                   "plain": "plain"}


def import_id_row(cells: list[str | None]) -> bool:
    """Whether a row is Qualtrics' ImportId row (``{"ImportId":"QID1"}`` in each cell).

    >>> import_id_row(['{"ImportId":"startDate","timeZone":"America/Denver"}', '{"ImportId":"QID1"}'])
    True
    """
    found = 0
    for cell in cells:
        if cell:
            try:
                found += "ImportId" in json.loads(cell)
            except (ValueError, TypeError):
                return False
    return found > 0
