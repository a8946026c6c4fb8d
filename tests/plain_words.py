"""The plain-language checker of issue 27 point 7, shared by the app's, the reports' and the
CLI's tests (imported by its plain module name, like ``report_fixtures``): the snake_case
names, internal codes and algorithm ids that must not reach a reader.

The allow-list is small and explicit: the name of the file the analyst uploaded (its report
file names are built from it) is the analyst's own word, not ours.
"""

from __future__ import annotations

import re
from pathlib import Path

from cx_app.survey.samples import sample_path

SNAKE = re.compile(r"\b[a-z]+_[a-z0-9_]+\b")
INTERNAL_CODES = re.compile(
    r"\b(impute_indicator|psi|chi2|dof|f1_macro|papers preset|preset papers|p_value|"
    r"passives_promoters|ci_low|ci_high|mean_difference|model_a|model_b)\b")
"""Codes of the library that once reached a reader (issue 27): the missing-answer policy,
drift statistics' keys, metric keys, the "papers" preset, a plan's group code, data columns."""

MODEL_CODES = re.compile(r"\b(lr|svm|knn|nb|dt|rf|ann|xgb)\b")
"""Algorithm ids as model names (``lr``, ``svm papers``): a reader sees the algorithm's name
(:func:`cx_app.models.names.model_display_name`)."""

ALLOWED = {Path(sample_path("telecom_nps")).stem}
"""The uploaded file's own name (here the bundled sample's), shown as the analyst named it."""


def internal_words(texts: list[str]) -> list[str]:
    """The snake_case tokens and internal codes in ``texts`` (outside the allow-list)."""
    found = []
    for text in texts:
        for allowed in ALLOWED:
            text = text.replace(allowed, "")
        found += SNAKE.findall(text) + INTERNAL_CODES.findall(text)
    return sorted(set(found))


def model_codes(texts: list[str]) -> list[str]:
    """The algorithm ids used as model names in ``texts``."""
    return sorted({m for text in texts for m in MODEL_CODES.findall(text)})

CODE_FIRST = re.compile(r"^\W*(ALP|IMP|IMN|IM|PIMR|NIMR|PPIMR|NPIMR|PSI|χ²|chi2)(?![\w+×])")
"""A text that opens with one of the method's codes (issue 37, point 9): plain words come first,
the code after them ("estimated from the model's probabilities (ALP)")."""

BARE_ALP = re.compile(r"(?<!\()\bALP\b(?![)\w])")
"""ALP outside brackets right after its plain words: in a warning, the code is never the word
read."""

REPOSITORY_PATH = re.compile(r"\b(?:docs|cx_app|app_pages|tests|bench)/\S+|\b\w+\.(?:md|py)\b")
"""A path of the repository, which an analyst cannot open from the app."""


def code_first(texts: list[str]) -> list[str]:
    """The texts (their first line) that open with a code instead of plain words."""
    return [t for t in texts if CODE_FIRST.search(str(t).strip().splitlines()[0]
                                                  if str(t).strip() else "")]
