"""Every name a bench script imports from ``cx_app`` exists: a bench is run rarely (``make
bench``), so a name moved or removed by a refactor would otherwise be found only then
(``bench_quality`` imported ``fit_weighted`` from its old module for a day)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _imports(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.module, alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.split(".")[0] == "cx_app" for alias in node.names]


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_a_bench_imports_only_names_cx_app_has(path):
    missing = [f"{module}.{name}" for module, name in _imports(path)
               if not hasattr(importlib.import_module(module), name)
               and importlib.util.find_spec(f"{module}.{name}") is None]
    assert not missing, f"{path.name} imports names cx_app does not have: {missing}"
