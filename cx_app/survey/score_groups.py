"""Net-score groups in words and chosen by the analyst: the symmetric split, own cut points.

:func:`groups_between` builds the groups an analyst chooses on the Net score page or with
``cx-app nps --low-up-to N --high-from M``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cx_app.errors import PlanError
from cx_app.survey.nps import NPS_GROUPS, NetScoreGroups, symmetric_groups
from cx_app.survey.vocabulary import vocabulary

if TYPE_CHECKING:
    from cx_app.survey.schema import SurveySchema


def groups_between(classes: Sequence[int], low_up_to: int, high_from: int,
                   names: Sequence[str] = ("low", "middle", "high")) -> NetScoreGroups:
    """The groups an analyst chooses: scores up to ``low_up_to`` negative, from ``high_from``
    positive, the rest neutral.

    >>> g = groups_between(range(11), 3, 8)
    >>> sorted(g.negative), sorted(g.neutral), sorted(g.positive)
    ([0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10])
    """
    classes = tuple(int(c) for c in classes)
    if low_up_to >= high_from:
        raise PlanError(f"the {names[0]} scores (up to {low_up_to}) must end below the "
                        f"{names[2]} scores (from {high_from})")
    negative, neutral, positive = names
    return NetScoreGroups(classes, frozenset(c for c in classes if c >= high_from),
                          frozenset(c for c in classes if c <= low_up_to), positive, neutral,
                          negative)


def score_span(scores: frozenset[int]) -> str:
    """A group's scores as written: a run as "0–6", others listed, an empty group "none".

    >>> score_span(frozenset({0, 1, 2})), score_span(frozenset({5})), score_span(frozenset({1, 3}))
    ('0–2', '5', '1, 3')
    """
    ordered = sorted(scores)
    if not ordered:
        return "none"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return str(ordered[0]) if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(map(str, ordered))


def describe_groups(groups: NetScoreGroups) -> str:
    """The groups in words, negative first: "low 0–4, middle 5, high 6–10".

    >>> describe_groups(NPS_GROUPS)
    'detractors 0–6, passives 7–8, promoters 9–10'
    """
    return ", ".join(f"{name} {score_span(scores)}" for name, scores in zip(
        groups.names, (groups.negative, groups.neutral, groups.positive), strict=True))


def groups_note(schema: SurveySchema, groups: NetScoreGroups) -> str:
    """Where the schema's ``groups`` come from, in one sentence."""
    words = vocabulary(schema)
    stated = describe_groups(groups)
    if words.is_nps:
        return f"Groups: {stated} (the NPS cut points of a recommend question)."
    if len(groups.classes) >= 3 and groups == symmetric_groups(groups.classes, groups.names):
        why = (" (not a recommend question: the cut points 0–6 and 9–10 are kept for "
               "recommend questions)" if groups.classes == NPS_GROUPS.classes else "")
        return f"Groups: {stated}, a symmetric split around the middle of the scale{why}."
    return f"Groups: {stated}, from the survey's grouping plan."
