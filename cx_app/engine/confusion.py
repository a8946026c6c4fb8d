"""Confusion matrices and their multiclass metrics (MATH.md §1–§2, §4).

``counts[i, j]`` = weight of respondents of **actual** ``labels[i]``, **predicted** ``labels[j]``;
counts may be real-valued (ALP, MATH.md §8) and are never rounded. Undefined ratios and label
matching: the conventions of docs/engine.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cx_app.engine.catalogue import MULTICLASS_ALL
from cx_app.errors import AnalysisError
from cx_app.json_values import plain

Label = Hashable

__all__ = [
    "ConfusionMatrix",
    "MulticlassMetrics",
    "confusion_matrix",
    "format_labels",
    "LabelLookup",
    "labels_to_indices",
    "multiclass_metrics",
    "normalize_labels",
    "plain",
]


# --- labels -----------------------------------------------------------------------------------


def normalize_labels(labels: Iterable[Any]) -> tuple:
    """Labels as plain Python values (numpy scalars unwrapped), checked unique.

    >>> normalize_labels([np.int64(1), 2])
    (1, 2)
    """
    out = tuple(plain(v) for v in labels)
    if dupes := [v for v, n in Counter(out).items() if n > 1]:
        raise ValueError(f"labels must be unique, repeated: {dupes}")
    return out


class LabelLookup:
    """Find a value's position among labels, by value and by ``str()``.

    A value matches a label if it equals it (``7 == 7.0``) or if their ``str()`` are equal
    (``"7"`` and ``7``). When two different labels have the same ``str()`` (``7`` and ``"7"``),
    the ``str()`` rule is ambiguous and is not used for them: only exact values match.
    """

    def __init__(self, labels: Sequence[Any]) -> None:
        self.labels = tuple(labels)
        self._by_value: dict[Any, int] = {}
        by_str: dict[str, int] = {}
        clashes: set[str] = set()
        for i, lab in enumerate(self.labels):
            self._by_value[lab] = i
            key = str(lab)
            if key in by_str and by_str[key] != i:
                clashes.add(key)
            by_str[key] = i
        self._by_str = {k: i for k, i in by_str.items() if k not in clashes}

    def find(self, value: Any) -> int | None:
        value = plain(value)
        try:
            if value in self._by_value:
                return self._by_value[value]
        except TypeError:  # unhashable
            return None
        return self._by_str.get(str(value))


def labels_to_indices(values: Any, labels: Sequence[Any], *, what: str = "values") -> np.ndarray:
    """Positions of ``values`` in ``labels`` (rule of :class:`LabelLookup`); AnalysisError
    listing the values that are not labels, with their counts."""
    arr = np.asarray(values).reshape(-1)
    if arr.size == 0:
        return np.zeros(0, dtype=np.intp)
    fast = _consecutive_int_positions(arr, labels)
    if fast is not None:
        return fast
    table = LabelLookup(labels)
    try:
        uniq, inverse = np.unique(arr, return_inverse=True)
    except TypeError:  # mixed types that numpy cannot sort
        uniq_list = list(dict.fromkeys(arr.tolist()))
        pos = {v: k for k, v in enumerate(uniq_list)}
        uniq = np.array(uniq_list, dtype=object)
        inverse = np.array([pos[v] for v in arr.tolist()], dtype=np.intp)
    found = [table.find(v) for v in uniq]
    unknown = [k for k, i in enumerate(found) if i is None]
    if unknown:
        counts = np.bincount(inverse, minlength=len(uniq))
        shown = ", ".join(f"{plain(uniq[k])!r} ({counts[k]}×)" for k in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise AnalysisError(f"{what}: {shown}{more} not among the classes {format_labels(labels)}")
    return np.asarray(found, dtype=np.intp)[inverse]


def _consecutive_int_positions(arr: np.ndarray, labels: Sequence[Any]) -> np.ndarray | None:
    """Fast path, O(n): integer values against labels lo, lo+1, ..., all present."""
    if arr.dtype.kind not in "iu" or not labels:
        return None
    lo = labels[0]
    if not all(type(v) is int for v in labels) or list(labels) != list(range(lo, lo + len(labels))):
        return None
    pos = arr.astype(np.intp) - lo
    if pos.min() < 0 or pos.max() >= len(labels):
        return None  # let the general path name the unknown values
    return pos


def format_labels(labels: Sequence[Any]) -> str:
    """Labels for a message: a run of consecutive integers as ``0..10``, else a list.

    >>> format_labels(range(11))
    '0..10'
    """
    labs = list(labels)
    if (
        len(labs) > 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in labs)
        and labs == list(range(labs[0], labs[0] + len(labs)))
    ):
        return f"{labs[0]}..{labs[-1]}"
    return ", ".join(str(v) for v in labs)


# --- the matrix -------------------------------------------------------------------------------


def _as_counts(counts: Any, size: int | None = None) -> np.ndarray:
    arr = np.array(counts)  # a copy: callers keep their array
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        arr = arr.astype(float)
    if arr.dtype.kind == "u":
        arr = arr.astype(np.int64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"a confusion matrix must be square, got shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        raise ValueError(f"{size} labels but a {arr.shape[0]}×{arr.shape[1]} matrix")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("confusion matrix counts must be finite numbers")
    if np.any(arr < 0):
        raise ValueError("confusion matrix counts must not be negative")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class ConfusionMatrix:
    """A K×K confusion matrix: ``counts[i, j]`` = actual ``labels[i]``, predicted ``labels[j]``.

    ``counts`` is kept read-only, with its integer or float dtype (never rounded).
    """

    labels: tuple
    counts: np.ndarray

    def __post_init__(self) -> None:
        labels = normalize_labels(self.labels)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "counts", _as_counts(self.counts, len(labels)))


def confusion_matrix(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any], sample_weight: Any = None
) -> ConfusionMatrix:
    """Count (actual, predicted) pairs over the fixed class list ``labels`` (every label keeps
    its row and column); with ``sample_weight`` the counts are weight sums (float).

    >>> confusion_matrix([0, 1, 1], [1, 1, 0], labels=[0, 1, 2]).counts.tolist()
    [[0, 1, 0], [1, 1, 0], [0, 0, 0]]
    """
    labels = normalize_labels(labels)
    k = len(labels)
    if k == 0:
        raise ValueError("labels must not be empty")
    t = labels_to_indices(y_true, labels, what="actual classes (y_true)")
    p = labels_to_indices(y_pred, labels, what="predicted classes (y_pred)")
    if len(t) != len(p):
        raise ValueError(f"y_true has {len(t)} values but y_pred has {len(p)}")
    flat = t * k + p
    if sample_weight is None:
        counts = np.bincount(flat, minlength=k * k).astype(np.int64)
    else:
        w = np.asarray(sample_weight, dtype=float).reshape(-1)
        if len(w) != len(t):
            raise ValueError(f"sample_weight has {len(w)} values but y_true has {len(t)}")
        counts = np.bincount(flat, weights=w, minlength=k * k)
    return ConfusionMatrix(labels, counts.reshape(k, k))


# --- multiclass metrics -----------------------------------------------------------------------


def _ratio(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """num/den with 0 where den == 0; also the mask of undefined entries."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    undefined = den == 0
    out = np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=~undefined)
    return out, undefined


@dataclass(frozen=True, eq=False)
class MulticlassMetrics:
    """Per-class arrays (following ``labels``) and averaged metrics of a K×K or M×M+IM matrix
    (Table 3 / Table 4)."""

    labels: tuple
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray
    im: np.ndarray | None
    support: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    accuracy: float
    precision_macro: float
    recall_macro: float
    f1_macro: float
    f1_of_macro_pr: float
    precision_micro: float
    recall_micro: float
    undefined: dict = field(default_factory=dict)

    def per_class(self) -> dict:
        keys = ("tp", "fp", "fn", "tn", "precision", "recall", "f1", "support")
        keys += ("im",) if self.im is not None else ()
        return {lab: {k: plain(getattr(self, k)[i]) for k in keys}
                for i, lab in enumerate(self.labels)}

    def to_dict(self) -> dict:
        return {**{k: getattr(self, k) for k in MULTICLASS_ALL}, "per_class": self.per_class(),
                "undefined": {k: list(v) for k, v in self.undefined.items()}}


def multiclass_metrics(
    counts_or_cm: ConfusionMatrix | Any,
    *,
    im: Any = None,
    labels: Sequence[Any] | None = None,
) -> MulticlassMetrics:
    """Multiclass metrics of a confusion matrix (MATH.md §2), or of a reduced M×M+IM (§4).

    ``counts_or_cm``: a :class:`ConfusionMatrix` or a square array (``labels`` default to
    0..K−1). ``im``: the IM vector of a reduced level (TP on the diagonal), or None. Per class
    TN = N − TP − FP − FN − IM and support = TP + FN + IM; F1 = 2·TP/(n_actual + n_predicted).
    """
    if isinstance(counts_or_cm, ConfusionMatrix):
        c = counts_or_cm.counts
        labs = counts_or_cm.labels
    else:
        c = _as_counts(counts_or_cm)
        labs = normalize_labels(range(c.shape[0]) if labels is None else labels)
        if len(labs) != c.shape[0]:
            raise ValueError(f"{len(labs)} labels but a {c.shape[0]}×{c.shape[0]} matrix")
    k = c.shape[0]
    im_arr = None if im is None else np.asarray(im)
    if im_arr is not None and im_arr.shape != (k,):
        raise ValueError(f"im must have {k} values, got shape {im_arr.shape}")
    if im_arr is not None and np.any(im_arr < 0):
        raise ValueError("IM counts must not be negative")
    im_calc = np.zeros(k, dtype=c.dtype) if im_arr is None else im_arr
    tp = np.diagonal(c).copy()
    n_actual = c.sum(axis=1) + im_calc
    n_pred = c.sum(axis=0) + im_calc
    fn = n_actual - tp - im_calc
    fp = n_pred - tp - im_calc
    n = c.sum() + im_calc.sum()
    tn = n - tp - fp - fn - im_calc
    precision, p_undef = _ratio(tp, n_pred)
    recall, r_undef = _ratio(tp, n_actual)
    f1, f_undef = _ratio(2 * tp, n_actual + n_pred)
    accuracy, acc_undef = _ratio(tp.sum(), n)
    pm = float(precision.mean())
    rm = float(recall.mean())
    f1pr, f1pr_undef = _ratio(2 * pm * rm, pm + rm)
    overall = []
    if acc_undef:
        overall += ["accuracy", "precision_micro", "recall_micro"]
    if f1pr_undef:
        overall.append("f1_of_macro_pr")
    undefined = {
        "precision": tuple(labs[i] for i in np.flatnonzero(p_undef)),
        "recall": tuple(labs[i] for i in np.flatnonzero(r_undef)),
        "f1": tuple(labs[i] for i in np.flatnonzero(f_undef)),
        "overall": tuple(overall),
    }
    acc = float(accuracy)
    return MulticlassMetrics(
        labels=labs,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        im=None if im_arr is None else im_arr.copy(),
        support=n_actual,
        precision=precision,
        recall=recall,
        f1=f1,
        accuracy=acc,
        precision_macro=pm,
        recall_macro=rm,
        f1_macro=float(f1.mean()),
        f1_of_macro_pr=float(f1pr),
        precision_micro=acc,
        recall_micro=acc,
        undefined=undefined,
    )
