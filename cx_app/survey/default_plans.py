"""The default reduction plan of every target scale (the convention is in ``docs/scales.md``).

>>> [[g.members for g in s.groups] for s in default_plan("custom", (1, 6))][0]
[(1, 2), (3, 4), (5, 6)]
>>> default_plan("custom", (0, 1))
()
"""

from __future__ import annotations

from collections.abc import Sequence

from cx_app.engine.plan import NPS_PLAN, StepSpec, parse_plan

_NAMED = {
    (1, 5): (("dissatisfied", "neutral", "satisfied"), ((1, 2), (3,), (4, 5))),
    (1, 7): (("low", "neutral", "high"), ((1, 2, 3), (4,), (5, 6, 7))),
}


def _groups_step(name: str, groups: Sequence[tuple[str, Sequence[int | str]]], option: str,
                 positive: str | None = None) -> dict:
    step: dict = {
        "name": name,
        "groups": [{"name": g, "members": list(m), "option": option} for g, m in groups],
    }
    if positive is not None:
        step["positive"] = positive
    return step


def boxes(lo: int, hi: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(bottom box, middle, top box) of a scale lo..hi with at least 3 points.

    >>> boxes(1, 10)
    ((1, 2, 3, 4), (5, 6), (7, 8, 9, 10))
    >>> boxes(-2, 2)
    ((-2, -1), (0,), (1, 2))
    """
    points = tuple(range(lo, hi + 1))
    k = len(points)
    if k < 3:
        raise ValueError(f"a scale {lo}..{hi} has fewer than 3 points: no bottom/middle/top")
    width = 1 if k % 2 else 2
    start = (k - width) // 2
    return points[:start], points[start:start + width], points[start + width:]


def default_plan(kind: str, scale: object) -> tuple[StepSpec, ...]:
    """The default reduction plan for a target scale (a ``Scale`` or a (min, max) pair).

    >>> [(g.name, g.members) for g in default_plan("custom", (0, 10))[0].groups]
    [('low', (0, 1, 2, 3, 4)), ('middle', (5,)), ('high', (6, 7, 8, 9, 10))]
    """
    lo, hi = (scale.min, scale.max) if hasattr(scale, "min") else scale  # type: ignore[union-attr]
    if (lo, hi) == (0, 10) and kind == "nps":
        return NPS_PLAN.plan
    if hi - lo + 1 < 3:
        return ()
    fallback = (("bottom_box", "middle", "top_box"), boxes(lo, hi))
    if (lo, hi) == (0, 10) and kind == "custom":  # symmetric: no NPS cut points (issue 37)
        fallback = (("low", "middle", "high"), boxes(lo, hi))
    names, members = _NAMED.get((lo, hi), fallback)
    three = list(zip(names, members, strict=True))
    two = [(f"{names[0]}_{names[1]}", [names[0], names[1]]), (names[2], [names[2]])]
    positive = names[2]
    if names[0] == "low" and (lo, hi) == (0, 10):  # as the NPS plan: low against the rest
        positive = f"{names[1]}_{names[2]}"
        two = [(names[0], [names[0]]), (positive, [names[1], names[2]])]
    spec = parse_plan(
        [_groups_step("3x3+IM", three, "R"), _groups_step("2x2+IM", two, "S", positive)],
        source=f"default plan for scale {lo}-{hi}",
    )
    return spec.plan
