"""Definitions: every metric of the catalogue, the grouping options and the papers cited."""

from __future__ import annotations

from collections.abc import Iterable

from cx_app.engine.catalogue import (
    BINARY_METRICS,
    DRIVER_DEFINITIONS,
    MULTICLASS_METRICS,
    OTHER_DEFINITIONS,
    PER_CLASS_METRICS,
    MetricDefinition,
)
from cx_app.reports.blocks import Paragraph, Section, Table, TableColumn
from cx_app.reports.definitions import GROUPING_OPTIONS, NET_SCORE_DEFINITION, PAPERS
from cx_app.survey.vocabulary import ScoreVocabulary

_COLUMNS = (TableColumn("name", "Metric"), TableColumn("words", "Meaning"),
            TableColumn("formula", "Formula"), TableColumn("source", "Source"))


def _rows(definitions: Iterable[MetricDefinition]) -> tuple[tuple[str, ...], ...]:
    return tuple((d.name, d.words, d.formula, d.source) for d in definitions)


def section(words: ScoreVocabulary) -> Section:
    """The definitions; the net score's is the NPS one only for an NPS (``words``)."""
    others = [d if d.key != "nps" or words.is_nps else NET_SCORE_DEFINITION
              for d in OTHER_DEFINITIONS.values()]
    return Section("definitions", "Definitions", (
        Paragraph("Confusion matrices: rows = actual class, columns = predicted class.", "note"),
        Table("Multiclass metrics (original and M×M+IM levels)", _COLUMNS,
              _rows(MULTICLASS_METRICS.values())),
        Table("2×2+IM metrics", _COLUMNS, _rows(BINARY_METRICS.values())),
        Table("Per-class values (multiclass levels)", _COLUMNS,
              _rows(PER_CLASS_METRICS.values())),
        Table("Other figures", _COLUMNS, _rows(others)),
        Table("Drivers and drift", _COLUMNS, _rows(DRIVER_DEFINITIONS.values())),
        Table("Grouping options", (TableColumn("code", "Option"), TableColumn("name", "Name"),
                                   TableColumn("words", "Meaning")),
              tuple((o.code, o.name, o.words) for o in GROUPING_OPTIONS.values())),
        Table("Papers cited", (TableColumn("citation", "Paper"), TableColumn("used_for", "Used for")),
              tuple((p.citation, p.used_for) for p in PAPERS)),
    ))
