"""The baseline every model must beat: always answering the commonest class.

At each level of the reduction the baseline is the constant prediction with the highest
accuracy, measured by the same reduction and accuracy as the models, so "below the baseline"
compares like with like (at a reduced level a score of the largest group; under Strict
grouping the commonest score). Unweighted, over the model base, as the models' accuracies.

>>> from cx_app.engine.grouping import resolve_plan
>>> from cx_app.engine.plan import PlanSpec
>>> plan = resolve_plan(PlanSpec(classes=(0, 1, 2), plan=[]), (0, 1, 2))
>>> majority_baseline([0, 1, 1, 2, 1], plan)
{'original': {'class': 1, 'accuracy': 0.6}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cx_app.engine.confusion import ConfusionMatrix, LabelLookup
from cx_app.engine.grouping import ResolvedPlan
from cx_app.engine.levels import reduce_confusion
from cx_app.json_values import plain

__all__ = ["majority_baseline", "below_baseline"]


def _class_counts(y: Sequence[Any], classes: tuple) -> np.ndarray:
    found = map(LabelLookup(classes).find, y)
    return np.bincount([i for i in found if i is not None], minlength=len(classes)).astype(np.int64)


def majority_baseline(y: Sequence[Any], plan: ResolvedPlan) -> dict[str, dict[str, Any]]:
    """Level name → ``{"class", "accuracy"}`` of always answering the best constant class
    (a score, or a group at a reduced level; the commonest wins a tie); empty without classes."""
    classes = tuple(plan.classes)
    counts = _class_counts(y, classes)
    if counts.sum() == 0:
        return {}
    order = sorted(range(len(classes)), key=lambda i: -counts[i])  # commonest first
    best: dict[str, dict[str, Any]] = {}
    for c in order:
        matrix = np.zeros((len(classes), len(classes)), dtype=np.int64)
        matrix[:, c] = counts  # every respondent predicted as class c
        for step_index, level in enumerate(reduce_confusion(ConfusionMatrix(classes, matrix),
                                                             plan)):
            accuracy = float(level.metrics["accuracy"])
            label = (classes[c] if step_index == 0
                     else level.labels[int(plan.steps[step_index - 1].group_of[c])])
            if level.name not in best or accuracy > best[level.name]["accuracy"] + 1e-12:
                best[level.name] = {"class": plain(label), "accuracy": accuracy}
    return best


def below_baseline(accuracies: Mapping[str, float | None],
                   baseline: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The level names where a model's finite accuracy is below the baseline's.

    >>> below_baseline({"original": 0.55, "3x3+IM": 0.7},
    ...                {"original": {"class": 9, "accuracy": 0.6},
    ...                 "3x3+IM": {"class": "promoters", "accuracy": 0.65}})
    ['original']
    """
    return [name for name, accuracy in accuracies.items()
            if name in baseline and accuracy is not None and np.isfinite(accuracy)
            and accuracy < float(baseline[name]["accuracy"]) - 1e-12]
