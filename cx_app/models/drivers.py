"""Driver importance: which attributes move the score, and by how much.

Four views, each a frozen result: :func:`permutation_importance_cv` (each fold's model on its
held-out respondents, no refit), :func:`ordinal_coefficients`, :func:`relative_weights`
(Johnson 2000) and :func:`top_box_capability` (δ/φ, MATH.md §9), plus the
importance–performance quadrant (:mod:`~cx_app.models.importance_performance`).
:func:`driver_importance` runs them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from pydantic import Field, PlainSerializer, computed_field, field_serializer
from scipy import stats
from sklearn.inspection import permutation_importance

from cx_app.engine.capability import feature_delta_phi
from cx_app.errors import AnalysisError
from cx_app.json_values import plain_document
from cx_app.models import cluster
from cx_app.models.crossval import class_positions, load_fold_model
from cx_app.models.importance_performance import METHOD as IPA_METHOD
from cx_app.models.importance_performance import as_frame as _frame
from cx_app.models.importance_performance import importance_performance
from cx_app.result import Result


def _score(y: Any, classes: Sequence | None) -> np.ndarray:
    """The score as numbers: the labels when numeric, else positions in ``classes``."""
    y = np.asarray(y)
    if y.dtype.kind in "iuf":
        return y.astype(float)
    if classes is None:
        raise AnalysisError("a non-numeric score needs its ordered classes")
    return class_positions(y, tuple(classes)).astype(float)


Values = Annotated[np.ndarray, PlainSerializer(lambda a: plain_document(a.astype(float)))]
"""One value per attribute (a row of them per fold): float lists in the JSON, NaN and
infinities as null."""


# ---------------------------------------------------------------- Johnson's relative weights


class RelativeWeights(Result):
    """Johnson's relative weights: ``raw`` (sums to ``r_squared``) and ``percent`` of R²."""

    attributes: tuple[str, ...]
    raw: Values
    r_squared: float
    correlation: Values | None = None
    """Each attribute's (pairwise-complete) correlation with the score."""

    @computed_field
    @property
    def method(self) -> str:
        return "Johnson (2000) relative weights on the score"

    @computed_field(return_type=Values)
    @property
    def direction(self) -> np.ndarray:
        """+1 / −1 / 0: the sign of each attribute's correlation with the score."""
        if self.correlation is None:
            return np.zeros_like(self.raw)
        return np.sign(np.nan_to_num(self.correlation))

    @computed_field(return_type=Values)
    @property
    def percent(self) -> np.ndarray:
        return 100 * self.raw / self.r_squared if self.r_squared > 0 else np.zeros_like(self.raw)


def relative_weights(X: Any, y: Any, classes: Sequence | None = None) -> RelativeWeights:
    """Johnson (2000), "A heuristic method for estimating the relative weight of predictor
    variables in multiple regression", Multivariate Behavioral Research 35(1):1–19.

    With R_xx = V diag(λ) Vᵀ, Λ = V diag(√λ) Vᵀ relates the attributes to their closest
    orthogonal counterparts Z; β = Λ⁻¹ r_xy regresses the score on Z, and attribute j's raw
    weight is ε_j = Σ_k Λ_jk² β_k². Σ ε_j = R². Missing attribute scores (NaN): correlations
    over the pairs answered (pairwise-complete); a matrix that is then not positive
    semi-definite has its negative eigenvalues set to 0.
    """
    frame = _frame(X)
    score = _score(y, classes)
    data = frame.assign(_score=score)
    if len(data) < frame.shape[1] + 2:
        raise AnalysisError("too few respondents for relative weights")
    corr = data.corr(min_periods=3).to_numpy()
    if not np.isfinite(corr).all():
        constant = [c for c, s in zip(frame.columns, frame.std(), strict=True) if not s > 0]
        raise AnalysisError(
            f"relative weights need varying scores; constant: {constant or 'score'}"
        )
    rxx, rxy = corr[:-1, :-1], corr[:-1, -1]
    eigval, eigvec = np.linalg.eigh(rxx)
    eigval = np.clip(eigval, 0, None)
    lam = eigvec @ np.diag(np.sqrt(eigval)) @ eigvec.T
    beta = np.linalg.lstsq(lam, rxy, rcond=None)[0]
    raw = (lam**2) @ (beta**2)
    return RelativeWeights(attributes=tuple(map(str, frame.columns)), raw=raw,
                           r_squared=float(raw.sum()), correlation=rxy)


# ------------------------------------------------------------------- ordinal coefficients


class CoefficientTable(Result):
    """Coefficients of standardised attributes with standard errors and 95% intervals."""

    attributes: tuple[str, ...]
    coef: Values
    se: Values
    ci_low: Values
    ci_high: Values
    p: Values
    model: str


def ordinal_coefficients(X: Any, y: Any, classes: Sequence | None = None) -> CoefficientTable:
    """Proportional-odds logit of the score on standardised attributes (statsmodels
    ``OrderedModel``): the change in log-odds of a higher score per standard deviation. Fitted
    on the respondents who answered every attribute; ``model`` says on how many."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    frame = _frame(X)
    complete = frame.notna().all(axis=1).to_numpy()
    y = np.asarray(y)[complete]
    frame = frame[complete]
    if len(frame) < frame.shape[1] + 3:
        raise AnalysisError(f"only {len(frame)} respondents answered every attribute")
    sd = frame.std(ddof=0)
    if (sd <= 0).any():
        raise AnalysisError(f"attributes without variation: {list(frame.columns[sd <= 0])}")
    z = (frame - frame.mean()) / sd
    codes = np.unique(_score(y, classes), return_inverse=True)[1]
    result = OrderedModel(codes, z, distr="logit").fit(method="bfgs", maxiter=2000, disp=False)
    p = len(frame.columns)
    ci = np.asarray(result.conf_int(alpha=0.05))[:p]
    return CoefficientTable(
        attributes=tuple(map(str, frame.columns)),
        coef=np.asarray(result.params)[:p],
        se=np.asarray(result.bse)[:p],
        ci_low=ci[:, 0],
        ci_high=ci[:, 1],
        p=np.asarray(result.pvalues)[:p],
        model="ordinal logistic regression (proportional odds) on standardised attributes"
              + ("" if complete.all() else
                 f", over the {int(complete.sum()):,} respondents who answered every attribute"),
    )


# -------------------------------------------------------------- permutation importance (CV)

PERMUTATION_REPEATS = 5
"""Shuffles per attribute and fold of the permutation importance: one default for the app, the
CLI and the library, so that the same data gives the same ``results.json`` everywhere."""


class PermutationImportance(Result):
    """Held-out permutation importance per fold (``per_fold``: folds × attributes)."""

    algorithm_id: str = Field(alias="algorithm")
    attributes: tuple[str, ...]
    per_fold: Values
    scoring: str
    n_repeats: int

    @computed_field(return_type=Values)
    @property
    def mean(self) -> np.ndarray:
        return self.per_fold.mean(axis=0)

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """t-interval of the mean across folds."""
        k = self.per_fold.shape[0]
        half = (
            stats.t.ppf(0.5 + level / 2, k - 1) * self.per_fold.std(axis=0, ddof=1) / math.sqrt(k)
        )
        return self.mean - half, self.mean + half

    def to_frame(self) -> pd.DataFrame:
        low, high = self.interval()
        return pd.DataFrame(
            {"mean": self.mean, "ci_low": low, "ci_high": high},
            index=pd.Index(self.attributes, name="attribute"),
        )

    @computed_field(return_type=Values)
    @property
    def ci_low(self) -> np.ndarray:
        return self.interval()[0]

    @computed_field(return_type=Values)
    @property
    def ci_high(self) -> np.ndarray:
        return self.interval()[1]


def _fold_importance(model, X, codes, fold, f, scoring, n_repeats, random_state):
    test = fold == f
    return permutation_importance(load_fold_model(model), X[test], codes[test], scoring=scoring,
                                  n_repeats=n_repeats, random_state=random_state).importances_mean


def permutation_importance_cv(
    cv: Any,
    X: Any,
    *,
    n_repeats: int = PERMUTATION_REPEATS,
    seed: int = 0,
    scoring: str = "accuracy",
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> PermutationImportance:
    """Drop in ``scoring`` when one attribute is shuffled among a fold's held-out respondents,
    using that fold's model (``cv`` from ``cross_validate_model(..., keep_models=True)``); one
    joblib task per fold. ``progress(folds done, folds)`` after each fold."""
    if cv.models is None:
        raise AnalysisError(
            f"{cv.algorithm_id}: the fold models were not kept; cross-validate with keep_models=True"
        )
    frame = _frame(X)
    Xa, codes, fold = cluster.share(frame.to_numpy(), cv.class_positions(), cv.fold)
    one_fold = cluster.task(_fold_importance)
    rows = []
    for row in Parallel(n_jobs=n_jobs, batch_size=1, return_as="generator",
                        idle_worker_timeout=cluster.idle_worker_seconds())(
        delayed(one_fold)(model, Xa, codes, fold, f, scoring, n_repeats, seed + f)
        for f, model in enumerate(cluster.place(cv.models))
    ):
        rows.append(row)
        if progress is not None:
            progress(len(rows), len(cv.models))
    return PermutationImportance(
        algorithm_id=cv.algorithm_id, attributes=tuple(map(str, frame.columns)),
        per_fold=np.vstack(rows), scoring=scoring, n_repeats=n_repeats,
    )


# ------------------------------------------------------------------ top-2-box capability


def target_groups(resolved_plan: Any) -> dict[str, tuple]:
    """Binary targets for δ/φ: the first step's group holding the highest class (NPS:
    promoters) and each 2×2 step's positive group (not a detractor), as original labels."""
    out: dict[str, tuple] = {}
    if resolved_plan is None or not resolved_plan.steps:
        return out
    top = resolved_plan.classes[-1]
    for g in resolved_plan.steps[0].groups:
        if top in g.covers:
            out[g.name] = tuple(g.covers)
    for step in resolved_plan.steps:
        if step.positive is not None and len(step.groups) == 2:
            group = next(g for g in step.groups if g.name == step.positive)
            out.setdefault(group.name, tuple(group.covers))
    return out


def top_box_capability(
    X: Any,
    y: Any,
    targets: Mapping[str, Sequence],
    *,
    attribute_max: float | Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """δ/φ of "attribute in its top-2-box" (≥ max − 1) against each target group, one row per
    (attribute, target) over the ``base`` who answered it; ``attribute_max``: the top of the
    scale (default: the highest score seen)."""
    frame = _frame(X)
    y = np.asarray(y)
    rows = []
    for name in frame.columns:
        if attribute_max is None:
            top = frame[name].max()
        elif isinstance(attribute_max, Mapping):
            top = attribute_max[name]
        else:
            top = attribute_max
        answered = frame[name].notna().to_numpy()
        feature = (frame[name][answered] >= top - 1).to_numpy()
        if not answered.any():
            continue
        for target, members in targets.items():
            result = feature_delta_phi(feature, np.isin(y[answered], list(members)))
            rows.append({"attribute": str(name), "target": target, "base": int(answered.sum()),
                         "top_box_share": float(feature.mean()),
                         **{k: getattr(result, k) for k in ("tpr", "fpr", "delta", "phi")}})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- all of it


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict(orient="records")


class DriverAnalysis(Result):
    """Every driver view of one survey (and the chosen model(s))."""

    relative_weights: RelativeWeights
    ordinal: CoefficientTable | None
    permutation: tuple[PermutationImportance, ...]
    importance_performance: pd.DataFrame
    capability: Annotated[pd.DataFrame, PlainSerializer(_records)] | None = Field(
        serialization_alias="top_box")
    notes: tuple[str, ...] = ()

    @computed_field
    @property
    def ranking(self) -> tuple[str, ...]:
        """Attributes from most to least important by relative weight."""
        rw = self.relative_weights
        return tuple(rw.attributes[i] for i in np.argsort(-rw.raw, kind="stable"))

    @field_serializer("permutation")
    def _by_algorithm(self, permutation: tuple[PermutationImportance, ...]) -> dict[str, Any]:
        return {p.algorithm_id: p.to_dict() for p in permutation}

    @field_serializer("importance_performance")
    def _ipa(self, frame: pd.DataFrame) -> dict[str, Any]:
        return {"importance": "relative weight (% of R²)", "method": IPA_METHOD,
                "rows": _records(frame)}


IMPORTANCE_COLUMNS = ("attribute", "importance", "ci_low", "ci_high", "direction")
"""Columns of :func:`importance_frame` (what ``charts.importance_bars`` draws)."""


def importance_frame(drivers: DriverAnalysis, measure: Literal["relative_weights", "ordinal",
                                                               "permutation"],
                     permutation: PermutationImportance | None = None) -> tuple[pd.DataFrame, str]:
    """One importance measure as :data:`IMPORTANCE_COLUMNS`, with the unit of its values.

    An accuracy drop (``permutation``) has no sign: its direction is the relative weights'.
    """
    rw = drivers.relative_weights
    if measure == "relative_weights":
        return _importance(rw.attributes, rw.percent, rw.percent, rw.percent, rw.direction), \
            "% of R²"
    if measure == "ordinal":
        if drivers.ordinal is None:
            raise AnalysisError("ordinal coefficients are not available for this survey")
        o = drivers.ordinal
        return _importance(o.attributes, o.coef, o.ci_low, o.ci_high, np.sign(o.coef)), \
            "coefficient (95% interval)"
    if permutation is None:
        raise AnalysisError("no permutation importance for this model: train it again")
    frame = permutation.to_frame().reset_index().rename(columns={"mean": "importance"})
    frame["direction"] = frame["attribute"].map(dict(zip(rw.attributes, rw.direction, strict=True)))
    return frame[list(IMPORTANCE_COLUMNS)], "accuracy drop (95% interval over folds)"


def _importance(*columns: Any) -> pd.DataFrame:
    return pd.DataFrame(dict(zip(IMPORTANCE_COLUMNS, columns, strict=True)))


def driver_importance(
    X: Any,
    y: Any,
    classes: Sequence,
    *,
    cv_results: Sequence[Any] = (),
    n_repeats: int = PERMUTATION_REPEATS,
    seed: int = 0,
    n_jobs: int = 1,
    survey_views: DriverAnalysis | None = None,
    **options: Any,
) -> DriverAnalysis:
    """Every driver view; permutation importance of each ``cv_results`` model (fold models
    kept), top-2-box δ/φ against the plan's target groups. ``survey_views``: the model-free
    views (:func:`survey_driver_views` of the same ``options``) when already computed."""
    if survey_views is None:
        survey_views = survey_driver_views(X, y, classes, seed=seed, **options)
    perms = tuple(
        permutation_importance_cv(cv, _frame(X), n_repeats=n_repeats, seed=seed, n_jobs=n_jobs)
        for cv in cv_results
    )
    return survey_views.model_copy(update={"permutation": perms})


def survey_driver_views(
    X: Any,
    y: Any,
    classes: Sequence,
    *,
    resolved_plan: Any = None,
    attribute_max: float | Mapping[str, float] | None = None,
    seed: int = 0,
    ordinal: bool = True,
    attribute_min: Mapping[str, float] | None = None,
) -> DriverAnalysis:
    """The driver views that need no model (relative weights, ordinal coefficients,
    importance–performance, top-2-box δ/φ), without permutation importance: they depend on
    the survey alone, so an evaluation computes them while its models train."""
    frame = _frame(X)
    notes = []
    rw = relative_weights(frame, y, classes)
    coef = None
    if ordinal:
        try:
            coef = ordinal_coefficients(frame, y, classes)
        except (AnalysisError, np.linalg.LinAlgError, ValueError) as exc:
            notes.append(f"ordinal coefficients not available: {exc}")
    scales = ({a: (attribute_min[a], attribute_max[a]) for a in rw.attributes}
              if isinstance(attribute_max, Mapping) and attribute_min is not None else None)
    score = np.asarray(y)

    def importance_on(rows: np.ndarray) -> np.ndarray:
        return relative_weights(frame.iloc[rows], score[rows], classes).percent

    ipa = importance_performance(frame, dict(zip(rw.attributes, rw.percent, strict=True)),
                                 dict(zip(rw.attributes, rw.direction, strict=True)), scales,
                                 importance_on=importance_on, seed=seed)
    targets = target_groups(resolved_plan)
    capability = (top_box_capability(frame, y, targets, attribute_max=attribute_max)
                  if targets else None)
    return DriverAnalysis(relative_weights=rw, ordinal=coef, permutation=(),
                          importance_performance=ipa, capability=capability, notes=tuple(notes))
