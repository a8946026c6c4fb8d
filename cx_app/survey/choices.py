"""Answers exported as choice text read as ordinal scores, and "not an answer" texts as gaps.

The rules are in ``docs/platform-exports.md`` ("Answers"), the vocabulary in
``data/answer_scales.yaml``. A column is converted only when every answer in it is read one of
these ways and at least one is a choice text: plain numeric columns, and text columns of other
words (brands, comments), are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict

from cx_app.survey.distinct import on_distinct

_NUMBERED = re.compile(r"\s*(-?\d+)\s*(?:[-–—:=.)]\s+[^\W\d_].*)?\s*")
"""A choice text that starts with its number, a separator and a space, then a word:
``"0 - Not at all likely"``, ``"10 = Extremely likely"``, ``"7"`` (not ``"2026-Q1"``)."""


class AnswerVocabulary(BaseModel):
    """The data file's content: gap texts and ordered scales (levels of synonyms)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    not_an_answer: tuple[str, ...]
    scales: dict[str, tuple[tuple[str, ...], ...]]


class ChoiceScores(BaseModel):
    """A column's choice texts read as scores (``codes``: the score as text, None for a gap)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    codes: pd.Series
    scale: str
    gaps: int
    gap_texts: tuple[str, ...]


MAX_DISTINCT_CHOICES = 200
"""More distinct texts than this and a column is not one of choice texts: the longest scale
(0–10, each number also written with its label) and every "no answer" text in a few spellings
stay far below it. Reading the 200,000 distinct ids of a large file as choices cost 0.9 s."""


def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).casefold()


@cache
def vocabulary() -> AnswerVocabulary:
    """The answer vocabulary, read once from ``data/answer_scales.yaml`` (texts folded)."""
    raw = yaml.safe_load(resources.files("cx_app.survey").joinpath(
        "data/answer_scales.yaml").read_text(encoding="utf-8"))
    return AnswerVocabulary(
        not_an_answer=tuple(_fold(t) for t in raw["not_an_answer"]),
        scales={name: tuple(tuple(_fold(t) for t in level) for level in levels)
                for name, levels in raw["scales"].items()})


def is_not_an_answer(text: str) -> bool:
    """Whether a text means "no answer".

    >>> is_not_an_answer("Don’t know"), is_not_an_answer("Very satisfied")
    (True, False)
    """
    return _fold(text) in vocabulary().not_an_answer


def _scale_of(texts: set[str]) -> tuple[str, dict[str, int]] | None:
    """The first scale holding every text, no two of them on one level (a 7-point scale's
    "Disagree" and "Somewhat disagree" are two answers), and each text's position."""
    for name, levels in vocabulary().scales.items():
        position = {t: i + 1 for i, level in enumerate(levels) for t in level}
        if texts <= position.keys() and len({position[t] for t in texts}) == len(texts):
            return name, position
    return None


_RATING_WORDS = frozenset({
    "not", "very", "extremely", "completely", "totally", "highly", "slightly", "somewhat",
    "fairly", "quite", "moderately", "important", "unimportant", "bad", "good", "better",
    "worse", "best", "worst", "ok", "okay", "yes", "no", "low", "medium", "high", "never",
    "rarely", "sometimes", "often", "always"})
"""Words of a rating or a yes/no answer beyond the vocabulary's scales ("Not at all
important", "Low"): value labels holding one label points of a scale, not categories."""


@cache
def _rating_words() -> frozenset[str]:
    return _RATING_WORDS | {w for levels in vocabulary().scales.values() for level in levels
                            for text in level for w in re.findall(r"[^\W\d_]+", text)}


def names_categories(labels: Iterable[str]) -> bool:
    """Whether an SPSS/Stata variable's value labels name categories (stores, regions,
    channels: a segment's values) rather than the points of a rating: at least two labels, not
    a known answer scale, none a number or numbered ("1 - Poor") or holding a rating word; age
    bands ("18-24", "65+") are categories.

    >>> names_categories(["Athens", "Patras", "Volos"]), names_categories(["North", "South"])
    (True, True)
    >>> names_categories(["Poor", "Fair", "Good", "Very good", "Excellent"])
    False
    >>> names_categories(["1 - Not at all important", "5 - Extremely important"])
    False
    >>> names_categories(["18-24", "25-34", "35-54", "55+"]), names_categories(["1", "2", "3"])
    (True, False)
    """
    texts = [_fold(str(t)) for t in labels]
    if len(texts) < 2 or score_choices(pd.Series(texts)) is not None:
        return False
    return not any(_NUMBERED.fullmatch(t) or set(re.findall(r"[^\W\d_]+", t)) & _rating_words()
                   for t in texts)


def score_choices(column: pd.Series) -> ChoiceScores | None:
    """The scores of a column of answer texts, or None when it is not one of choice texts.

    >>> found = score_choices(pd.Series(["Very satisfied", "Not applicable", None, "Dissatisfied"]))
    >>> found.codes.tolist(), found.scale, found.gaps
    (['5', None, None, '2'], 'satisfaction_5', 1)
    >>> score_choices(pd.Series(["0 - Not at all likely", "7", "10 - Extremely likely"])).codes.tolist()
    ['0', '7', '10']
    >>> score_choices(pd.Series(["3", "4"])) is None, score_choices(pd.Series(["Brand A"])) is None
    (True, True)
    """
    distinct = pd.Series(pd.unique(column.dropna()), dtype=object)
    if len(distinct) > MAX_DISTINCT_CHOICES:
        return None  # an id, a date, free text: no choice scale has this many answers
    folded = {str(t): _fold(str(t)) for t in distinct if str(t).strip()}
    gaps = {t for t, f in folded.items() if f in vocabulary().not_an_answer}
    numbered = {t: int(m.group(1)) for t, f in folded.items() if t not in gaps
                and (m := _NUMBERED.fullmatch(f))}
    words = {t: f for t, f in folded.items() if t not in gaps and t not in numbered}
    plain_numbers = {t for t in numbered if re.fullmatch(r"\s*-?\d+\s*", t)}
    if not folded or (not words and numbered.keys() <= plain_numbers):
        return None  # no choice text: numbers (and codes) the cleaning reads as they are
    scale = "numbered"
    if words:
        if numbered:
            return None  # numbers mixed with words of no numbered choice: not a scale
        found = _scale_of(set(words.values()))
        if found is None:
            return None
        scale, position = found
        numbered = {t: position[f] for t, f in words.items()}
    mapping = {t: str(v) for t, v in numbered.items()}

    def spread(values: pd.Series) -> list[np.ndarray]:
        return [np.array([mapping.get(str(v)) if v is not None else None for v in values],
                         dtype=object)]

    codes = on_distinct(column.astype(object).where(column.notna(), None), spread)[0]
    gap_cells = int(column.isin(list(gaps)).sum()) if gaps else 0
    return ChoiceScores(codes=pd.Series(codes, index=column.index, dtype=object),
                        scale=scale, gaps=gap_cells, gap_texts=tuple(sorted(gaps)))
