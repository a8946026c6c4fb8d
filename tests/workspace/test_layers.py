"""The workspace is its own layer: above estimate, reports and project, below app and cli.
Nothing beneath it imports it, and it imports neither the app nor the CLI (read from the
source's import statements, lazy imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cx_app"
ABOVE = ("cx_app.app", "cx_app.cli")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def test_nothing_beneath_the_workspace_imports_it():
    beneath = [p for p in PACKAGE.rglob("*.py")
               if not _module(p).startswith(("cx_app.workspace", *ABOVE))]
    assert len(beneath) > 50  # the whole library was read
    offenders = {_module(p): sorted(i for i in _imports(p) if i.startswith("cx_app.workspace"))
                 for p in beneath}
    assert {m: i for m, i in offenders.items() if i} == {}


def test_the_workspace_imports_neither_the_app_nor_the_cli():
    modules = list((PACKAGE / "workspace").rglob("*.py"))
    assert len(modules) >= 10
    offenders = {_module(p): sorted(i for i in _imports(p) if i.startswith(ABOVE))
                 for p in modules}
    assert {m: i for m, i in offenders.items() if i} == {}
