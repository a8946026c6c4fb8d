"""About: where the numbers come from (input file, sheet, SHA-256, schema, plan, folds, seed,
settings of every model) and the library versions."""

from __future__ import annotations

import json

from cx_app.estimate.document import WaveEstimateDocument
from cx_app.models.results import Results
from cx_app.provenance import library_versions
from cx_app.reports.blocks import Block, Column, Section, Table
from cx_app.reports.formatting import facts_table


def section(results: Results, new_wave: WaveEstimateDocument | None, created: str,
            source_name: str | None) -> Section:
    prov = results.provenance
    blocks: list[Block] = [facts_table("Provenance", [
        ("Report created", created, "text"), ("Input file", prov.file, "text"),
        ("Input sheet", prov.sheet, "text"), ("Input SHA-256", prov.sha256, "text"),
        ("Survey schema", prov.schema_name, "text"), ("Results file", source_name, "text"),
        ("Folds", results.folds, "int"), ("Seed", results.seed, "int"),
        ("Calibration", results.calibration, "text"),
        ("Plan", prov.plan.describe() if prov.plan else None, "text"),
        ("Comparison method", results.comparison_method, "text"),
        ("New wave analysed", "yes" if new_wave else "no", "text")])]
    settings = tuple(
        (m, f"{model.algorithm} ({model.cross_validation.preset} preset): "
            f"{json.dumps(model.cross_validation.settings, default=str)}",
         model.fit_seconds) for m, model in results.models.items())
    if settings:
        blocks.append(Table("Models and settings",
                            (Column("model", "Model"), Column("settings", "Algorithm and settings"),
                             Column("fit_seconds", "Fit seconds", "float")), settings))
    versions = {**library_versions(), **prov.versions}
    blocks.append(Table("Versions (of this report; the results' own where recorded)",
                        (Column("item", "Item"), Column("value", "Value")),
                        tuple(versions.items())))
    return Section("about", "About", tuple(blocks))
