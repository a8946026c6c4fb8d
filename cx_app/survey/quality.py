"""The data-quality report of one import: what was read, what was used, what was left out and why.

The two bases (survey: ``respondents``, model: ``rows_used``) are in ``docs/bases-and-gaps.md``.
Every row read is either in the model base or listed in ``excluded`` with its first reason and
its ``scope``. Completely blank rows are not respondents: counted in ``blank_rows`` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice

import pandas as pd

OUT_OF_SCALE = "out-of-scale score"
NON_NUMERIC = "non-numeric text"
DECIMAL = "decimal where an integer scale is expected"
MISSING_TARGET = "missing target"
MISSING_ATTRIBUTE = "missing attribute score"
DUPLICATE_ID = "duplicate respondent id"
EXCEL_ERROR = "Excel error cell"
"""A formula error (``#N/A``, ...): never a blank, never imputed."""
NUL_BYTE = "NUL byte (binary data) in a cell"
"""A cell holding the character NUL (a damaged export or a binary fragment): the whole row is
out of the survey — its other cells cannot be trusted either."""
DATE_IN_SCORE = "date in a score column"

SURVEY = "survey"
MODEL = "model"

REASONS: tuple[str, ...] = (
    NUL_BYTE, DUPLICATE_ID, MISSING_TARGET, EXCEL_ERROR, DATE_IN_SCORE, NON_NUMERIC, DECIMAL,
    OUT_OF_SCALE, MISSING_ATTRIBUTE,
)
"""Every exclusion reason, in the order a report lists them."""


@dataclass(frozen=True)
class ExcludedRow:
    """One respondent left out: sheet row (as Excel shows it), column header, reason, value."""

    row: int
    column: str
    reason: str
    value: str
    scope: str = MODEL
    """``"survey"``: out of both bases; ``"model"``: in the NPS, not used to train models."""


def reasons_text(counts: dict[str, int]) -> str:
    return "; ".join(f"{reason}: {n:,}" for reason, n in counts.items())


def bases_rows(rows_read: int, respondents: int, rows_used: int,
               out_of_survey: dict[str, int], out_of_models: dict[str, int],
               gaps: dict[str, int] | None = None,
               missing_policy: str | None = None) -> list[tuple[str, int, str]]:
    """The two bases as (base, respondents, why it differs from the line above) rows."""
    filled = sum((gaps or {}).values())
    models_note = reasons_text(out_of_models) or "every respondent"
    if filled and missing_policy in ("impute_indicator", "impute_median"):
        how = ("median; the support vector machine and ordinal logistic regression also add a "
               "'was missing' indicator"
               if missing_policy == "impute_indicator" else "median")
        models_note += (f"; {filled:,} unanswered attribute score(s) kept and filled inside "
                        f"each model from its training data ({how})")
    return [
        ("Rows read", rows_read, "respondent rows in the file (blank rows not counted)"),
        ("Survey base: net score, shares, segments, waves", respondents,
         reasons_text(out_of_survey) or "every row read has a valid answer"),
        ("Model base: training and evaluation", rows_used, models_note),
    ]


@dataclass(frozen=True)
class DataQualityReport:
    """Rows read, the two bases, exclusions (with reason and scope), attribute gaps, notes."""

    rows_read: int
    rows_used: int
    """The model base."""
    excluded: tuple[ExcludedRow, ...] = ()
    gaps: dict[str, int] = field(default_factory=dict)
    """Unanswered attribute scores per attribute in the model base."""
    notes: tuple[str, ...] = ()
    blank_rows: int = 0

    def __post_init__(self) -> None:
        if self.rows_used + len(self.excluded) != self.rows_read:
            raise ValueError(
                f"report does not add up: {self.rows_used} used + {len(self.excluded)} excluded "
                f"!= {self.rows_read} read"
            )

    @property
    def rows_excluded(self) -> int:
        return len(self.excluded)

    @property
    def respondents(self) -> int:
        """The survey base: rows read minus those out of the survey."""
        return self.rows_read - sum(e.scope == SURVEY for e in self.excluded)

    def counts_by_reason(self, scope: str | None = None) -> dict[str, int]:
        """Excluded rows per reason (of one ``scope`` if given), in :data:`REASONS` order."""
        counts = Counter(e.reason for e in self.excluded if scope in (None, e.scope))
        return {r: counts[r] for r in (*REASONS, *sorted(set(counts) - set(REASONS)))
                if counts[r]}

    def first_rows(self, limit: int = 5,
                   scope: str | None = None) -> dict[str, list[ExcludedRow]]:
        """The first ``limit`` excluded rows of each reason (of one ``scope`` if given)."""
        return {r: list(islice((e for e in self.excluded if e.reason == r
                                and scope in (None, e.scope)), limit))
                for r in self.counts_by_reason(scope)}

    def bases(self, missing_policy: str | None = None) -> list[tuple[str, int, str]]:
        """See :func:`bases_rows`."""
        return bases_rows(self.rows_read, self.respondents, self.rows_used,
                          self.counts_by_reason(SURVEY), self.counts_by_reason(MODEL),
                          self.gaps, missing_policy)

    def to_dict(self) -> dict:
        return {
            "rows_read": self.rows_read,
            "respondents": self.respondents,
            "rows_used": self.rows_used,
            "rows_excluded": self.rows_excluded,
            "blank_rows": self.blank_rows,
            "counts_by_reason": self.counts_by_reason(),
            "out_of_survey": self.counts_by_reason(SURVEY),
            "out_of_models": self.counts_by_reason(MODEL),
            "excluded": [dict(vars(e)) for e in self.excluded],
            "gaps": dict(self.gaps),
            "notes": list(self.notes),
        }

    def to_frame(self) -> pd.DataFrame:
        """The excluded rows as a table (row, column, reason, value, scope)."""
        return pd.DataFrame([vars(e) for e in self.excluded],
                            columns=["row", "column", "reason", "value", "scope"])

    def to_text(self, limit: int = 5, labels: Mapping[str, str] | None = None) -> str:
        """A plain-text report for the CLI; ``labels``: each attribute's label by its name."""
        labels = labels or {}
        lines = [f"rows read: {self.rows_read}",
                 f"respondents (survey base: net score, shares, segments): {self.respondents}",
                 f"used by the models (model base): {self.rows_used}",
                 f"rows excluded: {self.rows_excluded}"]
        for scope, title in ((SURVEY, "out of the survey"),
                             (MODEL, "in the net score, not used by the models")):
            counts = self.counts_by_reason(scope)
            for reason, rows in self.first_rows(limit, scope).items():
                lines.append(f"  {reason}, {title}: {counts[reason]}")
                for e in rows:
                    lines.append(f"    row {e.row}, column {e.column!r}: {e.value!r}")
                if counts[reason] > len(rows):
                    lines.append(f"    ... and {counts[reason] - len(rows)} more")
        gaps = {k: v for k, v in self.gaps.items() if v}
        if gaps:
            lines.append("unanswered attribute scores used by the models (filled inside each "
                         "model): " + ", ".join(f"{labels.get(k, k)} {v}"
                                               for k, v in gaps.items()))
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)
