"""docs/architecture.md is true of the tree: its generated module map lists every module of
cx_app/ with the first line of its docstring, the files it names exist, and no module imports
a layer above its own (docs/make_architecture.py, LAYERS)."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_architecture",
                                               ROOT / "docs" / "make_architecture.py")
arch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arch)
REGENERATE = f"run `{arch.COMMAND}` and commit docs/architecture.md"


def _doc() -> str:
    return arch.DOC.read_text(encoding="utf-8")


def test_every_module_is_in_the_module_map():
    text = _doc()
    listed = text[text.index(arch.BEGIN):text.index(arch.END)]
    missing = [m.as_posix() for m in arch.modules() if f"| `{m.as_posix()}` |" not in listed]
    assert not missing, f"modules missing from docs/architecture.md: {missing}; {REGENERATE}"


def test_the_module_map_is_up_to_date():
    assert arch.updated(_doc()) == _doc(), f"docs/architecture.md's module map is stale: {REGENERATE}"


def test_every_module_has_a_one_line_summary():
    """The map shows each docstring's first line: a sentence of its own, not a cut one."""
    bad = []
    for module in arch.modules():
        doc = ast.get_docstring(ast.parse((arch.PACKAGE / module).read_text(encoding="utf-8")))
        lines = (doc or "").strip().splitlines()
        if not lines or not lines[0].endswith(".") or (len(lines) > 1 and lines[1].strip()):
            bad.append(module.as_posix())
    assert not bad, ("these modules' docstrings do not start with a one-line sentence followed "
                     f"by a blank line: {bad}")


def test_the_files_the_document_names_exist():
    """A path (``survey/cells.py``, ``bench/bench_quality.py``) from the root or cx_app/; a
    bare file name (``alp.py`` under its package's heading) somewhere in the tree."""
    named = set(re.findall(r"`((?:\w+/)*\w+\.py)`", _doc()))
    everywhere = {p.name for p in ROOT.glob("[!.]*/**/*.py")} | {p.name for p in ROOT.glob("*.py")}
    gone = sorted(p for p in named if ((ROOT / p).exists() or (arch.PACKAGE / p).exists()
                                       or ("/" not in p and p in everywhere)) is False)
    assert not gone, f"docs/architecture.md names files that do not exist: {gone}"


def _imported(module: Path) -> set[str]:
    """The cx_app modules ``module`` imports (anywhere in it, functions included)."""
    package = ["cx_app", *module.parts[:-1]]
    found = set()
    for node in ast.walk(ast.parse((arch.PACKAGE / module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "cx_app"}
        elif isinstance(node, ast.ImportFrom):
            base = (".".join(package[:len(package) - node.level + 1] + [node.module or ""])
                    if node.level else node.module or "").strip(".")
            if base.split(".")[0] == "cx_app":
                found.add(base)
                found |= {f"{base}.{a.name}" for a in node.names}
    return found


def _path(name: str) -> Path | None:
    """The module file of a dotted name (relative to cx_app/), None for a name that is not a
    module (an attribute imported from one)."""
    parts = name.split(".")[1:]
    if not parts:
        return Path("__init__.py")
    for candidate in (Path(*parts).with_suffix(".py"), Path(*parts) / "__init__.py"):
        if (arch.PACKAGE / candidate).exists():
            return candidate
    return None


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for module in arch.modules():
        own = arch.layer_of(module)
        for name in sorted(_imported(module)):
            target = _path(name)
            if target is not None and arch.layer_of(target) > own:
                upward.append(f"{module.as_posix()} ({arch.LAYERS[own][0]}) imports {name} "
                              f"({arch.LAYERS[arch.layer_of(target)][0]})")
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def test_the_layer_test_sees_imports_in_functions_and_relative_ones(tmp_path, monkeypatch):
    (tmp_path / "engine").mkdir()
    (tmp_path / "survey").mkdir()
    (tmp_path / "survey" / "x.py").write_text("")
    (tmp_path / "engine" / "y.py").write_text(
        "def f():\n    from cx_app.survey import x\n    from ..survey.x import z\n")
    monkeypatch.setattr(arch, "PACKAGE", tmp_path)
    assert _imported(Path("engine/y.py")) == {"cx_app.survey", "cx_app.survey.x",
                                              "cx_app.survey.x.z"}
    assert _path("cx_app.survey.x") == Path("survey/x.py") and _path("cx_app.survey.x.z") is None
    assert arch.layer_of(Path("engine/y.py")) < arch.layer_of(Path("survey/x.py"))


def _import_graph() -> dict[Path, set[Path]]:
    """Module → the cx_app modules it imports (module level, in functions, under
    TYPE_CHECKING alike). ``from cx_app.pkg import name`` counts as importing the submodule
    ``pkg/name.py`` when there is one, else the package's ``__init__.py``."""
    graph = {}
    for module in arch.modules():
        targets = set()
        for name in _imported(module):
            target = _path(name)
            if target is None:
                continue
            if target.name == "__init__.py" and any(
                    other.startswith(name + ".") and _path(other) not in (None, target)
                    for other in _imported(module)):
                continue  # ``from pkg import sub``: the edge is to ``sub``, counted below
            if target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def _cycles(graph: dict[Path, set[Path]]) -> list[list[str]]:
    """The strongly connected components of more than one module (scipy's)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    nodes = sorted(graph)
    index = {node: i for i, node in enumerate(nodes)}
    rows, cols = [], []
    for node, targets in graph.items():
        for target in targets:
            if target in index:
                rows.append(index[node])
                cols.append(index[target])
    matrix = csr_matrix(([1] * len(rows), (rows, cols)), shape=(len(nodes), len(nodes)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for node, label in zip(nodes, labels, strict=True):
        groups.setdefault(int(label), []).append(node.as_posix())
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def test_no_import_cycles():
    """Counting every import (module level, inside functions, under TYPE_CHECKING): no two
    modules of cx_app reach each other. What two modules share belongs in a third, lower one."""
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (each group's modules import one another):\n" + "\n".join(
        " ↔ ".join(group) for group in cycles)


def test_the_cycle_test_sees_a_cycle_through_a_function_import(tmp_path, monkeypatch):
    (tmp_path / "estimate").mkdir()
    (tmp_path / "estimate" / "__init__.py").write_text("")
    (tmp_path / "estimate" / "a.py").write_text("from cx_app.estimate.b import g\n")
    (tmp_path / "estimate" / "b.py").write_text("def g():\n    from . import a\n")
    (tmp_path / "estimate" / "c.py").write_text("from cx_app.estimate import a\n")
    monkeypatch.setattr(arch, "PACKAGE", tmp_path)
    monkeypatch.setattr(arch, "modules", lambda: [Path("estimate/__init__.py"),
                                                 Path("estimate/a.py"), Path("estimate/b.py"),
                                                 Path("estimate/c.py")])
    assert _cycles(_import_graph()) == [["estimate/a.py", "estimate/b.py"]]
