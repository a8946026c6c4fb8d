"""The typed-columns stage of the import: a laid-out grid's header row and the cells below it.

Answers become codes here: choice texts scores, "not an answer" texts and an SPSS/Stata file's
declared missing codes gaps (:mod:`cx_app.survey.choices`), each conversion a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from cx_app.safe_text import control_characters, describe_removed, plain_text
from cx_app.survey.cells import ColumnCells, blank_mask, cell_text
from cx_app.survey.choices import is_not_an_answer, names_categories, score_choices
from cx_app.survey.layout import HEADER_SCAN_ROWS, guess_header_row, present
from cx_app.survey.reading import TEXT, Grid, StatVariable
from cx_app.survey.schema import ColumnSpec, SurveySchema, normalise_header, unique_names
from cx_app.survey.xml_safety import column_letters


class Table(BaseModel):
    """The cells below a header row (index: the file's rows; blank rows dropped, counted)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    frame: pd.DataFrame
    blank: pd.DataFrame
    errors: dict[str, np.ndarray]
    typed: bool
    blank_rows: int
    header: int
    header_cells: tuple[str | None, ...]
    notes: tuple[str, ...] = ()
    value_labels: dict[str, dict[str, str]] = {}
    """An SPSS/Stata file's value labels by column header (code → label)."""

    def column(self, j: int, *, labelled: bool = False) -> ColumnCells:
        """Column ``j``'s cells; ``labelled``: a code with a value label read as its label (a
        segment's "1" as "North"), as the file's own tool shows it."""
        header = self.frame.columns[j]
        texts = self.frame.iloc[:, j]
        labels = self.value_labels.get(header) if labelled else None
        if labels:
            texts = texts.map(lambda v: labels.get(v, v) if isinstance(v, str) else v,
                              na_action="ignore").astype(texts.dtype)
        return ColumnCells(texts, self.blank.iloc[:, j].to_numpy(),
                           self.errors.get(header, np.zeros(len(self.frame), dtype=bool)),
                           self.typed)

    def positions(self, schema: SurveySchema) -> dict[str, int]:
        """The column position of each of the schema's columns found in the header."""
        return match(schema.columns(), header_texts(self.header_cells))

    def header_notes(self, found: dict[str, int]) -> list[str]:
        """A note for each used column whose header appears more than once, and for each
        header that held control characters."""
        texts = header_texts(self.header_cells)
        notes = []
        for position in sorted(found.values()):
            same = [j for j, t in enumerate(texts) if t == texts[position]]
            if len(same) > 1 and same[0] == position:
                notes.append(f"header {plain_text(cell_text(self.header_cells[position], self.typed))!r} "
                             f"appears in columns {', '.join(column_letters(j + 1) for j in same)}"
                             f"; column {column_letters(position + 1)} is used")
        for j, cell in enumerate(self.header_cells):
            found_chars = control_characters(cell) if isinstance(cell, str) else None
            if found_chars:
                notes.append(f"column {column_letters(j + 1)}: its header held "
                             f"{describe_removed(found_chars)}, removed (read as "
                             f"{plain_text(cell_text(cell, self.typed))!r})")
        return notes


def header_texts(row: Sequence[Any]) -> list[str]:
    return [normalise_header(c) if present(c) else "" for c in row]


def match(specs: Sequence[ColumnSpec], headers: list[str]) -> dict[str, int]:
    """Column position of each spec (by header, then aliases, then name), first match wins;
    a header is claimed by one spec only."""
    positions: dict[str, list[int]] = {}
    for j, h in enumerate(headers):
        if h:
            positions.setdefault(h, []).append(j)
    found: dict[str, int] = {}
    claimed: set[int] = set()
    for spec in specs:
        for candidate in spec.candidates:
            free = [j for j in positions.get(candidate, ()) if j not in claimed]
            if free:
                found[spec.name] = free[0]
                claimed.add(free[0])
                break
    return found


def find_header(grid: Grid, schema: SurveySchema) -> tuple[int, dict[str, int]]:
    """(index of the header row, matched positions): the first rows' best match of the schema."""
    best_row, best = 0, {}
    for i, row in enumerate(grid.head(HEADER_SCAN_ROWS)):
        found = match(schema.columns(), header_texts(row))
        if len(found) > len(best):
            best_row, best = i, found
    return best_row, best


def read_columns(grid: Grid, schema: SurveySchema | None) -> Table:
    """The typed-columns stage: the :class:`Table` below the header row."""
    header = guess_header_row(grid) if schema is None else find_header(grid, schema)[0]
    width = grid.width(header)
    body = grid.cells.iloc[header + 1:, :width]
    first = grid.head(header + 1)[header] if len(grid.cells) > header else []
    first = first + [None] * (width - len(first))
    # a header of control characters only is named by its letter, like an empty one
    headers = unique_names([(plain_text(cell_text(first[j], grid.typed)) if present(first[j])
                             else "") or f"Column {column_letters(j + 1)}"
                            for j in range(width)], key=str)
    frame = body.reindex(columns=range(width))
    frame.columns = headers
    start = header + 2 + grid.row_offset  # the file's row number (header rows folded: later)
    frame.index = pd.RangeIndex(start, start + len(frame), name="row")
    frame.attrs.update(header_row=start - 1, sheet=grid.sheet)  # for infer_schema's sentences
    if grid.labels is not None:  # question texts: infer_schema gives them to the attributes
        frame.attrs["labels"] = {h: label for h, label in zip(headers, grid.labels,
                                                                  strict=False) if label}
    notes, categories = _answer_codes(frame, grid.variables)
    blank = pd.DataFrame({c: blank_mask(frame.iloc[:, j]) for j, c in enumerate(headers)},
                         index=frame.index)
    errors = {}
    for j, found in grid.errors.items():
        rows = [row - header - 1 for row in found if row > header]
        if j < width and rows:
            errors[headers[j]] = np.isin(np.arange(len(frame)), rows)
    keep = ~blank.all(axis=1).to_numpy() if width else np.zeros(len(frame), dtype=bool)
    dropped = int((~keep).sum())
    if dropped:
        frame, blank = frame[keep], blank[keep]
        errors = {c: e[keep] for c, e in errors.items()}
    labels = {h: dict(v.value_labels) for h, v in zip(headers, grid.variables or (),
                                                       strict=False)
              if v.value_labels and v.name not in categories}
    return Table(frame=frame, blank=blank, errors=errors, typed=grid.typed, blank_rows=dropped,
                 header=header, header_cells=tuple(first), notes=tuple(notes),
                 value_labels=labels)


def _answer_codes(frame: pd.DataFrame, variables: tuple[StatVariable, ...] | None,
                  ) -> tuple[list[str], set[str]]:
    """Answers as codes, in place (module docstring); a note for each column changed, and the
    variables whose codes were read as the categories their value labels name."""
    notes, categories = [], set()
    for j, variable in enumerate(variables or ()):
        gap_codes = {code for code, text in variable.value_labels.items()
                     if is_not_an_answer(text)}
        column = frame.iloc[:, j]
        numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        gap = np.array(column.isin(list(gap_codes)).to_numpy(dtype=bool, na_value=False))
        for lo, hi in variable.missing:
            try:
                gap = gap | ((numbers >= float(lo)) & (numbers <= float(hi)))
            except ValueError:
                gap = gap | column.isin([lo]).to_numpy(dtype=bool, na_value=False)
        if gap.any():
            frame.iloc[gap, j] = pd.NA
            labels = variable.value_labels
            shown = [f"{code} ({labels[code]!r})" if code in labels else code
                     for code in sorted({*gap_codes, *(lo if lo == hi else f"{lo}–{hi}"
                                                       for lo, hi in variable.missing)})]
            notes.append(f"column {variable.name!r}: {int(gap.sum()):,} answer(s) coded "
                         f"{', '.join(shown)}, declared missing or 'not applicable', read as "
                         "gaps, not scores")
        named = {c: t for c, t in variable.value_labels.items() if c not in gap_codes}
        present = set(frame.iloc[:, j].dropna())
        if present and present <= named.keys() and names_categories(named.values()):
            frame.isetitem(j, frame.iloc[:, j].map(named.get, na_action="ignore").astype(TEXT))
            categories.add(variable.name)
            shown = [named[c] for c in sorted(present, key=_code_order)]
            notes.append(f"column {variable.name!r}: codes read as the categories their value "
                         f"labels name ({', '.join(shown[:4])}{', …' if len(shown) > 4 else ''}"
                         "), not as scores")
    for j, name in enumerate(frame.columns):
        found = score_choices(frame.iloc[:, j])
        if found is not None:
            frame.isetitem(j, pd.Series(pd.array(found.codes.tolist(), dtype=TEXT),
                                        index=frame.index))
            notes.append(f"column {name!r}: answers given as choice text read as scores "
                         f"({found.scale.replace('_', ' ')})"
                         + (f"; {found.gaps:,} '{' / '.join(found.gap_texts)}' answer(s) read "
                            "as gaps" if found.gaps else ""))
    return notes, categories


def _code_order(code: str) -> tuple[float, str]:
    try:
        return float(code), code
    except ValueError:
        return float("inf"), code
