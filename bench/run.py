"""Benchmark harness: ``make bench`` (all) or ``python bench/run.py NAME ...`` (some).

Every ``bench/bench_<name>.py`` defines ``run() -> str`` returning a Markdown section. Each
section measures our code against a baseline *in the same run* and reports ratios, so that the
numbers mean something on any machine. Sections are written to ``bench/RESULTS.md``; sections
not run this time are kept from the previous file.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
MARK = "<!-- section: {} -->"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _previous_sections() -> dict[str, str]:
    if not RESULTS.exists():
        return {}
    text = RESULTS.read_text(encoding="utf-8")
    parts = re.split(r"<!-- section: (\w+) -->\n", text)
    return {parts[i]: parts[i + 1].rstrip() + "\n" for i in range(1, len(parts) - 1, 2)}


def main(names: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    available = {f.stem.removeprefix("bench_"): f for f in files}
    unknown = [n for n in names if n not in available]
    if unknown:
        print(f"unknown benchmark(s): {unknown}; available: {sorted(available)}", file=sys.stderr)
        return 2
    chosen = names or sorted(available)
    sections = _previous_sections()
    with tempfile.TemporaryDirectory(prefix="cx-bench-") as scratch:
        # a bench never writes into the developer's own workspace database (the default
        # ~/.local/share/cx-app/workspace.db): a scratch one unless the environment names one
        os.environ.setdefault("CX_APP_DATABASE_URL", f"sqlite:///{scratch}/workspace.db")
        # nor into its memory of checked model files (~/.cache/cx-app/model-checks)
        os.environ.setdefault("CX_APP_MODEL_CHECKS_DIR", f"{scratch}/model-checks")
        for name in chosen:
            print(f"== bench {name}", flush=True)
            sections[name] = _load(available[name]).run().rstrip() + "\n"
            print(sections[name], flush=True)
    header = (
        "# Benchmark results\n\n"
        f"Written by `make bench` on {dt.date.today().isoformat()}: Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores. Every figure is a ratio against a baseline "
        "measured in the same run, or an absolute time with its baseline beside it.\n"
    )
    body = "".join(f"\n{MARK.format(n)}\n{sections[n]}" for n in sorted(sections) if n in available)
    RESULTS.write_text(header + body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
