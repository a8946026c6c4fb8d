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
SHOWN = {"lr": "Logistic regression", HOSTILE_MODEL: HOSTILE_MODEL}
"""What a reader sees of each model: its display name (a name the analyst gave is kept)."""
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
    metrics["undefined"] = {"precision": [], "recall": [], "f1": [], "overall": []}
    return {
        "labels": labels, "matrix": matrix, "im": im, "positive": None, "metrics": metrics,
        # the later model is better on accuracy, the first on macro F1 (different winners)
        "per_fold": {"accuracy": [_value(m + f, 0) for f in range(FOLDS)],
                     "f1_macro": [_value(m + f, 1) - m / 5 for f in range(FOLDS)]},
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


def _cross_validation(model_id: str, m: int) -> dict:
    return {"algorithm": model_id, "settings": {"C": 1.0}, "calibration": "none",
            "folds": FOLDS, "seed": 7, "fold_method": "stratified", "fit_seconds": 0.25 + m,
            "fold_fit_seconds": [0.08 + m / 3] * FOLDS, "warnings": [],
            "provenance": {"cx_app": "0.1.0"}}


def make_results() -> dict:
    """A results document in the exact layout of ``cx-app evaluate``'s results.json (it
    validates as :class:`cx_app.models.results.Results`)."""
    models = {}
    for m, model_id in enumerate(MODELS):
        original = [[5 + m, 2, 1, 0], [1, 6, 2, 1], [0, 2, 7 - m, 3], [1, 0, 2, 17]]
        models[model_id] = {
            "algorithm": model_id,
            "levels": {
                "original": _multiclass_level(HOSTILE_CLASSES, original, None, m),
                "3x3+IM": _multiclass_level(["detractors", HOSTILE_GROUP, "promoters"],
                                            [[9, 2, 0], [2, 15, 3], [1, 2, 17]], [0, 3, 0], m + 1),
                "2x2+IM": _binary_level(m),
            },
            "roc": {"2x2+IM": {"kind": "reduced 2x2+IM", "fpr": [0.0, 0.1 + m / 10, 0.5, 1.0],
                               "tpr": [0.0, 0.4, 0.7 - m / 20, 0.86], "points": 4,
                               "auc": 0.71 - m / 20, "random_auc": 0.43}},
            "fit_seconds": 0.25 + m, "fold_sizes": [18, 18, 18],
            "cross_validation": _cross_validation(model_id, m),
        }
    excluded = [
        {"row": 4, "column": "NPS", "reason": "missing target", "value": ""},
        {"row": 9, "column": "NPS", "reason": "missing target", "value": ""},
        {"row": 12, "column": HOSTILE_ATTRIBUTE, "reason": "out-of-scale score",
         "value": "=cmd|' /C calc'!A0"},
    ]
    return {
        "dataset": {
            "filename": "wave =1.xlsx", "rows_read": 57, "rows_used": 54,
            "classes": HOSTILE_CLASSES, "attributes": [HOSTILE_ATTRIBUTE, "-price"],
            "attribute_labels": {HOSTILE_ATTRIBUTE: HOSTILE_ATTRIBUTE,
                                 "-price": "Price perception"},
            "target_kind": "nps",
            "nps": {"label": "all respondents", "value": 12.345, "ci95": [-8.5, 31.2],
                    "se": 10.1, "n": 54, "counts": {"detractors": 11, "passives": 23,
                                                   "promoters": 20},
                    "shares": {"detractors": 11 / 54, "passives": 23 / 54, "promoters": 20 / 54},
                    "missing": 0},
        },
        "folds": FOLDS, "seed": 7, "calibration": "none",
        "models": models,
        "comparisons": [{
            "level": "2x2+IM", "metric": "mcc", "a": "lr", "b": HOSTILE_MODEL, "folds": FOLDS,
            "mean_a": 0.61, "mean_b": 0.55, "mean_diff": 0.06,
            "t": 2.5, "df": FOLDS - 1, "p": 0.0412, "t_corrected": 1.2, "p_corrected": 0.31,
            "p_holm": 0.31, "alpha": 0.05,
            "verdict": "no significant difference (corrected, Holm)",
        }],
        "comparison_method": "k-fold paired t-test, Nadeau–Bengio corrected, Holm",
        "warnings": {model_id: [] for model_id in MODELS},
        "quality": {"rows_read": 57, "rows_used": 54, "rows_excluded": 3, "blank_rows": 0,
                    "counts_by_reason": {"missing target": 2, "out-of-scale score": 1},
                    "excluded": excluded, "gaps": {}, "notes": ["header on row 1"]},
        "provenance": {
            "file": "wave =1.xlsx", "sheet": "Data", "sha256": "ab" * 32,
            "schema": "hostile =schema",
            "plan": {"classes": HOSTILE_CLASSES, "steps": [
                {"name": "3x3+IM", "positive": "others", "positive_is_default": True, "groups": [
                    {"name": HOSTILE_GROUP, "option": "S", "members": HOSTILE_CLASSES[1:3],
                     "covers": HOSTILE_CLASSES[1:3], "tp_pairs": []},
                    {"name": "others", "option": "S", "members": HOSTILE_CLASSES[::3],
                     "covers": HOSTILE_CLASSES[::3], "tp_pairs": []}]}]},
            "algorithms": {model_id: {"C": 1.0} for model_id in MODELS},
            "versions": {"cx_app": "0.1.0"},
        },
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
        "importance_performance": {
            "importance": "relative weight (% of R²)",
            "method": "bootstrap over respondents (200 resamples, seeded): ...", "rows": [
                {"attribute": "-price", "importance": percent[0], "performance": 6.1,
                 "importance_low": percent[0] - 9, "importance_high": percent[0] + 9,
                 "performance_low": 5.8, "performance_high": 6.4,
                 "importance_vs_others": "below", "performance_vs_others": "below",
                 "quadrant": "low priority"},
                {"attribute": HOSTILE_ATTRIBUTE, "importance": percent[1], "performance": 7.2,
                 "importance_low": percent[1] - 9, "importance_high": percent[1] + 9,
                 "performance_low": 6.9, "performance_high": 7.5,
                 "importance_vs_others": "above", "performance_vs_others": "above",
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
    """A new-wave estimate in the exact layout of ``cx-app estimate --json`` (it validates as
    :class:`cx_app.estimate.document.WaveEstimateDocument`)."""
    return {
        "n": 40,
        "classes": HOSTILE_CLASSES,
        "alp_matrix": [[3.25, 0.5, 0.25, 0.0], [0.5, 6.5, 1.0, 0.0],
                       [0.25, 1.0, 8.0, 1.75], [0.0, 0.0, 1.75, 15.25]],
        "estimated": {"accuracy": 0.8125},
        "levels": {"2x2+IM": {"labels": ["detractors", "passives_promoters"],
                              "matrix": [[10.5, 1.25], [1.5, 24.0]], "im": [0.0, 2.75],
                              "positive": "passives_promoters",
                              "metrics": {"accuracy": 0.86875, "tpr": 0.8496}}},
        "estimated_class_counts": {"=1+1": 4.0, "-cmd": 8.0},
        "estimated_nps": {"value": 21.5, "ci95": [3.0, 40.0], "se": 9.4, "se_sampling": 8.0,
                          "se_model": 4.9, "n": 40, "counts": {}, "shares": {}, "kind": "nps"},
        "drift": {HOSTILE_ATTRIBUTE: {"present": True, "psi": 0.31, "level": "major",
                                      "chi2": 12.5, "dof": 9, "p_value": 0.19,
                                      "n_reference": 120, "n_current": 40, "n_missing": 0,
                                      "unseen_values": [], "out_of_scale_values": []}},
        "warnings": ["<b>drift</b> in " + HOSTILE_ATTRIBUTE],
        "model": {"algorithm": "lr", "calibration": "none", "training_sha256": "ab" * 32,
                  "training_n": 120, "training_file": "wave =1.xlsx",
                  "attributes": [HOSTILE_ATTRIBUTE, "-price"], "file_sha256": "12" * 32,
                  "heldout_alp_gap": {"accuracy_alp": 0.79, "accuracy_cm": 0.75,
                                      "accuracy_gap": 0.04, "n": 120,
                                      "net_calibration_error": 3.456, "net_gap": -2.345,
                                      "score": 0.65, "share_gap": 0.014}},
        "source": {"filename": "wave =2.xlsx", "sheet": "Data", "sha256": "ef" * 32},
        "metric_comparison": [
            {"level": "2x2+IM", "metric": "accuracy", "estimated": 0.86875},
            {"level": "2x2+IM", "metric": "tpr", "estimated": 0.8496}],
    }


def copy_results() -> dict:
    return copy.deepcopy(make_results())
