"""What the model-file defences of issue 24 cost per load: the structure checks
(``cx_app.estimate.model_checks``) and the first opening and prediction in a limited child
process (``cx_app.estimate.model_sandbox``). Baseline in the same run: opening the same file in
the process itself (skops, the trusted-type audit and the checks), as ``load_model`` did before
the child existed. Files are tiny models of ``tests/data/bad/crafted.py`` whose bytes this
process never wrote (so nothing is remembered from their writing)."""

from __future__ import annotations

import resource
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ALGORITHMS = ("dt", "knn", "rf", "xgb", "cnn")


def _seconds(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run() -> str:
    from cx_app.estimate import model_sandbox
    from cx_app.estimate.model_checks import check_fitted_model
    from cx_app.estimate.model_file import check_model_files, load_model, open_checked_model
    from tests.data.bad import crafted

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = {a: crafted.tiny_model_bytes(a) for a in ALGORITHMS}
        rows = []
        for algorithm, data in files.items():
            in_process = _seconds(lambda d=data: open_checked_model(d, "m.skops"))
            model = open_checked_model(data, "m.skops")
            checks = _seconds(lambda m=model: check_fitted_model(m.estimator, "m.skops"))
            first = _seconds(lambda d=data: load_model(d, name="m.skops"))
            again = _seconds(lambda d=data: load_model(d, name="m.skops"))
            rows.append(f"| {algorithm} | {len(data):,} | {in_process * 1000:.0f} | "
                        f"{checks * 1000:.1f} | {first:.2f} | {first / in_process:.0f}× | "
                        f"{again * 1000:.0f} |")
        model_sandbox._verdicts.clear()  # the same files again, all in one child
        batch = _seconds(lambda: check_model_files([(d, a) for a, d in files.items()]))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return (
        "## Model files: the checks and the child process (bench_model_check)\n\n"
        "Per file: opening it in this process (the baseline: skops, type audit and structure "
        "checks), the structure checks alone, the first `load_model` (child process + opening "
        "here) and a second one (the child's answer kept by SHA-256). "
        f"All {len(files)} files in one child (a project's final models): {batch:.2f} s. "
        f"Largest child's peak RSS: {peak:.0f} MB.\n\n"
        "| model | bytes | open in process (ms) | checks (ms) | first load_model (s) | "
        "× in process | again (ms) |\n|---|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    print(run())
