"""Where a ``cx-app evaluate`` run spends its wall time, by phase (issue 38's profile).

Usage: ``python bench/device/phases.py evaluate FILE ARGS...`` (the CLI's own arguments); it
runs the CLI in this process with wall-clock timers around the library's phases and prints one
``PHASES name=seconds ...`` line on stderr at exit. A phase's time includes the phases it
calls (driver_importance holds permutation_importance_cv); ``total`` is the whole process
after this script's first line, imports included.
"""

import atexit
import functools
import importlib
import sys
import time

START = time.perf_counter()
SECONDS: dict[str, float] = {}

PHASES = (
    ("cx_app.cli.evaluate", "survey_from_args"),
    ("cx_app.models.analysis", "cross_validate_together"),
    ("cx_app.models.analysis", "evaluate_result"),
    ("cx_app.models.analysis", "driver_importance"),
    ("cx_app.models.drivers", "permutation_importance_cv"),
    ("cx_app.models.drivers", "ordinal_coefficients"),
    ("cx_app.models.drivers", "importance_performance"),
    ("cx_app.models.analysis", "results_document"),
    ("cx_app.cli.evaluate", "write_results"),
    ("cx_app.cli.evaluate", "write_reports"),
)


def _timed(module: str, name: str) -> None:
    owner = importlib.import_module(module)
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SECONDS[name] = SECONDS.get(name, 0.0) + time.perf_counter() - start

    setattr(owner, name, timed)


@atexit.register
def _report() -> None:
    SECONDS["total"] = time.perf_counter() - START
    print("PHASES " + " ".join(f"{k}={v:.2f}" for k, v in SECONDS.items()), file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    for module, name in PHASES:
        _timed(module, name)
    from cx_app.cli import main

    sys.exit(main(sys.argv[1:]))
