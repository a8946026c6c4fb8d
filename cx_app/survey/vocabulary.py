"""The words of a survey's net score: "NPS" with promoters and detractors only for an NPS.

The one place the app, the CLI and the reports take these words from, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cx_app.survey.schema import SurveySchema

NPS_GROUP_NAMES = ("detractors", "passives", "promoters")
SATISFACTION_GROUP_NAMES = ("dissatisfied", "neutral", "satisfied")
NEUTRAL_GROUP_NAMES = ("low", "middle", "high")


@dataclass(frozen=True)
class ScoreVocabulary:
    """The name of the net score and of its three groups (negative, neutral, positive)."""

    is_nps: bool
    score_name: str
    """In a sentence: "NPS" or "net score (top box − bottom box)"."""
    short_name: str
    """In a column header or a chart axis: "NPS" or "net score"."""
    group_names: tuple[str, str, str]

    @property
    def title(self) -> str:
        """The short name capitalised ("NPS", "Net score")."""
        return self.short_name[:1].upper() + self.short_name[1:]

    @property
    def negative(self) -> str:
        return self.group_names[0]

    @property
    def positive(self) -> str:
        return self.group_names[2]


def vocabulary_for(*, nps: bool, satisfaction: bool = False) -> ScoreVocabulary:
    """The words for an NPS or another target (``satisfaction``: kind ``csat``), from the two
    facts a results file records.

    >>> vocabulary_for(nps=False).score_name, vocabulary_for(nps=False).group_names
    ('net score (top box − bottom box)', ('low', 'middle', 'high'))
    """
    if nps:
        return ScoreVocabulary(True, "NPS", "NPS", NPS_GROUP_NAMES)
    return ScoreVocabulary(False, "net score (top box − bottom box)", "net score",
                           SATISFACTION_GROUP_NAMES if satisfaction else NEUTRAL_GROUP_NAMES)


def vocabulary(schema: SurveySchema) -> ScoreVocabulary:
    """The words of ``schema``'s net score."""
    return vocabulary_for(nps=schema.is_nps, satisfaction=schema.target.kind == "csat")
