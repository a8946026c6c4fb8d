"""Checks on a loaded model's fitted structures before compiled code indexes them (issue 24).

skops rebuilds only trusted types, but their *contents* come from the file: a decision tree whose
node 0 points at child 2,000,000,000, a split on feature 10⁹ or a KD-tree index array pointing past
its data make scikit-learn's Cython code read outside its arrays, and the process (the app's
server, shared by every analyst) dies of a segmentation fault. :func:`check_fitted_model` walks
the whole fitted object graph — wherever a structure sits (a pipeline step, a forest's trees, a
calibrated wrapper's estimators) — and checks each tree, neighbour index, booster and coefficient
array against its own sizes (an inner node's children come after it and inside the array, so no
path leaves it or loops). The CNN checks its own weights when skops rebuilds it
(:meth:`cx_app.models.cnn.CNNClassifier.__setstate__`); :mod:`cx_app.estimate.model_sandbox` is
the second defence for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from inspect import ismodule, isroutine
from typing import Any

import numpy as np

from cx_app.errors import ModelFileError

__all__ = ["check_fitted_model"]

_MAX_OBJECTS = 1_000_000
_LEAF = -1  # sklearn.tree._tree.TREE_LEAF
_SKIP = (str, bytes, bytearray, int, float, complex, bool, type(None), np.ndarray, np.generic,
         type)


class _Refused(Exception):
    """One structure that does not hold together (its description)."""


def check_fitted_model(estimator: Any, label: str) -> None:
    """Refuse (:class:`ModelFileError` naming ``label``) a fitted model any of whose trees,
    neighbour indexes, boosters or coefficient arrays does not fit its own sizes."""
    checking = "the model"
    try:
        for obj, owner in _walk(estimator):
            checking = f"a {type(obj).__name__}"
            check = _checker(obj)
            if check is not None:
                check(obj, owner)
    except _Refused as exc:
        raise ModelFileError(f"{label}: the model file is damaged or was crafted ({exc}), so it "
                             "was not used.") from None
    except Exception as exc:  # an attribute of the wrong kind: numpy, sklearn raise many
        raise ModelFileError(f"{label}: the model file is damaged or was crafted ({checking} "
                             f"cannot be checked: {type(exc).__name__}: {exc}), so it was not "
                             "used.") from None


def _walk(root: Any) -> Iterator[tuple[Any, Any]]:
    """Every object reachable from ``root`` through attributes, lists, tuples and dicts, once,
    with the object that holds it."""
    seen: set[int] = set()
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        obj, owner = stack.pop()
        if isinstance(obj, _SKIP) or id(obj) in seen or isroutine(obj) or ismodule(obj):
            continue
        seen.add(id(obj))
        if len(seen) > _MAX_OBJECTS:
            raise _Refused(f"it holds more than {_MAX_OBJECTS:,} objects")
        yield obj, owner
        if isinstance(obj, dict):
            children = list(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            children = list(obj)
        else:
            children = list(getattr(obj, "__dict__", {}).values())
        stack.extend((child, obj) for child in children)


def _checker(obj: Any) -> Callable[[Any, Any], None] | None:
    name = f"{type(obj).__module__}.{type(obj).__qualname__}"
    if name in _BY_TYPE:
        return _BY_TYPE[name]
    if not hasattr(obj, "n_features_in_"):
        return None
    from sklearn.svm._base import BaseLibSVM

    if isinstance(obj, BaseLibSVM):
        return _check_libsvm
    for attribute, check in _BY_ATTRIBUTE:
        if hasattr(obj, attribute):
            return check
    return None


def _require(condition: Any, what: str) -> None:
    if not condition:
        raise _Refused(what)


def _width(owner: Any) -> int | None:
    width = getattr(owner, "n_features_in_", None)
    return None if width is None else int(width)


# --------------------------------------------------------------------------- trees


def _check_tree(tree: Any, owner: Any) -> None:
    state = tree.__getstate__()
    nodes = state["nodes"]
    n = len(nodes)
    features = int(tree.n_features)
    _require(n >= 1 and int(state["node_count"]) == n,
             f"a decision tree counts {state['node_count']} nodes but holds {n}")
    _require(features >= 1 and int(tree.n_outputs) >= 1,
             f"a decision tree has {features} features and {tree.n_outputs} outputs")
    left, right = nodes["left_child"], nodes["right_child"]
    feature = nodes["feature"]
    leaf = left == _LEAF
    _require(np.all(right[leaf] == _LEAF), "a leaf of a decision tree has a child")
    inner = np.flatnonzero(~leaf)
    for child, side in ((left[inner], "left"), (right[inner], "right")):
        bad = np.flatnonzero((child <= inner) | (child >= n))
        _require(not bad.size, f"node {inner[bad[:1]].sum()} of a decision tree points at "
                               f"{side} child {child[bad[:1]].sum()}, which is not one of the "
                               f"nodes after it (the tree has {n})")
    bad = np.flatnonzero((feature[inner] < 0) | (feature[inner] >= features))
    _require(not bad.size, f"a decision tree splits on feature {feature[inner][bad[:1]].sum()}, "
                           f"but has {features} features")
    width = _width(owner)
    _require(width is None or width == features,
             f"a decision tree has {features} features, its estimator {width}")


def _check_ensemble(forest: Any, owner: Any) -> None:
    width = _width(forest)
    for member in forest.estimators_:
        inner = _width(member)
        _require(inner is None or width is None or inner == width,
                 f"a member of an ensemble takes {inner} features, the ensemble {width}")


def _check_binary_tree(tree: Any, owner: Any) -> None:
    data, idx, node_data, bounds = (np.asarray(a) for a in tree.get_arrays())
    state = tree.__getstate__()
    leaf_size, n_nodes, weights = int(state[4]), int(state[6]), state[12]
    kind = type(tree).__name__
    _require(data.ndim == 2 and data.shape[0] >= 1 and data.shape[1] >= 1,
             f"a {kind} holds data of shape {data.shape}")
    n, d = data.shape
    _require(idx.shape == (n,) and np.array_equal(np.sort(idx), np.arange(n)),
             f"the index array of a {kind} is not a permutation of its {n} rows")
    _require(leaf_size >= 1 and n_nodes >= 1 and node_data.shape == (n_nodes,),
             f"a {kind} counts {n_nodes} nodes but holds {node_data.shape[0]}")
    start, end = node_data["idx_start"], node_data["idx_end"]
    _require(np.all((start >= 0) & (start <= end) & (end <= n)),
             f"a node of a {kind} points at rows outside its {n} rows")
    inner = np.flatnonzero(~node_data["is_leaf"].astype(bool))
    _require(np.all(2 * inner + 2 < n_nodes),
             f"an inner node of a {kind} has children beyond its {n_nodes} nodes")
    depth = 2 if kind == "KDTree" else 1
    _require(bounds.shape == (depth, n_nodes, d),
             f"the node bounds of a {kind} have shape {bounds.shape}, not "
             f"{(depth, n_nodes, d)}")
    _require(weights is None or np.shape(weights) == (n,),
             f"the sample weights of a {kind} do not match its {n} rows")
    fit_x = getattr(owner, "_fit_X", None)
    _require(fit_x is None or np.shape(fit_x) == data.shape,
             f"a neighbours model's training data has shape {np.shape(fit_x)}, its {kind} "
             f"{data.shape}")


def _check_booster(booster: Any, owner: Any) -> None:
    import json

    features = int(booster.num_features())
    width = _width(owner)
    _require(width is None or width == features,
             f"an XGBoost booster takes {features} features, its classifier {width}")
    learner = json.loads(booster.save_config())["learner"]
    num_class = int(learner["learner_model_param"]["num_class"])
    classes = getattr(owner, "n_classes_", None)
    _require(num_class == 0 or classes is None or num_class == int(classes),
             f"an XGBoost booster has {num_class} classes, its classifier {classes}")


# --------------------------------------------------------------------------- coefficients


def _check_libsvm(svm: Any, owner: Any) -> None:
    vectors = np.asarray(svm.support_vectors_)
    counts = np.asarray(svm._n_support)
    width = _width(svm)
    _require(vectors.ndim == 2 and vectors.shape[1] in (0, width),
             f"an SVM's support vectors have shape {vectors.shape} for {width} features")
    _require(np.all(counts >= 0) and int(counts.sum()) == vectors.shape[0]
             == len(svm.support_),
             f"an SVM counts {int(counts.sum())} support vectors but holds {vectors.shape[0]}")
    k = len(counts)
    dual = np.asarray(svm._dual_coef_)
    _require(dual.shape == (max(k - 1, 1), vectors.shape[0]),
             f"an SVM's dual coefficients have shape {dual.shape}")
    pairs = max(k * (k - 1) // 2, 1)
    _require(np.shape(svm._intercept_) == (pairs,),
             f"an SVM has {np.size(svm._intercept_)} intercepts for {k} classes")
    for name in ("_probA", "_probB"):
        values = np.asarray(getattr(svm, name, np.empty(0)))
        _require(values.size in (0, pairs), f"an SVM's {name} holds {values.size} values")


def _check_linear(model: Any, owner: Any) -> None:
    coef = np.asarray(model.coef_)
    width = _width(model)
    _require(coef.ndim in (1, 2) and coef.shape[-1] == width,
             f"a linear model's coefficients have shape {coef.shape} for {width} features")
    intercept = np.asarray(getattr(model, "intercept_", 0.0))
    rows = coef.shape[0] if coef.ndim == 2 else 1
    _require(intercept.ndim == 0 or intercept.shape == (rows,),
             f"a linear model has {intercept.size} intercepts for {rows} coefficient rows")


def _check_mlp(model: Any, owner: Any) -> None:
    coefs, intercepts = list(model.coefs_), list(model.intercepts_)
    width = _width(model)
    _require(len(coefs) == len(intercepts) >= 1, "a neural network's layers do not match")
    previous = width
    for i, (w, b) in enumerate(zip(coefs, intercepts, strict=True)):
        w, b = np.asarray(w), np.asarray(b)
        _require(w.ndim == 2 and w.shape[0] == previous and b.shape == (w.shape[1],),
                 f"layer {i + 1} of a neural network has weights {w.shape} and biases "
                 f"{b.shape} after {previous} inputs")
        previous = w.shape[1]


def _check_naive_bayes(model: Any, owner: Any) -> None:
    shape = (len(model.classes_), _width(model))
    _require(np.shape(model.theta_) == shape and np.shape(model.var_) == shape,
             f"a naive Bayes model's means and variances are not {shape}")


def _check_imputer(imputer: Any, owner: Any) -> None:
    width = _width(imputer)
    _require(np.shape(imputer.statistics_) == (width,),
             f"the gap filler holds {np.size(imputer.statistics_)} medians for {width} attributes")
    indicator = getattr(imputer, "indicator_", None)
    features = np.asarray(getattr(indicator, "features_", []), dtype=np.int64)
    _require(np.all((features >= 0) & (features < width)),
             "the gap filler marks attributes it does not have")


_BY_TYPE: dict[str, Callable[[Any, Any], None]] = {
    "sklearn.tree._tree.Tree": _check_tree,
    "sklearn.neighbors._kd_tree.KDTree": _check_binary_tree,
    "sklearn.neighbors._ball_tree.BallTree": _check_binary_tree,
    "xgboost.core.Booster": _check_booster,
}
"""Structures compiled code walks, by their type."""

_BY_ATTRIBUTE: tuple[tuple[str, Callable[[Any, Any], None]], ...] = (
    ("coefs_", _check_mlp),
    ("coef_", _check_linear),
    ("theta_", _check_naive_bayes),
    ("statistics_", _check_imputer),
    ("estimators_", _check_ensemble),
)
"""Fitted estimators (with ``n_features_in_``) by the attribute that holds their arrays."""
