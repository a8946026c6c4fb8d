"""A training run in a background thread that the user can cancel (no streamlit import).

The Models page starts a :class:`TrainingJob` and shows its progress; the job cross-validates
the chosen algorithms one after the other with :meth:`cx_app.app.session.Analysis.train` on a
*shadow* of the user's analysis (so that no page ever reads the analysis' models while another
thread adds to them), and :meth:`TrainingJob.finish` hands the finished models to the analysis,
in the page's thread. A cancel is an :class:`threading.Event` checked by the progress callback
after every fold (and before the permutation importance): it raises :class:`TrainingCancelled`,
which stops the model being trained; the models finished before it are kept, the partly trained
one is dropped and named in :attr:`TrainingJob.message`.

Why a thread: Streamlit stops a script run when the user clicks anything (another page, a
widget). Training in the script run would die with it; a job in its own thread goes on, and the
page picks it up again (progress, Cancel, result) whenever it is shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from cx_app.app.session import Analysis, ResultStore, TrainingEvent
from cx_app.errors import CxAppError

__all__ = ["TrainingCancelled", "TrainingJob"]


class TrainingCancelled(Exception):  # noqa: N818 — a request, not an error
    """Raised inside a training by its progress callback when the user cancelled it. Not a
    :class:`~cx_app.errors.CxAppError`: ``Analysis.train`` must not take it for a failed model
    and go on with the next one."""


class TrainingJob:
    """One click of "Train": ``algorithms`` (``{algorithm id: settings}``) cross-validated in a
    background thread. ``state``: ``"running"``, ``"finished"``, ``"cancelled"`` or
    ``"failed"`` (an unexpected error; ``message`` says which). Read by the page while it runs:
    ``share`` (0..1), ``text``, ``events`` (one :class:`TrainingEvent` per model done)."""

    def __init__(self, analysis: Analysis, algorithms: Mapping[str, Mapping[str, Any]], *,
                 folds: int, seed: int, calibration: str, store: ResultStore,
                 around: Callable[[], AbstractContextManager[Any]] | None = None,
                 preset: str | None = None) -> None:
        """``around``: a context to train inside, entered in the training thread (e.g.
        :func:`cx_app.models.cluster.on_cluster`, whose routing is per thread)."""
        self.analysis = analysis
        self._around = around
        self.preset = preset
        self.algorithms = {k: dict(v) for k, v in algorithms.items()}
        self.folds, self.seed, self.calibration = folds, seed, calibration
        self.store = store
        self.state = "running"
        self.share = 0.0
        self.text = "starting"
        self.message = ""
        self.events: list[TrainingEvent] = []
        self.started = time.monotonic()
        self.ended: float | None = None
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._finished = False
        # trains on a shadow holding the user's survey, plan and trained keys
        self._shadow = Analysis(survey=analysis.survey, data_key=analysis.data_key,
                                plan=analysis.plan, trained_keys=set(analysis.trained_keys),
                                memo_items=analysis.memo_items)
        self._thread = threading.Thread(target=self._run, name="cx-app-training", daemon=True)

    def start(self) -> TrainingJob:
        self._thread.start()
        return self

    # ------------------------------------------------------------------ worker thread

    def _progress(self, share: float, text: str) -> None:
        if self._cancel.is_set():
            raise TrainingCancelled
        with self._lock:
            self.share, self.text = share, text

    def _event(self, event: TrainingEvent) -> None:
        with self._lock:
            self.events.append(event)

    def _run(self) -> None:
        try:
            with self._around() if self._around is not None else nullcontext():
                self._shadow.train(self.algorithms, folds=self.folds, seed=self.seed,
                                   calibration=self.calibration, store=self.store,
                                   preset=self.preset, progress=self._progress,
                                   on_event=self._event)
        except TrainingCancelled:
            done = [e.label for e in self.events if e.status != "failed"]
            dropped = [a for a in self.algorithms if not any(
                e.label.split(" ")[0] == a for e in self.events)]
            kept = (f"kept: {', '.join(done)}" if done else "no model was finished")
            stopped = f"; {dropped[0]} was stopped during training and dropped" if dropped else ""
            untouched = (f"; not started: {', '.join(dropped[1:])}" if len(dropped) > 1 else "")
            state, message = "cancelled", f"Training cancelled ({kept}{stopped}{untouched})."
        except CxAppError as exc:  # e.g. a lost Dask cluster: the library's own sentence
            state, message = "failed", f"Training stopped: {exc}"
        except Exception as exc:  # noqa: BLE001 — shown on the page instead of a dead thread
            state, message = "failed", f"Training stopped by an unexpected error: {exc!r}"
        else:
            failed = sum(e.status == "failed" for e in self.events)
            state = "finished"
            message = "Training finished" + (f" ({failed} model(s) failed)" if failed else "")
        with self._lock:
            self.state, self.message, self.ended = state, message, time.monotonic()
            if state == "finished":
                self.share = 1.0

    # ------------------------------------------------------------------ page thread

    def cancel(self) -> None:
        """Ask the job to stop after the current fold."""
        self._cancel.set()

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set() and self.running

    @property
    def running(self) -> bool:
        return self.state == "running"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (or ``timeout`` seconds); True when it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def handed_over(self) -> bool:
        """Whether :meth:`finish` has given the analysis the job's models."""
        return self._finished

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def finish(self) -> bool:
        """Give the analysis the models finished by the job (once, when it has ended; a
        cancelled job's finished models too). True when this call handed them over."""
        if self.running or self._finished or self._thread.is_alive():
            return False
        self._finished = True
        shadow = self._shadow
        self.analysis.models.update(shadow.models)
        self.analysis.trainings += shadow.trainings
        self.analysis.trained_keys |= shadow.trained_keys
        return True
