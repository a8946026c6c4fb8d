"""The report's content, built once from typed results and rendered by both writers."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

from cx_app.estimate.document import WaveEstimateDocument
from cx_app.models.results import Results
from cx_app.reports.blocks import Report
from cx_app.reports.sections import (
    about,
    comparisons,
    confusion,
    data_quality,
    definitions,
    drivers,
    metrics,
    per_fold,
    reference,
    roc,
    summary,
)
from cx_app.reports.sections import (
    new_wave as new_wave_section,
)


def build_report(results: Results | Mapping[str, Any],
                 new_wave: WaveEstimateDocument | Mapping[str, Any] | None = None, *,
                 respondent_data: bool = False, source_name: str | None = None) -> Report:
    """Plain dicts are validated first; ``respondent_data``: include the excluded cells'
    contents; ``source_name``: the results file, for the About section."""
    if not isinstance(results, Results):
        results = Results.from_dict(results, source=source_name or "results")
    if new_wave is not None and not isinstance(new_wave, WaveEstimateDocument):
        new_wave = WaveEstimateDocument.from_dict(new_wave, source="new-wave estimate")
    created = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    sections = [summary.section(results, new_wave), reference.section(results),
                metrics.section(results),
                confusion.section(results), per_fold.section(results),
                comparisons.section(results), roc.section(results), drivers.section(results)]
    if new_wave is not None:
        sections.append(new_wave_section.section(new_wave, results.dataset.attribute_labels))
    sections += [data_quality.section(results, respondent_data),
                 definitions.section(results.dataset.vocabulary),
                 about.section(results, new_wave, created, source_name)]
    name = results.provenance.file
    title = f"CX driver analysis — {name}" if name else "CX driver analysis"
    return Report(title, created, tuple(sections))
