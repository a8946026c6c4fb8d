"""How long a local pool of N workers takes to start and import the fold-fitting code
(``cx_app.models.crossval``): the part of a run's first folds that no core count shortens.

Usage: ``python bench/device/pool_start.py N``; prints the seconds of a cold pool (started and
imported) and of the same pool again (warm), and of importing the fold code in this process.
"""

import sys
import time

from joblib import Parallel, delayed


def _import_fold_code() -> float:
    start = time.perf_counter()
    import cx_app.models.crossval  # noqa: F401

    return time.perf_counter() - start


if __name__ == "__main__":
    n = int(sys.argv[1])
    here = _import_fold_code()
    for state in ("cold", "warm"):
        start = time.perf_counter()
        imports = Parallel(n_jobs=n, batch_size=1)(delayed(_import_fold_code)() for _ in range(n))
        print(f"pool of {n} {state}: {time.perf_counter() - start:.2f} s (a worker's import of "
              f"the fold code: max {max(imports):.2f} s); this process's import: {here:.2f} s",
              flush=True)
