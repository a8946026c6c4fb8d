"""The metric catalogue: every metric's name, meaning, formula, format and direction.

Formulas follow ``MATH.md`` (rows = actual class, columns = predicted class). One home for
metric names and the lists of metrics shown together: the app's pages, the reports
and the CLI read them from here.

>>> metric_name("mcc", binary=True)
'Matthews correlation (MCC)'
>>> metric_definition("fpr").direction, metric_definition("fpr").format
('lower', 'percent')
>>> metric_definition("tp").format
'count'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "neither"]
MetricFormat = Literal["percent", "count", "number"]

COUNT_KEYS: frozenset[str] = frozenset({
    "tp", "fn", "fp", "tn", "imp", "imn", "n", "p_actual", "p_pred", "n_actual", "n_pred",
    "support", "im",
})
"""Keys whose values are respondent counts."""

_LOWER_IS_BETTER = frozenset({"fnr", "fpr", "fdr", "for", "pt", "pimr", "nimr", "ppimr", "npimr",
                              "fn", "fp", "imp", "imn", "im", "psi"})
_NO_DIRECTION = frozenset({"phi", "n", "p_actual", "p_pred", "n_actual", "n_pred", "support",
                           "nps", "t_test", "alp", "performance", "top_box"})


@dataclass(frozen=True)
class MetricDefinition:
    """One metric: its key in the results, display name, meaning in words, formula, source."""

    key: str
    name: str
    words: str
    formula: str
    source: str = ""
    percent: bool = True  # a rate in [0, 1], shown as a percentage

    @property
    def direction(self) -> Direction:
        if self.key in _LOWER_IS_BETTER:
            return "lower"
        return "neither" if self.key in _NO_DIRECTION else "higher"

    @property
    def format(self) -> MetricFormat:
        """How a value is shown: ``percent`` (a rate in [0, 1]), ``count`` (respondents, possibly
        fractional in an ALP matrix) or ``number`` (anything else: MCC, δ, φ, AUC, ...)."""
        if self.percent:
            return "percent"
        return "count" if self.formula == "count" or self.key in COUNT_KEYS else "number"


_RM = "reduced-matrix paper"
_CMB = "confusion-matrix basics"

_MULTICLASS = (
    MetricDefinition("accuracy", "Accuracy",
                     "Share of respondents whose class was predicted exactly right.",
                     "Σ TP / N (the diagonal over the total)", _RM),
    MetricDefinition("precision_macro", "Precision (macro)",
                     "Average over classes of: of those predicted in the class, the share "
                     "actually in it.", "mean over classes of TP / (TP + FP)", _RM),
    MetricDefinition("recall_macro", "Recall (macro)",
                     "Average over classes of: of those actually in the class, the share "
                     "predicted in it.", "mean over classes of TP / (TP + FN)", _RM),
    MetricDefinition("f1_macro", "F1 (macro, mean of per-class F1)",
                     "Average over classes of the harmonic mean of precision and recall "
                     "(scikit-learn's macro F1).", "mean over classes of 2·P·R / (P + R)", _CMB),
    MetricDefinition("f1_of_macro_pr", "F1 of macro precision and recall",
                     "Harmonic mean of the macro precision and the macro recall (the "
                     "reduced-matrix paper's macro F1).",
                     "2·P_macro·R_macro / (P_macro + R_macro)", _RM),
    MetricDefinition("precision_micro", "Precision (micro)",
                     "Precision pooled over all classes; equals accuracy for single-label data.",
                     "Σ TP / (Σ TP + Σ FP)", _CMB),
    MetricDefinition("recall_micro", "Recall (micro)",
                     "Recall pooled over all classes; equals accuracy for single-label data.",
                     "Σ TP / (Σ TP + Σ FN)", _CMB),
)

_BINARY = (
    MetricDefinition("tp", "True positives (TP)",
                     "Respondents of the positive group predicted in the same group and counted "
                     "as correct by the grouping option.", "count", _RM, percent=False),
    MetricDefinition("fn", "False negatives (FN)",
                     "Respondents of the positive group predicted in the negative group.",
                     "count", _RM, percent=False),
    MetricDefinition("imp", "Positive intragroup mismatch (IMP)",
                     "Respondents of the positive group predicted inside the positive group but "
                     "in a different original class that the strict option does not accept.",
                     "count", _RM, percent=False),
    MetricDefinition("fp", "False positives (FP)",
                     "Respondents of the negative group predicted in the positive group.",
                     "count", _RM, percent=False),
    MetricDefinition("tn", "True negatives (TN)",
                     "Respondents of the negative group predicted in the negative group and "
                     "counted as correct.", "count", _RM, percent=False),
    MetricDefinition("imn", "Negative intragroup mismatch (IMN)",
                     "Respondents of the negative group predicted inside the negative group but "
                     "in a class the option does not accept.", "count", _RM, percent=False),
    MetricDefinition("accuracy", "Accuracy", "Share of respondents counted as correct.",
                     "(TP + TN) / n, n = TP + FN + IMP + FP + TN + IMN", _RM),
    MetricDefinition("tpr", "Recall, sensitivity (TPR)",
                     "Of the actual positive group, the share predicted correctly.",
                     "TP / (TP + FN + IMP)", _RM),
    MetricDefinition("tnr", "Specificity (TNR)",
                     "Of the actual negative group, the share predicted correctly.",
                     "TN / (TN + FP + IMN)", _RM),
    MetricDefinition("ppv", "Precision (PPV)",
                     "Of those predicted in the positive group, the share that is correct.",
                     "TP / (TP + FP + IMP)", _RM),
    MetricDefinition("npv", "Negative predictive value (NPV)",
                     "Of those predicted in the negative group, the share that is correct.",
                     "TN / (TN + FN + IMN)", _RM),
    MetricDefinition("fnr", "Miss rate (FNR)", "Of the actual positive group, the share missed.",
                     "FN / (TP + FN + IMP)", _RM),
    MetricDefinition("fpr", "Fall-out (FPR)",
                     "Of the actual negative group, the share predicted positive.",
                     "FP / (TN + FP + IMN)", _RM),
    MetricDefinition("fdr", "False discovery rate (FDR)",
                     "Of those predicted positive, the share actually negative.",
                     "FP / (TP + FP + IMP)", _RM),
    MetricDefinition("for", "False omission rate (FOR)",
                     "Of those predicted negative, the share actually positive.",
                     "FN / (TN + FN + IMN)", _RM),
    MetricDefinition("f1", "F1", "Harmonic mean of precision and recall.",
                     "2·PPV·TPR / (PPV + TPR)", _RM),
    MetricDefinition("fm", "Fowlkes–Mallows index",
                     "Geometric mean of precision and recall.", "√(PPV·TPR)", _RM),
    MetricDefinition("ba", "Balanced accuracy", "Mean of the two recalls.", "(TPR + TNR) / 2",
                     _RM),
    MetricDefinition("mcc", "Matthews correlation (MCC)",
                     "Correlation between 'actually positive group' and 'predicted positive "
                     "group' (−1 to 1).",
                     "((TP+IMP)(TN+IMN) − FP·FN) / √((TP+FP+IMP)(TP+FN+IMP)(TN+FN+IMN)(TN+FP+IMN))",
                     "reduced-matrix paper, Appendix A (MATH.md §6)", percent=False),
    MetricDefinition("pt", "Prevalence threshold",
                     "The prevalence below which precision falls faster than the rates suggest.",
                     "(√(TPR·(1−TNR)) + TNR − 1) / (TPR + TNR − 1)", _RM),
    MetricDefinition("bm", "Informedness (Youden's J)",
                     "How much better than chance the positive group is recognised.",
                     "TPR + TNR − 1", _RM, percent=False),
    MetricDefinition("mk", "Markedness", "How much better than chance the predictions are.",
                     "PPV + NPV − 1", _RM, percent=False),
    MetricDefinition("ts", "Threat score (critical success index)",
                     "Correct positives over everything touching the positive group.",
                     "TP / (TP + FN + FP + IMP)", _RM),
    MetricDefinition("pimr", "Positive intragroup mismatch rate (PIMR)",
                     "Of the actual positive group, the share in intragroup mismatch.",
                     "IMP / (TP + FN + IMP)", _RM),
    MetricDefinition("nimr", "Negative intragroup mismatch rate (NIMR)",
                     "Of the actual negative group, the share in intragroup mismatch.",
                     "IMN / (TN + FP + IMN)", _RM),
    MetricDefinition("ppimr", "Predicted positive intragroup mismatch rate (PPIMR)",
                     "Of those predicted positive, the share in intragroup mismatch.",
                     "IMP / (TP + FP + IMP)", _RM),
    MetricDefinition("npimr", "Predicted negative intragroup mismatch rate (NPIMR)",
                     "Of those predicted negative, the share in intragroup mismatch.",
                     "IMN / (TN + FN + IMN)", _RM),
    MetricDefinition("delta", "Discriminant capability (δ)",
                     "How well the classifier separates the two groups (1 = perfect, "
                     "0 = chance).", "TPR − FPR", "δ/φ paper (Armano et al.)", percent=False),
    MetricDefinition("phi", "Characteristic capability (φ)",
                     "Bias towards predicting positive (+) or negative (−); |δ| + |φ| ≤ 1.",
                     "TPR + FPR − 1", "δ/φ paper (Armano et al.)", percent=False),
    MetricDefinition("n", "Respondents (n)", "Every respondent of the 2×2+IM once.",
                     "TP + FN + IMP + FP + TN + IMN", _RM, percent=False),
    MetricDefinition("p_actual", "Actual positives",
                     "Respondents whose actual class is in the positive group.",
                     "TP + FN + IMP", _RM, percent=False),
    MetricDefinition("p_pred", "Predicted positives",
                     "Respondents predicted into the positive group.", "TP + FP + IMP", _RM,
                     percent=False),
    MetricDefinition("n_actual", "Actual negatives",
                     "Respondents whose actual class is in the negative group.",
                     "TN + FP + IMN", _RM, percent=False),
    MetricDefinition("n_pred", "Predicted negatives",
                     "Respondents predicted into the negative group.", "TN + FN + IMN", _RM,
                     percent=False),
)

_PER_CLASS = (
    MetricDefinition("precision", "Precision (per class)",
                     "Of the respondents predicted in this class, the share that truly are.",
                     "TP / (TP + FP + IM)", _RM),
    MetricDefinition("recall", "Recall (per class)",
                     "Of the respondents truly in this class, the share predicted in it.",
                     "TP / (TP + FN + IM)", _RM),
    MetricDefinition("f1", "F1 (per class)", "Harmonic mean of the class's precision and recall.",
                     "2·P·R / (P + R)", _RM),
    MetricDefinition("support", "Support (actual)",
                     "Respondents whose actual class is this one.", "row sum, IM included",
                     _CMB, percent=False),
    MetricDefinition("im", "Intragroup mismatch (IM)",
                     "Respondents of this group predicted in the right group but not counted "
                     "as correct under the grouping option (S or RS).",
                     "Σ within-group cells not counted as TP", _RM, percent=False),
)

_DRIVERS = (
    MetricDefinition("relative_weight", "Relative weight (% of R²)",
                     "Each attribute's share of the variance of the score that the attributes "
                     "explain together, fairly split between correlated attributes.",
                     "Johnson's relative weights; percent = raw weight / R² × 100",
                     "Johnson 2000", percent=False),
    MetricDefinition("coef", "Ordinal coefficient (log-odds per SD)",
                     "Change in the log-odds of a higher score for one standard deviation more "
                     "of the attribute (proportional-odds model); interval and p from its SE.",
                     "β of the ordinal logistic regression on standardised attributes",
                     "statsmodels OrderedModel", percent=False),
    MetricDefinition("permutation", "Permutation importance",
                     "How much the best model's accuracy on held-out folds drops when the "
                     "attribute's values are shuffled; interval over the folds.",
                     "accuracy(original) − accuracy(attribute shuffled), mean over repeats",
                     "scikit-learn's permutation importance", percent=False),
    MetricDefinition("performance", "Performance (mean score)",
                     "The attribute's mean rating over those who answered; with importance it "
                     "places the attribute in a quadrant (concentrate here, keep up the good "
                     "work, low priority, possible overkill) only when a bootstrap over "
                     "respondents shows it apart from the others on both axes.",
                     "mean of the attribute's scores",
                     "importance–performance analysis", percent=False),
    MetricDefinition("top_box", "Top-box δ/φ of an attribute",
                     "'Attribute scored in its top box' used as a predictor of the positive "
                     "group: δ is how well it separates, φ its bias.",
                     "δ = TPR − FPR, φ = TPR + FPR − 1", "δ/φ paper (Armano et al.)",
                     percent=False),
    MetricDefinition("psi", "Population stability index (PSI)",
                     "Drift of an attribute's distribution between the training data and the "
                     "new wave (below 0.1 stable, 0.1–0.25 moderate, above 0.25 large); the "
                     "chi-square test asks whether the distributions differ.",
                     "Σ (q − p)·ln(q / p) over the scale's values", "drift monitoring",
                     percent=False),
)

_OTHER = (
    MetricDefinition("auc", "Area under the ROC curve (AUC)",
                     "Area under the ROC curve of the 2×2+IM; compare with the random-selection "
                     "line's area, which is below 0.5 when the positive group has IM.",
                     "trapezoidal area under (FPR, TPR) over every score threshold",
                     "reduced-matrix paper, Section 4.3", percent=False),
    MetricDefinition("nps", "NPS (Net Promoter Score)",
                     "Share of promoters minus share of detractors, in points; 95% interval by "
                     "the adjusted Wald method.", "100·(share of promoters − share of detractors)",
                     "Rocks 2016 (MATH.md §11)", percent=False),
    MetricDefinition("t_test", "Paired t-test over folds",
                     "Whether two algorithms differ on a metric over the same folds. The plain "
                     "test is too liberal (training sets overlap); the Nadeau–Bengio corrected "
                     "test is not; Holm adjusts p-values for many comparisons.",
                     "t = mean(d) / (sd(d)/√k), df = k − 1; corrected: "
                     "t = mean(d) / √((1/k + 1/(k−1))·s²)",
                     "evaluation notes; Nadeau & Bengio 2003; Holm 1979", percent=False),
    MetricDefinition("alp", "Estimated confusion matrix (ALP)",
                     "Estimated confusion matrix of an unlabelled wave: each respondent adds "
                     "their predicted probabilities to the column of their predicted class.",
                     "A[m, k] = Σ over respondents predicted k of p̂(m)",
                     "ALP paper, Section 3", percent=False),
)

MULTICLASS_METRICS: dict[str, MetricDefinition] = {d.key: d for d in _MULTICLASS}
"""Definitions of the multiclass metric keys (the 'original' and M×M+IM levels)."""

BINARY_METRICS: dict[str, MetricDefinition] = {d.key: d for d in _BINARY}
"""Definitions of the 2×2+IM metric keys."""

OTHER_DEFINITIONS: dict[str, MetricDefinition] = {d.key: d for d in _OTHER}
"""AUC, NPS, the t-tests and the ALP matrix."""

PER_CLASS_METRICS: dict[str, MetricDefinition] = {d.key: d for d in _PER_CLASS}
"""Definitions of the per-class values of a multiclass level (``per_class`` in the results)."""

DRIVER_DEFINITIONS: dict[str, MetricDefinition] = {d.key: d for d in _DRIVERS}
"""The driver measures (relative weights, ordinal coefficients, permutation importance,
importance–performance, top-box δ/φ) and the new wave's drift index."""


MULTICLASS_SUMMARY: tuple[str, ...] = ("accuracy", "precision_macro", "recall_macro", "f1_macro",
                                       "f1_of_macro_pr")
"""The multiclass metrics shown together (leaderboard, confusion page, CLI)."""

MULTICLASS_ALL: tuple[str, ...] = (*MULTICLASS_SUMMARY, "precision_micro", "recall_micro")
"""Every scalar multiclass metric."""

MACRO_SUMMARY: tuple[str, ...] = ("accuracy", "precision_macro", "recall_macro", "f1_macro")
"""The metrics an ALP estimate is compared on with the real confusion matrix."""

BINARY_SUMMARY: tuple[str, ...] = ("accuracy", "tpr", "tnr", "ppv", "npv", "f1", "mcc", "ba",
                                   "pimr", "nimr")
"""The 2×2+IM metrics shown together (leaderboard)."""

WAVE_SUMMARY: tuple[str, ...] = (*MACRO_SUMMARY, "tpr", "tnr", "ppv", "f1")
"""The metrics of a new wave's estimate, shown beside the realized ones when labels exist."""


def compared_metrics(binary: bool) -> tuple[str, str]:
    """The metrics two models are compared on by default at a level: accuracy, and MCC on a
    2×2+IM level or the macro F1 on a multiclass one."""
    return ("accuracy", "mcc" if binary else "f1_macro")


SHORT_METRIC_NAMES: dict[str, str] = {
    "accuracy": "accuracy", "f1_macro": "macro F1", "mcc": "MCC", "f1": "F1",
    "ba": "balanced accuracy", "precision_macro": "macro precision",
    "recall_macro": "macro recall", "tpr": "TPR", "auc": "AUC",
}
"""Names of metrics for sentences ("lr is best by macro F1")."""


def metric_definition(key: str, *, binary: bool | None = None) -> MetricDefinition | None:
    """The definition of a metric key (2×2+IM keys first when ``binary``), or None."""
    tables = ((BINARY_METRICS, MULTICLASS_METRICS) if binary
              else (MULTICLASS_METRICS, BINARY_METRICS))
    for table in (*tables, OTHER_DEFINITIONS, PER_CLASS_METRICS, DRIVER_DEFINITIONS):
        if key in table:
            return table[key]
    return None


def metric_name(key: str, *, binary: bool | None = None) -> str:
    """The display name of a metric key; the key itself when it is not defined here."""
    found = metric_definition(key, binary=binary)
    return found.name if found else key


def lower_is_better(key: str) -> bool:
    """Whether a smaller value of the metric is the better one (error counts and rates)."""
    return key in _LOWER_IS_BETTER


def short_name(key: str) -> str:
    """The metric's name inside a sentence ("lr is best by macro F1"); its display name
    otherwise (the key when it is no metric of the catalogue)."""
    return SHORT_METRIC_NAMES.get(key) or metric_name(key)
