"""A small hand-made results dict (the shape of ``cx-app evaluate``'s results.json) and a
new-wave estimate, with hostile survey text in every place survey text can reach."""

from __future__ import annotations

import copy

HOSTILE_MODEL = '=HYPERLINK("http://evil.example","x")'
HOSTILE_CLASSES = ["=1+1", "-cmd", "@SUM(A1:A2)", "<script>alert(1)</script>"]
HOSTILE_GROUP = "+passives"
HOSTILE_ATTRIBUTE = "@network <img src=x onerror=alert(2)>"
HOSTILE_TEXTS = [HOSTILE_MODEL, *HOSTILE_CLASSES, HOSTILE_GROUP, HOSTILE_ATTRIBUTE, "\tTAB", "\rCR"]

MODELS = ("lr", HOSTILE_MODEL)
MULTI_KEYS = ("accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr",
              "precision_micro", "recall_micro")
BINARY_RATE_KEYS = ("accuracy", "tpr", "tnr", "ppv", "npv", "fnr", "fpr", "fdr", "for", "f1",
                    "fm", "ba", "mcc", "pt", "bm", "mk", "ts", "pimr", "nimr", "ppimr", "npimr",
                    "delta", "phi")
FOLDS = 3


def _value(i: int, j: int) -> float:
    """Distinct, non-round numbers so that a misplaced cell cannot compare equal by chance."""
    return round(0.5 + ((i * 37 + j * 11) % 47) / 100 + i * 1e-4 + j * 1e-6, 6)


def _multiclass_level(labels, matrix, im, m: int) -> dict:
    metrics = {k: _value(m, j) for j, k in enumerate(MULTI_KEYS)}
    metrics["per_class"] = {
        lab: {"tp": matrix[i][i], "precision": _value(m + 3, i), "recall": _value(m + 4, i),
              "f1": _value(m + 5, i), "support": sum(matrix[i]) + (im[i] if im else 0),
              **({"im": im[i]} if im else {})}
        for i, lab in enumerate(labels)
    }
    metrics["undefined"] = {}
    return {
        "labels": labels, "matrix": matrix, "im": im, "positive": None, "metrics": metrics,
        "per_fold": {k: [_value(m + f, j) for f in range(FOLDS)]
                     for j, k in enumerate(("accuracy", "f1_macro"))},
    }


def _binary_level(m: int) -> dict:
    tp, fn, imp, fp, tn, imn = 21 + m, 4, 6 - m, 5, 14, 0
    metrics = {"tp": tp, "fn": fn, "imp": imp, "fp": fp, "tn": tn, "imn": imn}
    metrics.update({k: _value(m + 7, j) for j, k in enumerate(BINARY_RATE_KEYS)})
    metrics["delta"] = -0.25 - m / 10  # a negative number must stay a number
    metrics["per_class"] = {}
    metrics["undefined_per_class"] = {}
    return {
        "labels": ["detractors", "passives_promoters"],
        "matrix": [[tn, fp], [fn, tp]], "im": [imn, imp], "positive": "passives_promoters",
        "metrics": metrics,
        "per_fold": {k: [_value(m + 9 + f, j) for f in range(FOLDS)]
                     for j, k in enumerate(("accuracy", "mcc", "delta", "phi"))},
    }


def make_results() -> dict:
    models = {}
    for m, model_id in enumerate(MODELS):
        original = [[5 + m, 2, 1, 0], [1, 6, 2, 1], [0, 2, 7 - m, 3], [1, 0, 2, 17]]
        models[model_id] = {
            "algorithm": model_id, "settings": {"C": 1.0}, "fit_seconds": 0.25 + m,
            "levels": {
                "original": _multiclass_level(HOSTILE_CLASSES, original, None, m),
                "3x3+IM": _multiclass_level(["detractors", HOSTILE_GROUP, "promoters"],
                                            [[9, 2, 0], [2, 15, 3], [1, 2, 17]], [0, 3, 0], m + 1),
                "2x2+IM": _binary_level(m),
            },
            "roc": {"2x2+IM": {"fpr": [0.0, 0.1 + m / 10, 0.5, 1.0],
                               "tpr": [0.0, 0.4, 0.7 - m / 20, 0.86],
                               "auc": 0.71 - m / 20, "random_auc": 0.43}},
        }
    return {
        "dataset": {
            "filename": "wave =1.xlsx", "sha256": "ab" * 32, "rows_read": 57, "rows_used": 54,
            "classes": HOSTILE_CLASSES, "nps": {"value": 12.345, "ci95": [-8.5, 31.2], "n": 54},
            "rows_excluded": 3, "counts_by_reason": {"missing target": 2, "out-of-scale score": 1},
            "excluded": [
                {"row": 4, "column": "NPS", "reason": "missing target", "value": ""},
                {"row": 9, "column": "NPS", "reason": "missing target", "value": ""},
                {"row": 12, "column": HOSTILE_ATTRIBUTE, "reason": "out-of-scale score",
                 "value": "=cmd|' /C calc'!A0"},
            ],
            "imputed": {}, "notes": ["header on row 1"],
            "attributes": [HOSTILE_ATTRIBUTE, "-price"],
            "attribute_labels": {"-price": "Price perception"},
        },
        "folds": FOLDS, "seed": 7,
        "models": models,
        "comparisons": [{
            "level": "2x2+IM", "metric": "mcc", "a": "lr", "b": HOSTILE_MODEL,
            "t": 2.5, "df": FOLDS - 1, "p": 0.0412, "t_corrected": 1.2, "p_corrected": 0.31,
            "p_holm": 0.31, "verdict": "no significant difference (corrected, Holm)",
        }],
        "drivers": make_drivers(),
    }


DRIVER_ATTRIBUTES = ["-price", HOSTILE_ATTRIBUTE]  # as the results list them (survey order)
R_SQUARED = 0.3784
RAW_WEIGHTS = [0.0913, 0.2871]  # sum to R²


def make_drivers() -> dict:
    """The ``drivers`` part in the shape ``DriverAnalysis.to_dict()`` writes (plus the
    evaluation's ``permutation_model``)."""
    attributes = list(DRIVER_ATTRIBUTES)
    percent = [100 * w / R_SQUARED for w in RAW_WEIGHTS]
    return {
        "permutation_model": "lr",
        "ranking": [HOSTILE_ATTRIBUTE, "-price"],
        "relative_weights": {"method": "Johnson (2000) relative weights on the score",
                             "r_squared": R_SQUARED, "attributes": attributes,
                             "raw": list(RAW_WEIGHTS), "percent": percent},
        "ordinal": {"model": "ordinal logistic regression (proportional odds) on standardised "
                             "attributes", "attributes": attributes,
                    "coef": [0.2137, 0.6249], "se": [0.0512, 0.0733],
                    "ci_low": [0.1134, 0.4812], "ci_high": [0.3140, 0.7686],
                    "p": [3.1e-05, 1.7e-17]},
        "permutation": {"lr": {"algorithm": "lr", "scoring": "accuracy", "n_repeats": 4,
                               "attributes": attributes, "mean": [0.0123, 0.0457],
                               "ci_low": [0.0031, 0.0318], "ci_high": [0.0215, 0.0596],
                               "per_fold": [[0.011, 0.044], [0.0152, 0.0503],
                                            [0.0107, 0.0428]]}},
        "importance_performance": {"importance": "relative weight (% of R²)", "rows": [
            {"attribute": "-price", "importance": percent[0], "performance": 6.1,
             "quadrant": "low priority"},
            {"attribute": HOSTILE_ATTRIBUTE, "importance": percent[1], "performance": 7.2,
             "quadrant": "keep up the good work"}]},
        "top_box": [
            {"attribute": "-price", "target": "passives_promoters", "top_box_share": 0.2222,
             "tpr": 0.2963, "fpr": 0.1481, "delta": 0.1482, "phi": -0.5556},
            {"attribute": HOSTILE_ATTRIBUTE, "target": "passives_promoters",
             "top_box_share": 0.3519, "tpr": 0.4815, "fpr": 0.2222, "delta": 0.2593,
             "phi": -0.2963}],
        "notes": [],
    }


def make_new_wave() -> dict:
    return {
        "n": 40,
        "alp_matrix": {"labels": HOSTILE_CLASSES,
                       "matrix": [[3.25, 0.5, 0.25, 0.0], [0.5, 6.5, 1.0, 0.0],
                                  [0.25, 1.0, 8.0, 1.75], [0.0, 0.0, 1.75, 15.25]]},
        "estimated": {"accuracy": 0.8125},
        "levels": {"2x2+IM": {"labels": ["detractors", "passives_promoters"],
                              "matrix": [[10.5, 1.25], [1.5, 24.0]], "im": [0.0, 2.75],
                              "metrics": {"accuracy": 0.86875, "tpr": 0.8496}}},
        "estimated_class_counts": {"=1+1": 4.0, "-cmd": 8.0},
        "model": {"algorithm": "lr", "calibration": "none", "training_n": 120,
                  "heldout_alp_gap": {"accuracy_alp": 0.79, "accuracy_cm": 0.75,
                                      "accuracy_gap": 0.04, "n": 120,
                                      "net_calibration_error": 3.456, "net_gap": -2.345,
                                      "score": 0.65, "share_gap": 0.014}},
        "estimated_nps": {"value": 21.5, "ci95": [3.0, 40.0]},
        "drift": {HOSTILE_ATTRIBUTE: {"psi": 0.31, "shift": "large"}},
        "warnings": ["<b>drift</b> in " + HOSTILE_ATTRIBUTE],
    }


def copy_results() -> dict:
    return copy.deepcopy(make_results())
