"""A training run in a background thread that the user can cancel (no streamlit import).

A thread, because Streamlit stops a script run at any click; the page picks the job up again
whenever it is shown. The job trains on a *shadow* of the user's analysis, and
:meth:`TrainingJob.finish` hands the models over in the page's thread. Cancel ends the job for
the page at once and keeps every finished model (one whose folds are done: without its
permutation importance); the thread stops at its next progress update, and what it finishes
after is dropped. What ``on_model`` and ``record_fit`` raise becomes a warning of the model's
event. On a shared server the job waits in the :class:`~cx_app.app.job_pool.JobPool`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from cx_app.app.job_pool import JobPool, PooledJob
from cx_app.app.session import Analysis, CrossValidatedModel, ResultStore, TrainingEvent
from cx_app.errors import CxAppError
from cx_app.models.timing import COSTS, Phases, remaining_seconds, settings_factor

__all__ = ["TrainingCancelled", "TrainingJob"]


RecordFit = Callable[[str, str, int, int, int, float], None]


class TrainingCancelled(Exception):  # noqa: N818 — a request, not an error
    """Not a :class:`~cx_app.errors.CxAppError`: ``Analysis.train`` must not take it for a
    failed model and go on with the next one."""


class TrainingJob:
    """One click of "Train". ``state``: ``"queued"``, ``"running"``, ``"finished"``,
    ``"cancelled"`` or ``"failed"``; the page reads ``share`` (0..1), ``text`` and ``events``."""

    def __init__(self, analysis: Analysis, algorithms: Mapping[str, Mapping[str, Any]], *,
                 folds: int, seed: int, calibration: str, store: ResultStore,
                 around: Callable[[], AbstractContextManager[Any]] | None = None,
                 preset: str | None = None,
                 on_model: Callable[[CrossValidatedModel], None] | None = None,
                 record_fit: RecordFit | None = None,
                 expected: Mapping[str, Phases] | None = None) -> None:
        """``around``: a context entered in the training thread (e.g.
        :func:`cx_app.models.cluster.on_cluster`, whose routing is per thread).
        ``on_model(model)``: each model trained (not a repeat of this session).
        ``record_fit(algorithm, preset, respondents, attributes, folds, seconds)``: each fresh
        fit, in reference seconds (divided by :func:`cx_app.models.timing.settings_factor`).
        ``expected``: each algorithm's expected phases (:attr:`remaining`)."""
        self.analysis = analysis
        self.expected = dict(expected or {})
        self._around = around
        self.preset = preset
        self.algorithms = {k: dict(v) for k, v in algorithms.items()}
        self.folds, self.seed, self.calibration = folds, seed, calibration
        self.store = store
        self._on_model, self._record_fit = on_model, record_fit
        self.state = "running"
        self.share = 0.0
        self.text = "starting"
        self.message = ""
        self.events: list[TrainingEvent] = []
        self.started = time.monotonic()
        self.ended: float | None = None
        self._cancel = threading.Event()
        self._ended = threading.Event()  # the job's end for the page (a cancel, or the thread's)
        self._lock = threading.Lock()
        self.handed_over = False
        self._kept: dict[str, CrossValidatedModel] = {}  # handed over by finish()
        self._kept_trainings = 0  # cross-validation runs among them
        self._seen_trainings = 0
        self._pending: CrossValidatedModel | None = None  # folds done, permutation running
        self._late: list[tuple[int, CrossValidatedModel]] = []  # kept by the cancel
        self._mark = time.monotonic()  # when the model in training started
        # trains on a shadow holding the user's survey, plan and trained keys
        self._shadow = Analysis(survey=analysis.survey, data_key=analysis.data_key,
                                plan=analysis.plan, trained_keys=set(analysis.trained_keys),
                                memo_items=analysis.memo_items)
        self._thread = threading.Thread(target=self._run, name="cx-app-training", daemon=True)
        self.pooled: PooledJob[None] | None = None
        self.began: float | None = None  # when the training itself started (after the queue)

    def start(self, pool: JobPool | None = None, user: str = "") -> TrainingJob:
        if pool is not None:
            with self._lock:
                if self.state == "running":  # not cancelled before it was started
                    self.state, self.text = "queued", "waiting for the server"
            self.pooled = pool.submit(user, self._run_pooled, label=", ".join(self.algorithms))
            return self
        self._mark = self.began = time.monotonic()
        self._thread.start()
        return self

    @property
    def position(self) -> int | None:
        """1: it starts next; None when not queued."""
        if self.pooled is None or self.state != "queued":
            return None
        return self.pooled.position

    # ------------------------------------------------------------------ worker thread

    def _progress(self, share: float, text: str) -> None:
        if self._cancel.is_set():
            raise TrainingCancelled
        with self._lock:
            self.share, self.text = share, text

    def _cross_validated(self, model: CrossValidatedModel) -> None:
        with self._lock:
            if not self._cancel.is_set():
                self._pending = model

    def _event(self, event: TrainingEvent) -> None:
        with self._lock:
            if self._cancel.is_set():
                return  # finished after the cancel: dropped (the page has what it kept)
            fresh = self._shadow.trainings > self._seen_trainings
            self._seen_trainings = self._shadow.trainings
            self.events.append(event)
            index = len(self.events) - 1
            model = self._shadow.models.get(event.label) if event.status != "failed" else None
            if model is not None:
                self._kept[event.label] = model
                self._kept_trainings += fresh
            self._pending = None
        seconds = time.monotonic() - self._mark
        self._report(index, model if event.status == "trained" else None,
                     seconds if fresh and model is not None else None)
        self._mark = time.monotonic()  # after the callbacks: the next model starts now

    def _report(self, index: int, model: CrossValidatedModel | None,
                seconds: float | None) -> None:
        problems: list[str] = []
        if model is not None and self._on_model is not None:
            try:
                self._on_model(model)
            except Exception as exc:  # noqa: BLE001 — the model stays; the page says why
                problems.append(f"{model.model_id} could not be saved to the workspace: {exc}")
        if model is not None and seconds is not None and self._record_fit is not None:
            try:
                self._record_fit(*self._fit(model, seconds))
            except Exception as exc:  # noqa: BLE001 — an estimate less; the page says why
                problems.append(f"{model.model_id}: its training time was not recorded for "
                                f"the time estimates: {exc}")
        if problems:
            with self._lock:
                event = self.events[index]
                self.events[index] = dataclasses.replace(
                    event, warnings=(*event.warnings, *problems))

    def _fit(self, model: CrossValidatedModel, seconds: float) -> tuple:
        from cx_app.models.algorithms import resolve_preset

        preset = resolve_preset(model.algorithm_id, self.preset)
        rows, attributes = len(self._shadow.survey.y), len(self._shadow.survey.schema.attributes)
        factor = settings_factor(model.algorithm_id, settings=model.settings,
                                 calibration=self.calibration, preset=preset, rows=rows,
                                 attributes=attributes, folds=self.folds) if (
            model.algorithm_id in COSTS) else 1.0
        return (model.algorithm_id, preset, rows, attributes, self.folds, seconds / factor)

    def _run_pooled(self) -> None:
        with self._lock:
            if self.state != "queued":  # cancelled in the queue just as the pool started it
                return
            self.state, self.text = "running", "starting"
            self._mark = self.began = time.monotonic()
        self._run()

    def _run(self) -> None:
        try:
            with self._around() if self._around is not None else nullcontext():
                self._shadow.train(self.algorithms, folds=self.folds, seed=self.seed,
                                   calibration=self.calibration, store=self.store,
                                   preset=self.preset, progress=self._progress,
                                   on_event=self._event,
                                   on_cross_validated=self._cross_validated)
        except TrainingCancelled:
            state, message = "cancelled", ""
        except CxAppError as exc:  # e.g. a lost Dask cluster: the library's own sentence
            state, message = "failed", f"Training stopped: {exc}"
        except Exception as exc:  # noqa: BLE001 — shown on the page instead of a dead thread
            state, message = "failed", f"Training stopped by an unexpected error: {exc!r}"
        else:
            failed = sum(e.status == "failed" for e in self.events)
            state = "finished"
            message = "Training finished" + (f" ({failed} model(s) failed)" if failed else "")
        with self._lock:
            if self.state == "running":  # else cancelled already: the page has its models
                self.state, self.message, self.ended = state, message, time.monotonic()
                if state == "finished":
                    self.share = 1.0
            late, self._late = self._late, []
        self._ended.set()
        for index, model in late:
            self._report(index, model, None)

    # ------------------------------------------------------------------ page thread

    def cancel(self) -> None:
        with self._lock:
            self._cancel.set()
            if self.state == "queued":  # out of the queue at once; it never trained
                if self.pooled is not None:
                    self.pooled.cancel()  # False if the pool is starting it: it returns
                self.state, self.ended = "cancelled", time.monotonic()
                self.message = "Training cancelled before it started (no model was trained)."
            if self.state != "running":
                self._ended.set()
                return
            pending, self._pending = self._pending, None
            if pending is not None:
                self._kept[pending.model_id] = pending
                self._kept_trainings += 1
                self.events.append(TrainingEvent(
                    pending.model_id, "trained",
                    f"{pending.model_id}: cross-validated; cancelled during its permutation "
                    "importance, kept without it"))
                self._late.append((len(self.events) - 1, pending))
            self.state, self.message = "cancelled", self._cancel_message(pending)
            self.ended = time.monotonic()
        self._ended.set()

    def _cancel_message(self, pending: CrossValidatedModel | None) -> str:
        done = [e.label + (" without its permutation importance" if pending is not None
                           and e.label == pending.model_id else "")
                for e in self.events if e.status != "failed"]
        dropped = [a for a in self.algorithms if not any(
            e.label.split(" ")[0] == a for e in self.events)]
        kept = (f"kept: {', '.join(done)}" if done else "no model was finished")
        stopped = f"; {dropped[0]} was stopped during training and dropped" if dropped else ""
        untouched = (f"; not started: {', '.join(dropped[1:])}" if len(dropped) > 1 else "")
        return f"Training cancelled ({kept}{stopped}{untouched})."

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set() and not self.join(0)

    @property
    def running(self) -> bool:
        return self.state in ("queued", "running")

    def wait(self, timeout: float | None = None) -> bool:
        """Until the job ends for the page (a cancel ends it at once); True when it has."""
        return self._ended.wait(timeout)

    def join(self, timeout: float | None = None) -> bool:
        """Until the training thread has stopped (after a cancel: its current fold)."""
        if self.pooled is not None:
            return self.pooled.wait(timeout)
        if self._thread.ident is None:  # never started
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every model's warnings, each once, in order: a rare class's fold-assignment note is
        the same for every model trained on the survey."""
        return tuple(dict.fromkeys(w for event in self.events for w in event.warnings))

    @property
    def remaining(self) -> float | None:
        """The seconds left while it runs (:func:`cx_app.models.timing.remaining_seconds`);
        None when queued, ended, or without expected times."""
        if self.state != "running" or self.began is None or not self.expected:
            return None
        expected = [self.expected.get(a, Phases(0.0, 0.0)) for a in self.algorithms]
        return remaining_seconds(expected, self.share, time.monotonic() - self.began)

    def finish(self) -> bool:
        """Give the analysis the kept models once the job has ended; True when this call did."""
        with self._lock:
            if self.running or self.handed_over:
                return False
            self.handed_over = True
            models, trainings = dict(self._kept), self._kept_trainings
        self.analysis.models.update(models)
        self.analysis.trainings += trainings
        self.analysis.trained_keys |= {m.key for m in models.values()}
        return True
