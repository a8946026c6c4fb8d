"""Resolving a reduction plan against a class list (MATH.md §3–§5).

Each :class:`ResolvedStep` carries its cell classification **in original class space**:
``group_of[c]`` (the group of original class ``c``), ``tp_mask[i, j]`` and ``im_mask[i, j]``
(cell actual ``i``, predicted ``j`` is a TP, or an intragroup mismatch, of its group); every
other cell lies between two groups. The masks follow eq. (20) step by step (docs/engine.md,
"How reduction works"), so reducing any matrix is ``Gᵀ (C ⊙ ¬IM) G`` plus the row sums of
``C ⊙ IM`` per group (:meth:`ResolvedStep.reduce`). Plan members match labels by value or by
``str()`` (:class:`~cx_app.engine.confusion.LabelLookup`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cx_app.engine.confusion import LabelLookup, format_labels, normalize_labels
from cx_app.engine.plan import GroupSpec, PlanSpec, StepSpec
from cx_app.errors import PlanError
from cx_app.safe_text import plain_text

__all__ = ["GroupedClass", "ResolvedPlan", "ResolvedStep", "resolve_plan"]


@dataclass(frozen=True)
class GroupedClass:
    """A grouped class (G, H) of one step (eq. 4).

    ``members``: labels of the previous level in the plan's order (ties in the ROC's descent go
    to the first); ``covers``: the original classes it covers; ``tp_pairs``: the (actual member,
    predicted member) pairs between different members that count as TP.
    """

    name: str
    option: str
    members: tuple
    member_indices: tuple[int, ...]
    covers: tuple
    tp_pairs: tuple[tuple[Any, Any], ...]


@dataclass(frozen=True, eq=False)
class ResolvedStep:
    """One resolved reduction step; see the module docstring for the masks."""

    name: str
    index: int  # 1 for the first step (level 0 is the original matrix)
    labels: tuple[str, ...]
    groups: tuple[GroupedClass, ...]
    positive: str | None
    positive_is_default: bool
    previous_labels: tuple
    group_of: np.ndarray  # (K,) int
    tp_mask: np.ndarray  # (K, K) bool
    im_mask: np.ndarray  # (K, K) bool

    @property
    def size(self) -> int:
        return len(self.groups)

    @property
    def membership(self) -> np.ndarray:
        """K×M one-hot matrix: ``membership[c, a] = 1`` when class c is in group a."""
        return np.eye(len(self.groups), dtype=np.int64)[self.group_of]

    @property
    def positive_index(self) -> int | None:
        return None if self.positive is None else self.labels.index(self.positive)

    def reduce(self, counts: Any) -> tuple[np.ndarray, np.ndarray]:
        """Reduce an original-space matrix (K×K, or a stack ``(..., K, K)``) to this step.

        Returns ``(matrix, im)``: the M×M matrix with TP on the diagonal and the length-M IM
        vector (stacked alike). Integer counts stay integer; real-valued counts stay real.
        """
        c = np.asarray(counts)
        k = len(self.group_of)
        if c.shape[-2:] != (k, k):
            raise ValueError(f"expected a {k}×{k} matrix, got shape {c.shape}")
        g = self.membership.astype(c.dtype if c.dtype.kind in "iuf" else float)
        not_im = np.where(self.im_mask, 0, c)
        matrix = np.einsum("...ij,ia,jb->...ab", not_im, g, g)
        im = np.where(self.im_mask, c, 0).sum(axis=-1) @ g
        return matrix, im


@dataclass(frozen=True, eq=False)
class ResolvedPlan:
    """A plan checked against a class list: the original classes and the resolved steps."""

    classes: tuple
    steps: tuple[ResolvedStep, ...]

    def step(self, which: int | str) -> ResolvedStep:
        """A step by position (``-1`` = last; 0 = first step) or by name."""
        if isinstance(which, str):
            for s in self.steps:
                if s.name == which:
                    return s
            raise PlanError(
                f"no plan step named '{which}' (steps: {', '.join(s.name for s in self.steps)})"
            )
        if not self.steps:
            raise PlanError("the plan has no reduction steps")
        try:
            return self.steps[which]
        except IndexError:
            raise PlanError(
                f"plan step {which} does not exist (the plan has {len(self.steps)} steps)"
            ) from None

    def level_labels(self, level: int) -> tuple:
        """Labels of level ``level`` (0 = original classes, k = step k's groups)."""
        return self.classes if level == 0 else self.steps[level - 1].labels

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``results.json`` keeps it (``provenance.plan``)."""
        return {"classes": list(self.classes), "steps": [
            {"name": s.name, "positive": s.positive, "positive_is_default": s.positive_is_default,
             "groups": [{"name": g.name, "option": g.option, "members": list(g.members),
                         "covers": list(g.covers), "tp_pairs": [list(p) for p in g.tp_pairs]}
                        for g in s.groups]} for s in self.steps]}

    @classmethod
    def from_dict(cls, data: Any) -> ResolvedPlan:
        """The plan of :meth:`to_dict`, resolved again; ValueError when it does not resolve."""
        if isinstance(data, cls):
            return data
        try:
            steps = [StepSpec(name=s["name"], groups=[GroupSpec(
                name=g["name"], option=g["option"], members=g["members"],
                tp_pairs=g.get("tp_pairs", ()) if g["option"] == "RS" else None)
                for g in s["groups"]], positive=None if s.get("positive_is_default") else
                s.get("positive")) for s in data["steps"]]
            # the members were made plain text (GroupSpec): the classes they name are too
            classes = [plain_text(c) if isinstance(c, str) else c for c in data["classes"]]
            return resolve_plan(steps, classes)
        except (KeyError, TypeError, ValueError, PlanError) as exc:
            why = exc.errors()[0]["msg"] if hasattr(exc, "errors") else exc
            raise ValueError(f"not a plan resolved against its classes ({why})") from None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        # a field typed ResolvedPlan reads and writes the to_dict() document
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            cls.from_dict, serialization=core_schema.plain_serializer_function_ser_schema(
                lambda plan: plan.to_dict()))


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _member_pairs(
    group: Any, where: str, idx: list[int], lookup: LabelLookup, prev_labels: tuple
) -> set[tuple[int, int]]:
    """TP pairs (previous-level indices, actual ≠ predicted) of one group."""
    if group.option == "R":
        return {(i, j) for i in idx for j in idx if i != j}
    if group.option == "S":
        return set()
    if group.tp_rule == "predicted_ge_actual":
        return {(i, j) for i in idx for j in idx if j > i}
    if group.tp_rule == "predicted_le_actual":
        return {(i, j) for i in idx for j in idx if j < i}
    pairs = set()
    for pair in group.tp_pairs or ():
        found = []
        for value in pair:
            i = lookup.find(value)
            if i is None or i not in idx:
                raise PlanError(
                    f"{where}: tp_pairs entry [{_show(pair[0])}, {_show(pair[1])}]: "
                    f"{_show(value)} is not a member of this group "
                    f"(members: {format_labels([prev_labels[m] for m in idx])})"
                )
            found.append(i)
        if found[0] != found[1]:
            pairs.add((found[0], found[1]))
    return pairs


def _resolve_step(
    step: StepSpec,
    index: int,
    prev_labels: tuple,
    prev_group_of: np.ndarray,
    prev_tp: np.ndarray,
    prev_im: np.ndarray,
    classes: tuple,
) -> ResolvedStep:
    lookup = LabelLookup(prev_labels)
    m_prev = len(prev_labels)
    owner = np.full(m_prev, -1)
    member_idx: list[list[int]] = []
    names = [g.name for g in step.groups]  # unique: StepSpec checked them
    if "IM" in names:
        raise PlanError(
            f"plan step '{step.name}': 'IM' is reserved for the intragroup-mismatch row and "
            "column; rename that group"
        )
    for a, group in enumerate(step.groups):
        where = f"plan step '{step.name}', group '{group.name}'"
        idx: list[int] = []
        for member in group.members:
            i = lookup.find(member)
            if i is None:
                raise PlanError(
                    f"{where}: member {_show(member)} is not a class of this level "
                    f"(classes: {format_labels(prev_labels)})"
                )
            if i in idx:
                raise PlanError(f"{where}: member {_show(member)} is listed twice")
            if owner[i] != -1:
                raise PlanError(
                    f"plan step '{step.name}': class {_show(prev_labels[i])} is in groups "
                    f"'{step.groups[owner[i]].name}' and '{group.name}'"
                )
            owner[i] = a
            idx.append(i)
        member_idx.append(idx)
    missing = [prev_labels[i] for i in np.flatnonzero(owner == -1)]
    if missing:
        shown = ", ".join(_show(v) for v in missing)
        raise PlanError(
            f"plan step '{step.name}': "
            + (f"class {shown} is" if len(missing) == 1 else f"classes {shown} are")
            + " in no group"
        )

    # TP pairs between different members, in previous-level index space.
    pair_tp = np.zeros((m_prev, m_prev), dtype=bool)
    groups = []
    for a, group in enumerate(step.groups):
        where = f"plan step '{step.name}', group '{group.name}'"
        pairs = _member_pairs(group, where, member_idx[a], lookup, prev_labels)
        for i, j in pairs:
            pair_tp[i, j] = True
        covers_mask = owner[prev_group_of] == a
        groups.append(
            GroupedClass(
                name=group.name,
                option=group.option,
                members=tuple(prev_labels[i] for i in member_idx[a]),
                member_indices=tuple(member_idx[a]),
                covers=tuple(classes[c] for c in np.flatnonzero(covers_mask)),
                tp_pairs=tuple((prev_labels[i], prev_labels[j]) for i, j in sorted(pairs)),
            )
        )

    # Eq. (20) in original class space: same previous member → keep its classification;
    # different members of the same new group → TP if the pair is TP, else IM.
    group_of = owner[prev_group_of]
    same_prev = prev_group_of[:, None] == prev_group_of[None, :]
    same_new = group_of[:, None] == group_of[None, :]
    cross_tp = pair_tp[prev_group_of[:, None], prev_group_of[None, :]]
    tp_mask = np.where(same_prev, prev_tp, same_new & cross_tp)
    im_mask = np.where(same_prev, prev_im, same_new & ~cross_tp)
    for arr in (group_of, tp_mask, im_mask):
        arr.setflags(write=False)

    positive, default = step.positive, False
    if positive is None and len(step.groups) == 2:
        positive, default = step.groups[1].name, True
    return ResolvedStep(
        name=step.name,
        index=index,
        labels=tuple(names),
        groups=tuple(groups),
        positive=positive,
        positive_is_default=default,
        previous_labels=prev_labels,
        group_of=group_of,
        tp_mask=tp_mask,
        im_mask=im_mask,
    )


def resolve_plan(
    plan: PlanSpec | Sequence[StepSpec], classes: Sequence[Any] | None = None
) -> ResolvedPlan:
    """Check a plan against the original classes and resolve every step (MATH.md §3–§5).

    ``classes`` defaults to ``plan.classes``; when both are given they must agree. A
    :class:`PlanError` names the step and group at fault. A 2-group step without ``positive``
    gets its second group as positive (``positive_is_default=True``).
    """
    steps, plan_classes = (plan.steps, plan.classes) if isinstance(plan, PlanSpec) else (
        tuple(plan), None)
    if classes is None:
        if plan_classes is None:
            raise PlanError("the plan has no 'classes' and none were given")
        classes = plan_classes
    classes = normalize_labels(classes)
    if plan_classes is not None:
        lookup = LabelLookup(classes)
        found = [lookup.find(c) for c in plan_classes]
        if len(plan_classes) != len(classes) or found != list(range(len(classes))):
            raise PlanError(
                f"the plan's classes ({format_labels(plan_classes)}) differ from the "
                f"data's classes ({format_labels(classes)})"
            )
    k = len(classes)
    if k < 2:
        raise PlanError(f"at least 2 classes are needed, got {format_labels(classes)}")
    prev_labels: tuple = classes
    prev_group_of = np.arange(k)
    prev_tp = np.eye(k, dtype=bool)
    prev_im = np.zeros((k, k), dtype=bool)
    resolved = []
    for n, step in enumerate(steps, start=1):
        if not isinstance(step, StepSpec):
            step = StepSpec.model_validate(step)
        rs = _resolve_step(step, n, prev_labels, prev_group_of, prev_tp, prev_im, classes)
        resolved.append(rs)
        prev_labels, prev_group_of = rs.labels, rs.group_of
        prev_tp, prev_im = rs.tp_mask, rs.im_mask
    return ResolvedPlan(classes=classes, steps=tuple(resolved))
