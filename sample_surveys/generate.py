"""Write the bundled sample surveys (deterministic: the same seed gives the same bytes).

    python sample_surveys/generate.py            # rewrite every file in sample_surveys/
    python sample_surveys/generate.py --check    # also print the difficulty figures of README.md

The simulation itself (the true model, documented) lives in ``cx_app/simulation/waves.py`` so that the
app, the benchmarks and the tests can simulate more waves from the same model; this script only
writes the files (``cx_app.survey.samples.write_sample_files``) and measures their difficulty.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from cx_app.simulation.waves import DONT_KNOW, NOT_USED, NPS_COLUMN
from cx_app.survey.samples import SAMPLE_SEED, TELECOM_ATTRIBUTES, write_sample_files


def difficulty(frame: pd.DataFrame, *, folds: int = 10, seed: int = 0) -> dict[str, float]:
    """Accuracy of a logistic regression on the attributes (10-fold stratified CV): 11 classes,
    and its predictions grouped into detractor/passive/promoter (the 3×3+IM reduction)."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    columns = [a.column for a in TELECOM_ATTRIBUTES]
    X = frame[columns].replace({NOT_USED: np.nan, DONT_KNOW: np.nan}).astype(float)
    y = frame[NPS_COLUMN].to_numpy()
    model = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                          LogisticRegression(max_iter=2000))
    predicted = cross_val_predict(model, X, y,
                                  cv=StratifiedKFold(folds, shuffle=True, random_state=seed))

    def group(v: np.ndarray) -> np.ndarray:
        return np.select([v <= 6, v <= 8], [0, 1], 2)

    return {
        "accuracy_11": float(np.mean(predicted == y)),
        "accuracy_3": float(np.mean(group(predicted) == group(y))),
        "majority_11": float(np.bincount(y).max() / len(y)),
        "majority_3": float(np.bincount(group(y)).max() / len(y)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    parser.add_argument("--check", action="store_true", help="print the difficulty figures")
    args = parser.parse_args(argv)
    for path in write_sample_files(args.out, seed=args.seed):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    if args.check:
        frame = pd.read_excel(args.out / "telecom_nps.xlsx", sheet_name="Responses",
                              engine="calamine")
        for name, value in difficulty(frame).items():
            print(f"{name}: {value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
