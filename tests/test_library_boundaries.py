"""Issue 35's acceptance, checked on the code: one module starts child processes outside
``cli/`` (``cx_app/isolation.py``), and every runtime dependency is imported by the app."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_STARTS_PROCESSES = {"subprocess", "multiprocessing", "concurrent.futures.process", "pty"}
_STARTS_CALLS = {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp",
                 "execv", "execve", "execvp", "spawnv", "spawnl"}


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """The modules ``path`` imports (every import, in functions too) and the ``os`` functions
    it calls."""
    modules, calls = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module or "")
            if node.module == "os":
                calls |= {alias.name for alias in node.names}
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "os"):
            calls.add(node.attr)
    return modules, calls


def test_one_module_outside_the_cli_starts_child_processes():
    starters = []
    for path in sorted((ROOT / "cx_app").rglob("*.py")):
        modules, calls = _imports(path)
        if modules & _STARTS_PROCESSES or calls & _STARTS_CALLS:
            starters.append(path.relative_to(ROOT / "cx_app").as_posix())
    assert [p for p in starters if not p.startswith("cli/")] == ["isolation.py"]


def test_every_runtime_dependency_is_imported():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group().lower().replace("_", "-")
             for d in project["dependencies"]}
    imported = set()
    for path in [*(ROOT / "cx_app").rglob("*.py"), *(ROOT / "app_pages").glob("*.py"),
                 ROOT / "streamlit_app.py"]:
        imported |= {module.split(".")[0] for module in _imports(path)[0]}
    distributions = packages_distributions()  # one scan of the installed packages
    used = {dist.lower().replace("_", "-") for module in imported
            for dist in distributions.get(module, ())}
    assert sorted(names - used) == []
