"""The analysis a user carries from page to page of the app (no streamlit import).

An :class:`Analysis` holds the survey, the reduction plan being edited and the cross-validated
models. Everything the pages show is derived from these, memoised per (model, plan): a grouping
change re-derives matrices from the cached cross-validation arrays and never retrains.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from cx_app.app.store import ResultStore, digest, survey_key, training_key
from cx_app.engine.plan import PlanSpec
from cx_app.errors import CxAppError, PlanError
from cx_app.models.results import Results
from cx_app.project import ProjectModel

if TYPE_CHECKING:
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.engine.roc import OvrRoc
    from cx_app.estimate.alp import AlpGap
    from cx_app.estimate.document import WaveEstimateDocument
    from cx_app.estimate.model_choice import EstimationChoice
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.models.drivers import DriverAnalysis
    from cx_app.models.evaluation import ModelEvaluation
    from cx_app.survey.data import SurveyData
    from cx_app.workspace.views import ProgramView

__all__ = [
    "Analysis",
    "ResultStore",
    "CrossValidatedModel",
    "TrainingEvent",
    "model_label",
    "survey_key",
    "train_lean",
    "training_key",
]


def model_label(algorithm_id: str, settings: Mapping[str, Any], defaults: Mapping[str, Any],
                folds: int, seed: int) -> str:
    """A readable model id: what differs from the defaults (``lr C=0.5``, ``rf seed=3``)."""
    changed = [f"{k}={v}" for k, v in settings.items() if defaults.get(k) != v]
    if seed != 0:
        changed.append(f"seed={seed}")
    return " ".join([algorithm_id, *changed])


def train_lean(survey: SurveyData, algorithm_id: str, *, folds: int, seed: int,
               settings: Mapping[str, Any], calibration: str,
               progress: Callable[[int, int, str], None] | None = None,
               preset: str | None = None,
               on_cross_validated: Callable[[Any], None] | None = None,
               n_jobs: int | None = None) -> tuple[Any, Any]:
    """Cross-validate one algorithm for the app: ``(cv, permutation)``.

    The fold models are large (a 10-fold random forest on the sample: about 1 GB) and needed
    only for permutation importance, so it is computed right away and the models are dropped:
    sessions and the shared store keep a few MB. ``progress(done, 2 × folds, text)``."""
    import dataclasses

    from cx_app.app.job_pool import cores_per_job
    from cx_app.models.crossval import cross_validate_model
    from cx_app.models.drivers import PERMUTATION_REPEATS, permutation_importance_cv

    n_jobs = cores_per_job() if n_jobs is None else n_jobs
    report = progress or (lambda _done, _steps, _text: None)

    def fitted(done: int, _total: int, text: str) -> None:  # each fold's fit, then importance
        report(done, 2 * folds, text)

    def importance(done: int, _total: int) -> None:
        report(folds + done, 2 * folds, f"{algorithm_id}: permutation importance, fold "
                                        f"{done}/{folds} done")

    cv = cross_validate_model(survey.X, survey.y, tuple(survey.classes), algorithm_id,
                              folds=folds, seed=seed, settings=dict(settings), n_jobs=n_jobs,
                              calibration=calibration, progress=fitted, keep_models=True,
                              missing_policy=survey.schema.missing_attributes,
                              sample_weight=survey.model_weights, preset=preset)
    if on_cross_validated is not None:
        on_cross_validated(dataclasses.replace(cv, models=None))
    fitted(folds, folds, f"{algorithm_id}: permutation importance")
    permutation = permutation_importance_cv(cv, survey.X, n_repeats=PERMUTATION_REPEATS,
                                            n_jobs=n_jobs, progress=importance)
    return dataclasses.replace(cv, models=None), permutation


CrossValidatedModel = ProjectModel  # a session's models are the ones projects and programs store


@dataclass(frozen=True)
class TrainingEvent:
    """What happened to one model of :meth:`Analysis.train`: ``"trained"`` (now, or a hit in
    the shared store: the two read alike, so nothing reveals another session), ``"repeat"``
    (already trained in this session) or ``"failed"``."""

    label: str
    status: str
    message: str
    warnings: tuple[str, ...] = ()


@dataclass
class Analysis:
    """The per-user state of the app: survey, plan, trained models and derived results.

    ``trainings`` counts this user's cross-validation runs. Only ``trained_keys`` may be called
    "already trained": a shared store hit for a key the user never asked for reads like a fresh
    training."""

    survey: SurveyData
    data_key: str
    plan: PlanSpec
    models: dict[str, CrossValidatedModel] = field(default_factory=dict)
    trainings: int = 0
    trained_keys: set = field(default_factory=set)
    finals: dict[str, TrainedModel] = field(default_factory=dict)  # by final-model key
    memo_items: int = 256
    _memo: OrderedDict = field(default_factory=OrderedDict, repr=False)

    @property
    def classes(self) -> tuple:
        return tuple(self.survey.classes)

    @property
    def plan_key(self) -> str:
        return digest(self.plan.model_dump(mode="json"))

    def adopt_survey(self, survey: SurveyData) -> None:
        """Take the same data under other display words (labels, segments): the models stay."""
        if survey.data_key != self.data_key:
            raise ValueError("adopt_survey takes the same data only (the same data key)")
        self.survey = survey
        self._memo.clear()

    def set_plan(self, plan: PlanSpec) -> None:
        self.plan = plan

    def resolved_plan(self) -> ResolvedPlan:
        from cx_app.engine.grouping import resolve_plan

        return self.derived(("plan", self.plan_key), lambda: resolve_plan(self.plan, self.classes))

    def add_model(self, model: CrossValidatedModel) -> None:
        self.models[model.model_id] = model

    def derived(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """A value computed once per key, kept among the ``memo_items`` most recently used."""
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        value = compute()
        self._memo[key] = value
        while len(self._memo) > self.memo_items:
            self._memo.popitem(last=False)
        return value

    def peek(self, key: tuple) -> Any | None:
        if key in self._memo:
            self._memo.move_to_end(key)
        return self._memo.get(key)

    def evaluation(self, model_id: str) -> ModelEvaluation:
        from cx_app.models.evaluation import evaluate_result

        model = self.models[model_id]
        return self.derived(("evaluation", model.key, self.plan_key),
                            lambda: evaluate_result(model.cv, self.resolved_plan()))

    def levels(self, model_id: str) -> tuple:
        """The reduction levels of a model's out-of-fold predictions."""
        from cx_app.engine.confusion import confusion_matrix
        from cx_app.engine.levels import reduce_confusion

        model = self.models[model_id]

        def compute() -> tuple:
            cm = confusion_matrix(model.cv.y_true, model.cv.y_pred, labels=self.classes)
            return reduce_confusion(cm, self.resolved_plan())

        return self.derived(("levels", model.key, self.plan_key), compute)

    def comparable_models(self, model_id: str | None = None) -> list[str]:
        """The models on the same folds as ``model_id`` (default: the first), which one
        results document can compare."""
        import numpy as np

        if not self.models:
            return []
        first = self.models[model_id or next(iter(self.models))].cv.fold
        return [m for m, t in self.models.items() if np.array_equal(t.cv.fold, first)]

    def train(self, algorithms: Mapping[str, Mapping[str, Any]], *, folds: int, seed: int,
              calibration: str, store: ResultStore,
              progress: Callable[[float, str], None] | None = None,
              on_event: Callable[[TrainingEvent], None] | None = None,
              preset: str | None = None,
              on_cross_validated: Callable[[CrossValidatedModel], None] | None = None,
              ) -> list[TrainingEvent]:
        """Cross-validate each algorithm (``{algorithm id: settings}``) unless this recipe was
        trained already, sharing results through ``store`` by content key.
        ``on_cross_validated``: a fresh model before its permutation importance."""
        from cx_app.models.algorithms import get_algorithm, preset_label, resolve_preset

        events: list[TrainingEvent] = []
        total = max(1, len(algorithms) * 2 * folds)  # train_lean's steps
        progress = progress or (lambda _share, _text: None)

        def emit(event: TrainingEvent) -> None:
            events.append(event)
            if on_event is not None:
                on_event(event)

        for i, (algorithm_id, settings) in enumerate(algorithms.items()):
            chosen = resolve_preset(algorithm_id, preset)
            recipe = {"settings": dict(settings), "calibration": calibration, "preset": chosen}
            key = training_key(self.data_key, algorithm_id, recipe, folds, seed)
            label = model_label(preset_label(algorithm_id, chosen), settings,
                                get_algorithm(algorithm_id, chosen).defaults, folds, seed)
            if calibration != "none":
                label += f" {calibration}"
            model = partial(CrossValidatedModel, label, algorithm_id, dict(settings), folds, seed,
                            key=key)
            stored = store.get(key)  # (cv without fold models, permutation importance)
            done = min(1.0, (i + 1) / len(algorithms))
            if key in self.trained_keys and stored is not None:
                status, message = "repeat", (f"{label}: already trained in this session (same "
                                             "data and recipe)")
                progress(done, f"{label}: already trained")
            else:
                if stored is None:
                    def fold_progress(n_done: int, _total: int, text: str,
                                      offset: int = i * 2 * folds) -> None:
                        progress(min(1.0, (offset + n_done) / total), text)

                    cross_validated = None if on_cross_validated is None else (
                        lambda cv, model=model: on_cross_validated(model(cv=cv)))
                    try:
                        stored = train_lean(self.survey, algorithm_id, folds=folds, seed=seed,
                                            settings=settings, calibration=calibration,
                                            progress=fold_progress, preset=chosen,
                                            on_cross_validated=cross_validated)
                    except CxAppError as exc:
                        emit(TrainingEvent(label, "failed", f"{label}: {exc}"))
                        continue
                    self.trainings += 1
                    store.put(key, stored)
                # a hit in the shared store (another session, same bytes and recipe) reads
                # exactly like a fresh training
                progress(done, f"{label}: done")
                status = "trained"
                message = f"{label}: cross-validated in {stored[0].fit_seconds:.2f} s"
            cv, permutation = stored
            self.trained_keys.add(key)
            self.add_model(model(cv=cv, permutation=permutation))
            emit(TrainingEvent(label, status, message, tuple(cv.warnings)))
        return events

    def held_out_gap(self, model_id: str) -> AlpGap:
        """The held-out ALP gap of a model's out-of-fold probabilities."""
        from cx_app.estimate.alp import alp_gap
        from cx_app.survey.nps import groups_for_schema

        model = self.models[model_id]

        def compute():
            try:
                groups = groups_for_schema(self.survey.schema)
            except PlanError:
                groups = None  # no net-score groups: the gap has no NPS term
            return alp_gap(model.cv.y_true, model.cv.proba, self.classes, groups=groups)

        return self.derived(("alp_gap", model.key), compute)

    def ovr_roc(self, model_id: str) -> OvrRoc:
        from cx_app.engine.roc import ovr_roc

        cv = self.models[model_id].cv
        return self.derived(("ovr", self.models[model_id].key),
                            lambda: ovr_roc(cv.y_true, cv.proba, self.classes))

    def drivers(self) -> DriverAnalysis:
        """The model-free driver views, as ``cx-app evaluate`` computes them."""
        from cx_app.models.analysis import driver_views

        return self.derived(("drivers", self.data_key, self.plan_key),
                            lambda: driver_views(self.survey, self.resolved_plan()))

    def final_model(self, model_id: str, store: ResultStore, *, fit: bool = False,
                    progress: Callable[[int, int, str], None] | None = None,
                    ) -> TrainedModel | None:
        """The model fitted on all respondents for new waves (None: not fitted and not
        ``fit``)."""
        from cx_app.estimate.training import train_model

        trained = self.models[model_id]
        key = f"{trained.key}:final"
        model = self.finals.get(key) or store.get(key)
        if model is None and fit:
            model = train_model(self.survey, trained.algorithm_id,
                                calibration=trained.cv.calibration, folds=trained.folds,
                                seed=trained.seed, settings=trained.settings,
                                progress=progress, cross_validation=trained.cv).model
            store.put(key, model)
        if model is not None:
            self.finals[key] = model
        return model

    def stored_wave_estimate(self, model: TrainedModel, model_key: str, sha256: str,
                             part: str, wave: SurveyData) -> Any:
        from cx_app.estimate.new_wave import estimate_wave

        return self.derived(("wave_estimate", model_key, sha256, part),
                            lambda: estimate_wave(model, wave))

    def final_model_bytes(self, model_id: str) -> bytes:
        from cx_app.estimate.model_file import model_bytes

        key = f"{self.models[model_id].key}:final"
        return self.derived(("model_bytes", key), lambda: model_bytes(self.finals[key]))

    def best_model(self, model_ids: list[str] | None = None) -> str:
        """The best of ``model_ids`` by the library's one rule (as the CLI)."""
        from cx_app.models.analysis import best_model

        ids = list(self.models) if model_ids is None else list(model_ids)
        return best_model({m: self.evaluation(m) for m in ids})

    def estimation_choice(self, names: Mapping[str, str]) -> EstimationChoice | None:
        """The model the New wave page preselects to estimate waves (None: fewer than two
        trained), by the held-out net-score errors and their paired test, computed once."""
        from cx_app.estimate.model_choice import choose_from_crossvalidation
        from cx_app.survey.nps import groups_for_schema

        ids = list(self.models)
        if len(ids) < 2:
            return None
        return self.derived(
            ("estimation_choice", *(self.models[m].key for m in ids)),
            lambda: choose_from_crossvalidation({m: self.models[m].cv for m in ids},
                                                groups_for_schema(self.survey.schema), names))

    def report_document(self, model_ids: list[str] | None = None) -> Results:
        """The ``results.json`` of ``model_ids`` as the Report page and ``cx-app evaluate``
        write it: drivers with the best model's permutation importance."""
        ids = list(self.models) if model_ids is None else list(model_ids)
        model = self.models[best := self.best_model(ids)]
        permutation = () if model.permutation is None else (model.permutation,)
        drivers = self.derived(("report_drivers", model.key, self.plan_key), lambda: (
            self.drivers().model_copy(update={"permutation": permutation})))
        return self.results_document(ids, drivers, permutation_model=best)

    def report_files(self, model_ids: list[str], new_wave: WaveEstimateDocument | None = None, *,
                     build: bool = False, program: ProgramView | None = None,
                     segment_titles: Mapping[str, str] | None = None
                     ) -> dict[str, bytes] | None:
        """The report files (``json``, ``xlsx``, ``html`` bytes) of ``model_ids``: built when
        ``build``, else only when already built (``None`` otherwise); with a ``program`` with
        waves, its tracker and deck too."""
        from cx_app.reports import build_report, excel_bytes, render_html

        tracked = None if program is None or not program.waves else program
        key = ("reports", tuple(self.models[m].key for m in model_ids), self.plan_key,
               new_wave.to_json() if new_wave is not None else None,
               None if tracked is None else (tracked.name, tuple(
                   (w.label, w.sha256, w.part, w.model_id, w.estimated_nps.value)
                   for w in tracked.waves)))
        if not build:
            return self.peek(key)

        def compute() -> dict[str, bytes]:
            results = self.report_document(model_ids)
            if tracked is not None:
                from cx_app.workspace.reporting import program_report_files

                files = program_report_files(tracked, results,
                                             source_name=self.survey.source.filename,
                                             segment_titles=dict(segment_titles or {}))
                return {"json": results.to_json().encode("utf-8"), **files}
            if new_wave is not None:  # e.g. estimated with an uploaded model of another survey
                from cx_app.estimate.document import check_estimate_belongs

                check_estimate_belongs(results, new_wave, results_name="this analysis' results",
                                       estimate_name="the new-wave estimate")
            report = build_report(results, new_wave, source_name=self.survey.source.filename)
            return {"json": results.to_json().encode("utf-8"), "xlsx": excel_bytes(report),
                    "html": render_html(report).encode("utf-8")}

        return self.derived(key, compute)

    def results_document(self, model_ids: list[str] | None = None, drivers: Any = None,
                         permutation_model: str | None = None) -> Results:
        """The typed results of ``model_ids`` (sharing their folds) by the CLI's one builder."""
        from cx_app.models.analysis import results_document

        ids = list(self.models) if model_ids is None else list(model_ids)
        evaluations = {m: self.evaluation(m) for m in ids}
        methods = {self.models[m].cv.calibration for m in ids}
        calibration = methods.pop() if len(methods) == 1 else ", ".join(
            f"{m}: {self.models[m].cv.calibration}" for m in ids)
        return results_document(self.survey, evaluations, self.resolved_plan(), drivers=drivers,
                                permutation_model=permutation_model, calibration=calibration)
