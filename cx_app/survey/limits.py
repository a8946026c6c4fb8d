"""Size limits the importer enforces on every survey file, whoever calls it (app, CLI, tests).

A file from anyone must be refused *before* it can exhaust a shared server's memory.
:func:`limits_from_env` reads overrides from the environment variables of :data:`ENV_VARS`
(numbers; sizes in MB; defaults: the README's "Security and privacy" table); the
``CX_APP_READER_*`` two bound the reader's child process only. Normal Excel worksheets compress
about 10:1; small parts of repeated text legitimately compress far better, hence the floor below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from cx_app.archive_limits import MB, InflationBudget
from cx_app.isolation import env_number

RATIO_FLOOR_BYTES = 1 * MB
"""Parts smaller than this (unzipped) are not subject to the compression-ratio limit."""

ENV_VARS: dict[str, str] = {
    "max_file_bytes": "CX_APP_MAX_FILE_MB",
    "max_rows": "CX_APP_MAX_ROWS",
    "max_columns": "CX_APP_MAX_COLUMNS",
    "max_cells": "CX_APP_MAX_CELLS",
    "max_decompressed_bytes": "CX_APP_MAX_DECOMPRESSED_MB",
    "max_compression_ratio": "CX_APP_MAX_COMPRESSION_RATIO",
    "max_zip_entries": "CX_APP_MAX_ZIP_ENTRIES",
    "reader_memory_bytes": "CX_APP_READER_MEMORY_MB",
    "reader_cpu_seconds": "CX_APP_READER_CPU_SECONDS",
}
"""The environment variable overriding each limit (``*_MB`` variables are in megabytes)."""


@dataclass(frozen=True)
class ImportLimits:
    """Limits on one survey file; sizes in bytes."""

    max_file_bytes: int = 200 * MB
    max_rows: int = 1_000_000
    max_columns: int = 2_000
    max_cells: int = 30_000_000
    max_decompressed_bytes: int = 1_000 * MB
    max_compression_ratio: float = 200.0
    max_zip_entries: int = 10_000
    reader_memory_bytes: int = 2_048 * MB
    reader_cpu_seconds: int = 120

    def __post_init__(self) -> None:
        for f in fields(self):
            if not getattr(self, f.name) > 0:
                raise ValueError(f"ImportLimits.{f.name} must be positive")

    def inflation_budget(self) -> InflationBudget:
        """What one archive (a project or model file, nested archives included) may unpack to."""
        return InflationBudget(max_bytes=self.max_decompressed_bytes,
                               max_entries=self.max_zip_entries)


def limits_from_env(environ: Mapping[str, str] | None = None) -> ImportLimits:
    """The default limits with any ``CX_APP_MAX_*`` environment variable applied (one that is
    not a positive number raises ``ValueError``: a misconfiguration must not pass silently)."""
    env = os.environ if environ is None else environ
    values: dict = {}
    for name, var in ENV_VARS.items():
        if env.get(var, "").strip():
            number = env_number(var, 0, env)
            values[name] = (int(number * MB) if var.endswith("_MB") else
                            number if name == "max_compression_ratio" else int(number))
    return ImportLimits(**values)


__all__ = ["ENV_VARS", "ImportLimits", "RATIO_FLOOR_BYTES", "limits_from_env"]
