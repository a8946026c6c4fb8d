"""The provenance block: which software, data and settings produced a number."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
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


def digest(payload: object) -> str:
    return sha256_hex(json.dumps(payload, sort_keys=True, default=str))[:16]


def survey_key(sha256: str, sheet: str | None, schema_yaml: str, filename: str | None = None) -> str:
    """A short key for one survey as analysed: file content, sheet, schema and file name.

    The file name is part of the key because results derived from the survey carry it (a final
    model records the file it was trained on): a user who uploads the same bytes under another
    name must not see the first user's file name."""
    return digest({"sha256": sha256, "sheet": sheet, "schema": schema_yaml,
                    "filename": filename})


def training_key(data_key: str, algorithm_id: str, settings: Mapping[str, Any], folds: int,
                 seed: int) -> str:
    """The content key of one cross-validation run."""
    return digest({"data": data_key, "algorithm": algorithm_id, "settings": dict(settings),
                    "folds": folds, "seed": seed})


def provenance_block(*, seed: int | None = None, folds: int | None = None,
                     preset: str | None = None, schema_yaml: str | None = None,
                     inputs: Mapping[str, str | None] | None = None,
                     created: str | None = None) -> dict[str, Any]:
    """The provenance every output carries; ``inputs``: file name → SHA-256 of the bytes read.

    >>> block = provenance_block(seed=0, folds=10, schema_yaml="", inputs={"a.csv": "ab"},
    ...                          created="2026-01-01T00:00:00+00:00")
    >>> block["schema_sha256"][:8], block["inputs"], sorted(block)[:3]
    ('e3b0c442', {'a.csv': 'ab'}, ['created', 'folds', 'inputs'])
    """
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds") if created is None
        else created,
        "versions": library_versions(),
        "seed": seed,
        "folds": folds,
        "preset": preset,
        "schema_sha256": None if schema_yaml is None else sha256_hex(schema_yaml),
        "inputs": {str(k): v for k, v in (inputs or {}).items()},
    }


def without_wall_clock(value: Any) -> Any:
    """A JSON document without its wall-clock fields (``*seconds*``, ``created``): the only
    things two runs with the same inputs and seed may differ in.

    >>> without_wall_clock({"fit_seconds": 1.2, "created": "2026-01-01", "n": [{"seconds": 3}]})
    {'n': [{}]}
    """
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items()
                if "seconds" not in k and k != "created"}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value
