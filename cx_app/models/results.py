"""The typed results document: what ``results.json`` holds, validated.

:class:`Results` is the one model of an evaluation's results (CLI, app, reports).
``from_dict`` refuses an unknown key, a missing part or a wrong type with the path of the
offending field; ``to_dict`` gives back exactly the document it was made from:

>>> doc = {"label": "all", "value": 10.0, "ci95": [2.0, 18.0], "n": 50}
>>> NetScoreFigure.from_dict(doc).to_dict() == doc
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Self

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, ValidationError

from cx_app.engine.grouping import ResolvedPlan
from cx_app.errors import CxAppError
from cx_app.survey.vocabulary import ScoreVocabulary, vocabulary_for

Number = int | float
Label = int | float | str
ORIGINAL_LEVEL = "original"


class ResultsError(CxAppError):
    """A results document (or new-wave estimate) that does not have the expected layout."""


class Document(BaseModel):
    """A frozen, strictly laid-out part of a JSON document; ``to_dict`` round-trips."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "") -> Self:
        """Validate ``data``; :class:`ResultsError` naming ``source`` and the first bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
            name = f"{source}: " if source else ""
            raise ResultsError(f"{name}not a valid {cls.__name__} document: {where}: "
                               f"{first['msg']}{more}") from None

    def to_dict(self) -> dict[str, Any]:
        """The document as plain JSON-ready values (the keys it was made from, no others)."""
        return self.model_dump(mode="python", exclude_unset=True, by_alias=True)

    def to_json(self) -> str:
        """The document as JSON text (``results.json``, an estimate's ``--json``)."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)


def finite(value: Any) -> float | None:
    """A finite number as float; None for None, NaN, infinities and non-numbers (bools too)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


Stat = Annotated[float | None, PlainSerializer(finite)]
"""A statistic: NaN while computed when undefined, null in the JSON (and when read back)."""


# --------------------------------------------------------------------------- the data set


class NetScoreFigure(Document):
    """A net score (NPS) with its 95% interval (``cx_app.survey.nps.NetScore.to_dict``)."""

    label: str | None = None
    value: float
    ci95: list[float]
    se: float | None = None
    n: int | float
    counts: dict[str, Number] = {}
    shares: dict[str, float] = {}
    missing: int | None = None
    weighted: bool = False
    n_effective: float | None = None
    se_sampling: float | None = None
    se_model: float | None = None
    se_outcome: float | None = None
    se_reference: float | None = None
    se_segment: float | None = None
    segment_correction: float | None = None
    covers: str | None = None
    kind: str | None = None


class ReferenceRow(Document):
    """One value of a segment (or one wave) of the reference survey: its net score, 95%
    interval and significance flag (:mod:`cx_app.survey.nps_flags`)."""

    value: str
    n: Number
    score: float | None
    ci_low: float | None
    ci_high: float | None
    difference: float | None
    """Segment − the other respondents, or wave − previous wave (score points)."""
    p_holm: float | None
    flag: str


class ReferenceSplit(Document):
    """The reference survey's net score by one segment (or by wave)."""

    name: str
    title: str
    """Its header in the survey file."""
    kind: str
    """``segment`` (each value against the rest) or ``wave`` (against the wave before)."""
    rows: list[ReferenceRow]


class ReferenceScores(Document):
    """The reference survey's own net score, by each segment and by wave (measured)."""

    splits: list[ReferenceSplit] = []


class Dataset(Document):
    filename: str | None
    rows_read: int
    respondents: int | None = None
    """The survey base (every valid target answer): what ``nps`` is over."""
    rows_used: int
    """The model base: what the models were trained and evaluated on."""
    missing_policy: str | None = None
    classes: list[Label]
    attributes: list[str]
    attribute_labels: dict[str, str] = {}
    target_kind: str | None = None
    recommend_question: bool | None = None
    """Whether the target is a recommend question on 0–10 (an NPS); None in older results."""
    nps: NetScoreFigure
    """The net score (an NPS only when :attr:`vocabulary` says so; the key is kept)."""
    reference: ReferenceScores | None = None

    @property
    def vocabulary(self) -> ScoreVocabulary:
        nps = (self.recommend_question if self.recommend_question is not None
               else self.target_kind == "nps")
        return vocabulary_for(nps=nps, satisfaction=self.target_kind == "csat")


class ExcludedRowDocument(Document):
    row: int
    column: str | None
    reason: str
    value: Any = None
    scope: str | None = None


class Quality(Document):
    """The data-quality summary (``cx_app.survey.quality.DataQualityReport.to_dict``)."""

    rows_read: int
    respondents: int | None = None
    rows_used: int
    rows_excluded: int
    blank_rows: int = 0
    counts_by_reason: dict[str, int] = {}
    out_of_survey: dict[str, int] = {}
    out_of_models: dict[str, int] = {}
    excluded: list[ExcludedRowDocument] = []
    gaps: dict[str, int] = {}
    notes: list[str] = []


class Provenance(Document):
    file: str | None
    sheet: str | None = None
    sha256: str | None = None
    schema_name: str | None = Field(None, alias="schema")  # "schema" is a BaseModel method
    plan: ResolvedPlan | None = None
    algorithms: dict[str, dict[str, Any] | None] = {}
    presets: dict[str, str] = {}
    versions: dict[str, str] = {}
    # the common provenance block (cx_app.provenance.provenance_block); absent in older files
    created: str | None = None
    seed: int | None = None
    folds: int | None = None
    preset: str | None = None
    schema_sha256: str | None = None
    schema_yaml: str | None = None
    inputs: dict[str, str | None] = {}


# --------------------------------------------------------------------------- models


class LevelDocument(Document):
    """One level of a model's evaluation: its (reduced) confusion matrix, metrics, per fold."""

    labels: list[Label]
    matrix: list[list[Number]]
    im: list[Number] | None = None
    positive: str | None = None
    metrics: dict[str, Number | None | dict[str, Any] | list[Any]]
    per_fold: dict[str, list[Number | None]] = {}

    @property
    def is_binary(self) -> bool:
        return "tp" in self.metrics and "tpr" in self.metrics

    def scalar_metrics(self) -> dict[str, float | None]:
        """Every single-number metric; NaN and infinities as None."""
        return {k: finite(v) for k, v in self.metrics.items()
                if not isinstance(v, dict | list) and k not in ("per_class",)}

    def metric(self, key: str) -> float | None:
        return finite(self.metrics.get(key))

    def per_class(self) -> dict[str, dict[str, Any]]:
        """Class label → its precision, recall, F1, support (and IM on a reduced level)."""
        value = self.metrics.get("per_class")
        return dict(value) if isinstance(value, dict) else {}

    def fold_mean(self, key: str) -> float | None:
        """The mean of a metric's finite per-fold values (what the paired tests compare)."""
        values = [v for v in map(finite, self.per_fold.get(key, [])) if v is not None]
        return sum(values) / len(values) if values else None


class Roc(Document):
    kind: str
    fpr: list[float]
    tpr: list[float]
    points: int
    auc: float | None
    random_auc: float | None
    per_class_auc: dict[str, float | None] | None = None


class CrossValidationSummary(Document):
    algorithm: str
    preset: str = "papers"  # documents written before presets existed used the papers' settings
    settings: dict[str, Any]
    calibration: str
    missing_policy: str | None = None
    folds: int
    seed: int
    fold_method: str
    fit_seconds: float
    fold_fit_seconds: list[float]
    warnings: list[str] = []
    provenance: dict[str, str] = {}
    weighted: bool | None = None
    unweighted_reason: str | None = None


class ModelResult(Document):
    algorithm: str
    levels: dict[str, LevelDocument]
    roc: dict[str, Roc] = {}
    fit_seconds: float
    fold_sizes: list[int] = []
    weighted: bool | None = None
    """Trained with the survey weights (None: no weights); the metrics are unweighted."""
    cross_validation: CrossValidationSummary
    below_baseline: list[str] | None = None
    """The levels where its accuracy is below :attr:`Results.baseline`; None in older results."""


class BaselineLevel(Document):
    """Always answering one class at one level (:mod:`cx_app.models.baseline`)."""

    class_: Label = Field(alias="class")
    accuracy: float


class ComparisonDocument(Document):
    """A k-fold paired t-test of two models on one metric at one level
    (:func:`cx_app.models.comparison.compare_scores`)."""

    level: str
    metric: str
    a: str
    b: str
    folds: int
    mean_a: Stat
    mean_b: Stat
    mean_diff: Stat  # mean over folds of score_a − score_b
    t: Stat
    df: int
    p: Stat  # plain k-fold CV paired t-test
    t_corrected: Stat
    p_corrected: Stat  # Nadeau–Bengio
    p_holm: Stat  # Holm over all pairs of this level and metric, on p_corrected
    alpha: float = 0.05
    verdict: str

    @property
    def significant(self) -> bool | None:
        """Holm-adjusted p below alpha; None when the test is undefined (null, read back)."""
        return None if self.p_holm is None else self.p_holm < self.alpha


class FiveByTwo(Document):
    """Dietterich's 5×2cv t-test and Alpaydin's combined F-test of two models."""

    level: str
    metric: str
    a: str
    b: str
    differences: list[list[float | None]]
    t: float | None
    t_p: float | None
    f: float | None
    f_p: float | None
    t_df: int = 5
    f_df: list[int] = [10, 5]


# --------------------------------------------------------------------------- drivers


class AttributeColumns(Document):
    """A driver table laid out by columns: ``attributes`` and one list per measure."""

    attributes: list[str]

    def records(self, *keys: str) -> list[dict[str, Any]]:
        """One dict per attribute: ``attribute`` and the chosen measures."""
        return [{"attribute": a, **{k: finite(getattr(self, k)[i]) for k in keys}}
                for i, a in enumerate(self.attributes)]


class RelativeWeightsDoc(AttributeColumns):
    method: str
    r_squared: float | None
    raw: list[float | None]
    percent: list[float | None]
    correlation: list[float | None] | None = None
    direction: list[float | None] = []


class OrdinalDoc(AttributeColumns):
    model: str
    coef: list[float | None]
    se: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]
    p: list[float | None]


class PermutationDoc(AttributeColumns):
    algorithm: str
    scoring: str
    n_repeats: int
    mean: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]
    per_fold: list[list[float | None]]


class ImportancePerformanceRow(Document):
    attribute: str
    importance: float | None
    performance: float | None
    base: int | None = None
    na_share: float | None = None
    direction: float | None = None
    performance_pct: float | None = None
    importance_low: float | None = None
    importance_high: float | None = None
    performance_low: float | None = None
    performance_high: float | None = None
    importance_vs_others: str | None = None
    performance_vs_others: str | None = None
    importance_p_holm: float | None = None
    performance_p_holm: float | None = None
    quadrant: str


class ImportancePerformanceDoc(Document):
    importance: str
    method: str | None = None
    rows: list[ImportancePerformanceRow]

    def frame(self) -> pd.DataFrame:
        """The rows as a table, one column per row field (also when there are no rows)."""
        return pd.DataFrame([r.model_dump() for r in self.rows],
                            columns=list(ImportancePerformanceRow.model_fields))


class TopBoxRow(Document):
    attribute: str
    target: str
    base: int | None = None
    top_box_share: float | None
    tpr: float | None
    fpr: float | None
    delta: float | None
    phi: float | None


class Drivers(Document):
    permutation_model: str | None = None
    ranking: list[str] = []
    relative_weights: RelativeWeightsDoc | None = None
    ordinal: OrdinalDoc | None = None
    permutation: dict[str, PermutationDoc] = {}
    importance_performance: ImportancePerformanceDoc | None = None
    top_box: list[TopBoxRow] | None = None
    notes: list[str] = []


# --------------------------------------------------------------------------- the document


class Results(Document):
    """An evaluation's results: the data set, every model's levels and ROC, the paired tests,
    the drivers, the data quality and the provenance (``results.json``)."""

    dataset: Dataset
    folds: int | None
    seed: int | None
    calibration: str = "none"
    models: dict[str, ModelResult]
    comparisons: list[ComparisonDocument] = []
    comparison_method: str = ""
    warnings: dict[str, list[str]] = {}
    quality: Quality
    provenance: Provenance
    drivers: Drivers | None = None
    comparisons_5x2cv: list[FiveByTwo] | None = None
    baseline: dict[str, BaselineLevel] = {}

    def level_names(self) -> list[str]:
        """Every level of any model, ``original`` first, then in first-seen order."""
        names = dict.fromkeys(n for model in self.models.values() for n in model.levels)
        return sorted(names, key=lambda n: n != ORIGINAL_LEVEL)  # stable: first-seen order

    def levels(self, name: str) -> dict[str, LevelDocument]:
        """Model id → its level ``name`` (models without that level left out)."""
        return {m: r.levels[name] for m, r in self.models.items() if name in r.levels}

    def comparison(self, level: str, metric: str, a: str, b: str) -> ComparisonDocument | None:
        """The paired test of models ``a`` and ``b`` (either order) on ``metric`` at ``level``."""
        return next((c for c in self.comparisons if c.level == level and c.metric == metric
                     and {c.a, c.b} == {a, b}), None)


def read_results(path: str | Path) -> Results:
    """Read and validate a ``results.json``; :class:`ResultsError` naming the file otherwise."""
    return Results.from_dict(read_json_object(path, "results file"), source=Path(path).name)


def read_json_object(path: str | Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path``; :class:`ResultsError` naming the file otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"the {what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultsError(f"the {what} {path} cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ResultsError(f"the {what} {path} does not hold a JSON object")
    return data
