"""The provenance block: which software, data and settings produced a number.

Which software, data and settings produced a number: the provenance block recorded with
results, estimates, models, project files and reports (:func:`provenance_block`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import platform
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from typing import Any

from cx_app import __version__

# key in our documents -> distribution names to try (the first one installed wins)
_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "numpy": ("numpy",),
    "pandas": ("pandas",),
    "sklearn": ("scikit-learn",),
    "scipy": ("scipy",),
    "statsmodels": ("statsmodels",),
    "xgboost": ("xgboost-cpu", "xgboost"),
    "skops": ("skops",),
    "altair": ("altair",),
    "openpyxl": ("openpyxl",),
    "fastexcel": ("fastexcel",),
    "pyarrow": ("pyarrow",),
    "vl_convert": ("vl-convert-python",),
}


@cache
def library_versions() -> dict[str, str]:
    """cx_app, Python and the versions of the libraries behind our numbers ("absent" if missing)."""
    out = {"cx_app": __version__, "python": platform.python_version()}
    for key, names in _DISTRIBUTIONS.items():
        out[key] = "absent"
        for name in names:
            try:
                out[key] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    return dict(out)


def sha256_hex(data: bytes | str) -> str:
    """The SHA-256 of ``data`` (text as UTF-8) in hex.

    >>> sha256_hex("")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def utc_timestamp() -> str:
    """Now, in UTC, to the second (ISO 8601 with ``+00:00``)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def provenance_block(*, seed: int | None = None, folds: int | None = None,
                     preset: str | None = None, schema_yaml: str | None = None,
                     inputs: Mapping[str, str | None] | None = None,
                     created: str | None = None) -> dict[str, Any]:
    """The provenance every output carries (results.json, estimate JSON, model and project
    files, the reports' About section): ``created`` (UTC), library ``versions``, ``seed``,
    ``folds``, ``preset``, ``schema_sha256`` (of the schema YAML text) and ``inputs`` (file
    name → SHA-256 of the bytes read). One builder, so every output says the same thing.

    >>> block = provenance_block(seed=0, folds=10, schema_yaml="", inputs={"a.csv": "ab"},
    ...                          created="2026-01-01T00:00:00+00:00")
    >>> block["schema_sha256"][:8], block["inputs"], sorted(block)[:3]
    ('e3b0c442', {'a.csv': 'ab'}, ['created', 'folds', 'inputs'])
    """
    return {
        "created": utc_timestamp() if created is None else created,
        "versions": library_versions(),
        "seed": seed,
        "folds": folds,
        "preset": preset,
        "schema_sha256": None if schema_yaml is None else sha256_hex(schema_yaml),
        "inputs": {str(k): v for k, v in (inputs or {}).items()},
    }


def without_wall_clock(value: Any) -> Any:
    """A JSON document (results.json, an estimate) without its wall-clock fields — durations
    (keys containing ``seconds``) and the UTC time it was made (``created``): the only things
    two runs with the same inputs and seed may differ in. For comparing runs (app vs CLI,
    local vs cluster, a project reopened).

    >>> without_wall_clock({"fit_seconds": 1.2, "created": "2026-01-01", "n": [{"seconds": 3}]})
    {'n': [{}]}
    """
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items()
                if "seconds" not in k and k != "created"}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value
