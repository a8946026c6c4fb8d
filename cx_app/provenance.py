"""Which software produced a number: library versions recorded with results, models and reports."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata

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
    "python_calamine": ("python-calamine",),
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
