"""About: where the numbers come from (inputs, schema, plan, settings, versions)."""

from __future__ import annotations

import json

from cx_app.engine.grouping import ResolvedPlan
from cx_app.estimate.document import WaveEstimateDocument
from cx_app.models.names import model_display_name
from cx_app.models.results import Results
from cx_app.provenance import library_versions
from cx_app.reports.blocks import Block, Section, Table, TableColumn
from cx_app.reports.definitions import GROUPING_OPTIONS, plain_name
from cx_app.reports.formatting import facts_table


def _plan_words(plan: ResolvedPlan) -> str:
    """The plan in words, one part per step: "3x3+IM: detractors (0, 1, …; Relaxed), …"."""
    def group(g) -> str:
        option = GROUPING_OPTIONS[g.option].name if g.option in GROUPING_OPTIONS else g.option
        return f"{plain_name(g.name)} ({', '.join(map(plain_name, g.members))}; {option})"

    return "; ".join(f"{s.name}: " + ", ".join(map(group, s.groups))
                     + (f", positive: {plain_name(s.positive)}" if s.positive else "")
                     for s in plan.steps)


def section(results: Results, new_wave: WaveEstimateDocument | None, created: str,
            source_name: str | None) -> Section:
    prov = results.provenance
    blocks: list[Block] = [facts_table("Provenance", [
        ("Report created", created, "text"), ("Input file", prov.file, "text"),
        ("Input sheet", prov.sheet, "text"), ("Input SHA-256", prov.sha256, "text"),
        ("Survey schema", prov.schema_name, "text"), ("Results file", source_name, "text"),
        ("Folds", results.folds, "int"), ("Seed", results.seed, "int"),
        ("Calibration", results.calibration, "text"),
        ("Plan", _plan_words(prov.plan) if prov.plan else None, "text"),
        ("Comparison method", results.comparison_method, "text"),
        ("Preset", plain_name(prov.preset) if prov.preset else None, "text"),
        ("Schema SHA-256", prov.schema_sha256, "text"),
        ("Results created (UTC)", prov.created, "text"),
        *((f"Input SHA-256: {name}", sha, "text") for name, sha in prov.inputs.items()),
        ("New wave analysed", "yes" if new_wave else "no", "text")])]
    if new_wave is not None:
        wave_prov = new_wave.provenance
        blocks.append(facts_table("New wave provenance", [
            ("Wave file", new_wave.filename, "text"),
            ("Wave SHA-256", new_wave.source.get("sha256"), "text"),
            ("Model file SHA-256", new_wave.model.file_sha256, "text"),
            ("Model trained on", new_wave.model.training_file, "text"),
            ("Training SHA-256", new_wave.model.training_sha256, "text"),
            ("Estimate created (UTC)", wave_prov.created if wave_prov else None, "text")]))
    settings = tuple(
        (model_display_name(m), f"{model_display_name(model.algorithm)} (preset: "
            f"{plain_name(model.cross_validation.preset)}): "
            + ", ".join(f"{plain_name(k)} {json.dumps(v, default=str)}"
                        for k, v in model.cross_validation.settings.items()),
         model.fit_seconds) for m, model in results.models.items())
    if settings:
        blocks.append(Table("Models and settings",
                            (TableColumn("model", "Model"), TableColumn("settings", "Algorithm and settings"),
                             TableColumn("fit_seconds", "Fit seconds", "float")), settings))
    versions = {**library_versions(), **prov.versions}
    blocks.append(Table("Versions (of this report; the results' own where recorded)",
                        (TableColumn("item", "Item"), TableColumn("value", "Value")),
                        tuple((plain_name(k), v) for k, v in versions.items())))
    return Section("about", "About", tuple(blocks))
