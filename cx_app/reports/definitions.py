"""What the reports explain besides the metrics: grouping options, papers, field labels.

The metrics themselves are in the engine's catalogue, :mod:`cx_app.engine.catalogue`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cx_app.engine import catalogue
from cx_app.engine.catalogue import MetricDefinition, metric_definition
from cx_app.survey.schema import SurveySchema


@dataclass(frozen=True)
class GroupingOption:
    code: str
    name: str
    words: str


@dataclass(frozen=True)
class Paper:
    key: str
    citation: str
    used_for: str


GROUPING_OPTIONS: dict[str, GroupingOption] = {o.code: o for o in (
    GroupingOption("R", "Relaxed",
                   "Every prediction inside the right group counts as correct: a 7 predicted "
                   "as 8 is correct when 7 and 8 are one group. No intragroup mismatch (IM = 0)."),
    GroupingOption("S", "Strict",
                   "Only the exact class counts as correct; other predictions inside the group "
                   "are intragroup mismatch (IM), kept apart from errors."),
    GroupingOption("RS", "Hybrid",
                   "The exact class and a declared set of (actual, predicted) pairs inside the "
                   "group count as correct (e.g. 'predicted at least the actual score'); the "
                   "rest is IM."),
)}

ALP = "Estimated from the model's probabilities (ALP)"

GLOSSARY: dict[str, str] = {
    ALP:
        "The actual-label-probabilistic confusion matrix: each respondent's predicted class "
        "counts with the model's probability of every actual class, so a wave without its "
        "scores still gets an estimated confusion matrix, accuracy and NPS.",
    "Intragroup mismatch (IM)":
        "A prediction in the right group but not the exact score (an actual 7 predicted as 8, "
        "both passives): kept apart from errors in the reduced matrices.",
    "Relaxed / Strict / Hybrid grouping":
        "How predictions inside the right group count: Relaxed — all correct; Strict — only "
        "the exact score, the rest is IM; Hybrid — the exact score and declared pairs correct, "
        "the rest IM.",
    "Three groups and two groups with mismatches (3×3+IM and 2×2+IM)":
        "The confusion matrix reduced to detractors / passives / promoters (or to two groups, "
        "e.g. detractors vs the rest), with an IM row and column.",
    "AUC and the random line":
        "The area under the ROC curve of a 2×2+IM matrix. Its random line ends below (1, 1) "
        "when there is IM, so compare an AUC with its own random-line area, not with 0.5.",
    "Discriminant / characteristic capability (δ / φ)":
        "δ = TPR − FPR says how well a feature separates a group from the rest; φ = TPR + FPR "
        "− 1 how typical the feature is of the group whatever it separates.",
    "Corrected t-test (Nadeau–Bengio)":
        "The paired t-test of two algorithms over the same cross-validation folds, with its "
        "variance corrected for the folds' overlapping training data.",
    "Survey base and model base":
        "The NPS is over every respondent with a valid answer; the models train on those of "
        "them whose attribute answers can be used (the Data page shows both).",
    "95% interval":
        "The range that holds the true value in 95 of 100 surveys like this one; it narrows "
        "as respondents are added.",
    "Adjusted Wald interval":
        "The 95% interval of a net score used here: it stays sensible for small groups "
        "and scores near ±100 (Rocks 2016).",
    "p-value (p)":
        "How likely a difference at least this large would be if there were really none; "
        "below 0.05 it is called significant.",
    "Holm adjustment":
        "p-values raised to allow for testing many pairs at once, so that 'significant' keeps "
        "its 5% risk over all of them.",
    "Significant difference":
        "A difference too large to be chance at the 5% level; colours show its direction "
        "(blue higher or better, orange lower or worse), never good or bad.",
    "Cross-validation folds":
        "The survey split into k parts: each model is trained k times, each time scored on "
        "the part it did not see, so every respondent is predicted once by a model that did "
        "not train on them.",
    "Held-out calibration gap":
        "How far the estimates from the model's probabilities (ALP) were from the truth on "
        "respondents the model did not train on; a new wave's estimates inherit it.",
    "Class-share gap":
        "Half the summed absolute difference between estimated and actual class shares "
        "(0 = the same shares).",
    "Test of how the answers spread (χ², chi-square) and df":
        "Tests whether an attribute's answers are spread differently in the new wave than "
        "in training; df (degrees of freedom) is the number of answer categories minus one.",
    "Drift":
        "A change in who answers or how they answer between the training survey and a new "
        "wave; large drift makes the model's estimates less reliable.",
}

PAPERS: tuple[Paper, ...] = (
    Paper("reduced-matrix", "Markoulidakis, I., Rallis, I., Georgoulas, I., Kopsiaftis, G., "
          "Doulamis, A., Doulamis, N. (2021). Multiclass Confusion Matrix Reduction Method and "
          "Its Application on Net Promoter Score Classification Problem. Technologies 9(4), 81. "
          "doi:10.3390/technologies9040081",
          "grouped classes, the M×M+IM and 2×2+IM matrices, their metrics, ROC of a 2×2+IM"),
    Paper("alp", "Markoulidakis, I., Markoulidakis, G. (2024). Probabilistic Confusion Matrix: "
          "A Novel Method for Machine Learning Algorithm Generalized Performance Analysis. "
          "Technologies 12(7), 113. doi:10.3390/technologies12070113",
          "the confusion matrix estimated from the model's probabilities (ALP) and performance "
          "estimates on an unlabelled wave"),
    Paper("delta-phi", "Armano, G., Fanni, F., Giuliani, A. (2014). Measuring Discriminant and "
          "Characteristic Capability for Building and Assessing Classifiers. AI*IA workshop, "
          "CEUR-WS Vol-1314, paper 5.", "δ (discriminant) and φ (characteristic) capability"),
    Paper("ttest", "Notes on Model Evaluation and Selection (10-fold cross-validated paired "
          "t-test); Nadeau, C., Bengio, Y. (2003). Inference for the Generalization Error. "
          "Machine Learning 52, 239–281.", "comparing two algorithms over the same folds"),
    Paper("basics", "Klein, B. (2022). Confusion Matrix in Machine Learning. python-course.eu.",
          "per-class precision, recall and F1; macro and micro averages"),
    Paper("relative-weights", "Johnson, J. W. (2000). A Heuristic Method for Estimating the "
          "Relative Weight of Predictor Variables in Multiple Regression. Multivariate "
          "Behavioral Research 35(1), 1–19.", "driver importance as relative weights"),
    Paper("nps-interval", "Rocks, B. (2016). Interval Estimation for the 'Net Promoter Score'. "
          "The American Statistician 70(4), 365–372.", "the adjusted Wald interval of a net score"),
)


NET_SCORE_DEFINITION = MetricDefinition(
    "net_score", "Net score (top box − bottom box)",
    "Share of the top group minus share of the bottom group, in points; 95% interval by the "
    "adjusted Wald method. (The target is not a recommend question on 0–10.)",
    "100·(p_top − p_bottom)", "Rocks 2016 (MATH.md §11)", percent=False)


PLAIN_NAMES: dict[str, str] = {
    # how unanswered attribute scores are handled (a schema's ``missing_attributes``)
    "impute_indicator": ("Keep; models fill with the training median (the support vector machine "
                         "and ordinal logistic regression also add a 'was missing' flag)"),
    "impute_median": "Keep; models fill with the training median",
    "exclude": "Leave respondents with a gap out of the models (not out of the net score)",
    # training presets
    "fast": "fast",
    "papers": "as in the papers",
    # the default plans' group codes
    "passives_promoters": "passives and promoters",
    "top_box": "top box",
    # the corrected t-test's quantities
    "n_test": "test-fold size",
    "n_train": "training-fold size",
    # per-respondent tables
    "sheet_row": "Row in the sheet",
    "respondent_id": "Respondent ID",
    # software packages, by their published names
    "cx_app": "cx-app",
    "vl_convert": "vl-convert",
}
"""The one code → plain-name table; metric keys are named by the engine's catalogue."""


def explain(term: str) -> str:
    if term in GLOSSARY:
        return GLOSSARY[term]
    metric = metric_definition(term)
    if metric is None:
        raise KeyError(f"no glossary entry for {term!r}")
    return metric.words


def glossary_entries() -> list[tuple[str, str]]:
    """The method's words, then every metric of the catalogue, each name once."""
    metrics = [d for table in (catalogue.MULTICLASS_METRICS, catalogue.BINARY_METRICS,
                               catalogue.PER_CLASS_METRICS, catalogue.OTHER_DEFINITIONS,
                               catalogue.DRIVER_DEFINITIONS) for d in table.values()]
    entries = dict(GLOSSARY)
    for metric in metrics:
        entries.setdefault(metric.name, metric.words)
    return list(entries.items())


TRACKER_HEADERS: dict[str, str] = {
    "wave": "Wave", "series": "Line", "n": "Respondents", "nps": "Estimated",
    "ci_low": "95% low", "ci_high": "95% high", "se": "Standard error",
    "realized": "Realized", "note": "Note", "alert": "Alerts", "change": "Change",
    "p": "p", "p_holm": "p (Holm)", "flag": "Significant?", "date": "Date",
}

_SPREAD_TEST = "Test of how the answers spread (χ², chi-square) and df"
COLUMN_TERMS: dict[str, str] = {"chi2": _SPREAD_TEST, "dof": _SPREAD_TEST,
                                "p_value": "p-value (p)",
                                "ci_low": "95% interval", "ci_high": "95% interval",
                                "psi": "Drift"}
"""Only keys that mean one thing in every table (not ``level``: drift or reduction)."""


def plain_name(code: object) -> str:
    """
    >>> plain_name("impute_indicator"), plain_name("f1_macro"), plain_name("max_iter")
    ("Keep; models fill with the training median (the support vector machine and ordinal logistic regression also add a 'was missing' flag)", 'F1 (macro, mean of per-class F1)', 'max iter')
    """
    text = str(code)
    if text in PLAIN_NAMES:
        return PLAIN_NAMES[text]
    metric = metric_definition(text)
    return metric.name if metric is not None else text.replace("_", " ")


def survey_labels(schema: SurveySchema) -> dict[str, str]:
    """Each column identifier → what a person reads (an attribute's label, else the header)."""
    specs = [schema.target, *schema.segments,
             *(s for s in (schema.respondent_id, schema.weight) if s is not None)]
    return {**{s.name: s.column for s in specs},
            **{a.name: a.display for a in schema.attributes}}


def column_help(column: object) -> str | None:
    if not isinstance(column, str):
        return None
    if column in COLUMN_TERMS:
        return GLOSSARY[COLUMN_TERMS[column]]
    metric = metric_definition(column)
    return metric.words if metric is not None else None


def grouping_name(options: Sequence[str], names: Sequence[str] | None = None) -> str:
    """
    >>> grouping_name(["S", "S"])
    'Strict grouping'
    >>> grouping_name(["S", "RS"], ["detractors", "others"])
    'grouping: detractors Strict, others Hybrid'
    """
    words = [GROUPING_OPTIONS[o].name if o in GROUPING_OPTIONS else str(o) for o in options]
    if len(set(words)) <= 1:
        return f"{words[0]} grouping" if words else "grouping"
    labels = list(names) if names is not None else [f"group {i + 1}" for i in range(len(words))]
    return "grouping: " + ", ".join(f"{n} {w}" for n, w in zip(labels, words, strict=True))


def auc_reading(model: str, auc: float, random_auc: float) -> str:
    """An AUC against its own random-selection area, below 0.5 whenever there is IM.

    >>> auc_reading("lr", 0.31, 0.21)
    'lr: AUC 0.310 against 0.210 for random selection with the same end point: better than chance (1.48× the random area).'
    """
    head = f"{model}: AUC {auc:.3f} against {random_auc:.3f} for random selection with the " \
           "same end point: "
    if not (random_auc > 0) or auc != auc:
        return head + "no comparison possible (the curve never reaches a positive)."
    ratio = auc / random_auc
    if ratio > 1.05:
        return head + f"better than chance ({ratio:.2f}× the random area)."
    if ratio < 0.95:
        return head + f"worse than chance ({ratio:.2f}× the random area)."
    return head + "about as good as chance."
