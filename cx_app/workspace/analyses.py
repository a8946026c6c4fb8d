"""The app's analyses kept in the workspace: one program per survey file, stored as it is made.

Models remember the data key of the mapping they were trained on: a label edit keeps it; a new
target, attribute or scale gives another, and the old key's models stay (they come back when the
analyst returns to that mapping).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from cx_app.errors import WorkspaceError
from cx_app.project import ProjectModel
from cx_app.provenance import sha256_hex
from cx_app.workspace.access import Action
from cx_app.workspace.audit import AuditAction
from cx_app.workspace.database import serialize
from cx_app.workspace.names import NAME_LENGTH
from cx_app.workspace.records import (
    crossval_result,
    crossval_row,
    keep_file,
    model_file,
    npy_array,
    npy_bytes,
    program_models,
)
from cx_app.workspace.tables import Model, Program, StoredFile, Wave

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.models.results import Results
    from cx_app.survey.data import SurveyData
    from cx_app.survey.schema import SurveySchema
    from cx_app.workspace.access import Actor
    from cx_app.workspace.database import Database

__all__ = ["AnalysisStore", "ReopenedProgram"]


@dataclass(frozen=True, eq=False)
class ReopenedProgram:
    """A program as the app reopens it (``data`` None: its survey file is not kept)."""

    name: str
    filename: str | None
    sheet: str | None
    sha256: str
    data: bytes | None
    schema_yaml: str
    plan: dict[str, Any]
    data_key: str | None
    keep_files: bool
    models: tuple[ProjectModel, ...]
    other_models: int


def _stem(filename: str | None) -> str:
    stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", filename or "survey").strip() or "survey"
    return stem[:NAME_LENGTH - 8]


def _model_key(row: Model) -> str:
    """Its training key, or (a model the CLI trained) one made from its row."""
    return row.training_key or f"program-model-{row.id}"


def _project_model(row: Model, program_name: str) -> ProjectModel:
    from cx_app.models.drivers import PermutationImportance

    cv = crossval_result(row.crossval)
    recipe = row.recipe or {}
    permutation = None
    if row.permutation is not None and recipe.get("permutation"):
        permutation = PermutationImportance(**recipe["permutation"],
                                            per_fold=npy_array(row.permutation))
    final = None if row.skops is None else model_file(row, program_name)
    return ProjectModel(model_id=row.model_id, algorithm_id=row.algorithm,
                        settings=dict(recipe.get("settings", cv.settings)),
                        folds=int(recipe.get("folds", cv.folds)),
                        seed=int(recipe.get("seed", cv.seed)), key=_model_key(row), cv=cv,
                        permutation=permutation, final=final, final_bytes=row.skops)


class ProgramLookup(Protocol):
    """What the analyses need of a workspace (:class:`~cx_app.workspace.programs.Workspace`)."""

    database: Database
    actor: Actor

    def check_new_program(self, team: str | None) -> None: ...

    def record_change(self, session: Session | None, action: AuditAction, program: str,
                      detail: str | None = None) -> None: ...

    def program_row(self, session: Session, name: str, action: Action = Action.READ) -> Program:
        ...


class AnalysisStore:
    def __init__(self, workspace: ProgramLookup) -> None:
        self.workspace = workspace
        self.database = workspace.database

    # ------------------------------------------------------------------ programs

    def find_program(self, sha256: str, sheet: str | None, filename: str | None
                     ) -> str | None:
        """The newest program of this survey file that the user may change, if any."""
        return self.database.read(lambda s: self._found(s, sha256, sheet, filename))

    def _found(self, session: Session, sha256: str, sheet: str | None, filename: str | None
               ) -> str | None:
        rows = session.execute(select(Program.name, Program.team).where(
            Program.survey_sha256 == sha256,
            Program.survey_sheet.is_(None) if sheet is None else Program.survey_sheet == sheet,
            Program.survey_filename == filename).order_by(Program.id.desc())).all()
        actor = self.workspace.actor
        return next((n for n, team in rows if actor.can(team, Action.ANALYSE)), None)

    def program_for(self, survey: SurveyData, data: bytes | None, *,
                    keep_files: bool = True, team: str | None = None) -> str:
        """The program of ``survey`` (found by its file, else created named after it:
        ``bank_nps (2)``), its mapping set to the survey's. ``data`` is kept when
        ``keep_files``, never when the file held personal data (dropped at import)."""
        source = survey.source
        keep_files = keep_files and not source.held_personal_data
        name = self.find_program(source.sha256, source.sheet, source.filename)
        if name is not None:
            self.set_mapping(name, survey)
            if keep_files and data is not None:
                self.keep_file(name, data, source.filename)
            return name
        self.workspace.check_new_program(team)

        def work(session: Session) -> str:
            serialize(session, f"program of {source.sha256} {source.sheet} {source.filename}")
            made = self._found(session, source.sha256, source.sheet, source.filename)
            if made is not None:  # made meanwhile by another session (two people at once)
                return made
            stem = _stem(source.filename)
            taken = set(session.scalars(select(Program.name).where(Program.name.startswith(stem))))
            chosen = next(candidate for candidate in
                          (stem if i == 1 else f"{stem} ({i})" for i in range(1, 10_000))
                          if candidate not in taken)
            program = Program(
                name=chosen, schema_yaml=survey.schema.to_yaml(),
                plan=survey.schema.plan_spec.model_dump(mode="json"), settings={},
                survey_filename=(source.filename or "")[:500] or None,
                survey_sheet=None if source.sheet is None else source.sheet[:500],
                survey_sha256=source.sha256, data_key=survey.data_key,
                keep_files=keep_files, team=team)
            session.add(program)
            session.flush()
            self.workspace.record_change(session, AuditAction.PROGRAM_CREATED, chosen,
                                         f"from {source.filename}"
                                         + (f", team {team}" if team else ""))
            if keep_files and data is not None:
                keep_file(session, program.id, data, source.filename or None)
            return chosen

        return self.database.write(work)

    def _program(self, session: Session, name: str, action: Action = Action.READ) -> Program:
        return self.workspace.program_row(session, name, action)

    def team_of(self, name: str) -> str | None:
        return self.database.read(lambda s: self._program(s, name).team)

    def set_mapping(self, name: str, survey: SurveyData) -> None:
        """Models of other data keys stay."""
        yaml_text, data_key = survey.schema.to_yaml(), survey.data_key

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ANALYSE)
            if program.schema_yaml != yaml_text or program.data_key != data_key:
                program.schema_yaml, program.data_key = yaml_text, data_key
                self.workspace.record_change(  # labels, columns, scales (issue 33)
                    session, AuditAction.MAPPING_CHANGED, program.name,
                    f"the mapping of {survey.source.filename}: "
                    f"{len(survey.schema.attributes)} attributes, target "
                    f"{survey.schema.target.column}")

        self.database.write(work)

    def set_plan(self, name: str, plan: dict[str, Any]) -> None:
        """A change is audited (its group names are labels the reports show)."""

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ANALYSE)
            if program.plan != plan:
                program.plan = plan
                self.workspace.record_change(session, AuditAction.GROUPING_CHANGED, program.name,
                                             "the grouping and its labels")

        self.database.write(work)

    def keep_file(self, name: str, data: bytes, filename: str | None) -> None:
        self.database.write(lambda session: keep_file(
            session, self._program(session, name, Action.ANALYSE).id, data, filename))

    def kept_file(self, name: str, sha256: str) -> bytes | None:
        return self.database.read(lambda s: s.scalar(
            select(StoredFile.data).where(StoredFile.program_id == self._program(s, name).id,
                                          StoredFile.sha256 == sha256)))

    def set_keep_files(self, name: str, keep: bool) -> None:
        """Stopping deletes the files already kept."""

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ANALYSE)
            program.keep_files = keep
            if not keep:
                session.execute(delete(StoredFile).where(StoredFile.program_id == program.id))

        self.database.write(work)

    # ------------------------------------------------------------------ models

    def store_model(self, name: str, model: Any, *, data_key: str, respondents: int) -> None:
        """Store a :class:`cx_app.app.session.CrossValidatedModel` once per training key."""
        if model.key.startswith("program-model-"):
            return  # a model the program holds already (made by the CLI)
        cv, permutation = model.cv, model.permutation
        recipe = {"settings": {k: v if isinstance(v, int | float | str | bool | type(None))
                               else str(v) for k, v in model.settings.items()},
                  "folds": model.folds, "seed": model.seed,
                  "permutation": None if permutation is None else permutation.model_dump(
                      mode="json", include={"algorithm_id", "attributes", "scoring", "n_repeats"})}
        def work(session: Session) -> None:
            program = self._program(session, name, Action.ANALYSE)
            if session.scalar(select(Model.id).where(Model.program_id == program.id,
                                                     Model.training_key == model.key)):
                return
            session.add(Model(
                program_id=program.id, model_id=model.model_id[:100],
                algorithm=model.algorithm_id, preset=str(cv.preset or "default")[:20],
                calibration=str(cv.calibration)[:50], file_sha256=None, skops=None,
                model_metadata={}, fit_seconds=float(cv.fit_seconds),
                training_key=model.key, data_key=data_key,
                recipe=json.loads(json.dumps(recipe, default=str)),
                permutation=None if permutation is None else npy_bytes(permutation.per_fold),
                respondents=int(respondents), crossval=crossval_row(cv)))
            self.workspace.record_change(
                session, AuditAction.MODEL_TRAINED, name, f"{model.model_id}, {model.folds}-fold "
                f"cross-validation on {respondents} respondents")

        self.database.write(work)

    def remove_model(self, name: str, key: str) -> bool:
        """Its cross-validation and wave estimates go with it; whether there was one."""

        def work(session: Session) -> bool:
            program = self._program(session, name, Action.ANALYSE)
            ids = [r.id for r in program_models(session, program) if _model_key(r) == key]
            session.execute(delete(Model).where(Model.id.in_(ids)))
            return bool(ids)

        return self.database.write(work)

    def store_final(self, name: str, key: str, model: TrainedModel) -> None:
        from cx_app.estimate.model_file import model_bytes

        skops = model_bytes(model)
        metadata = json.loads(json.dumps(model.metadata(), default=str))

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ANALYSE)
            row = next((r for r in program_models(session, program) if _model_key(r) == key), None)
            if row is None:
                raise WorkspaceError(f"the program {name!r} has no model {key!r} to add the "
                                     "fitted model to")
            row.skops, row.file_sha256, row.model_metadata = skops, sha256_hex(skops), metadata

        self.database.write(work)

    # ------------------------------------------------------------------ reopening

    def reopen(self, name: str) -> ReopenedProgram:

        def work(session: Session) -> ReopenedProgram:
            program = self._program(session, name)
            data = session.scalar(select(StoredFile.data).where(
                StoredFile.program_id == program.id,
                StoredFile.sha256 == program.survey_sha256))
            if data is None:
                data = session.scalar(select(Program.survey_bytes).where(
                    Program.id == program.id))
            rows = program_models(session, program, full=True)
            current = [r for r in rows if r.data_key in (None, program.data_key)]
            models = [_project_model(row, name) for row in current]
            return ReopenedProgram(
                name=program.name, filename=program.survey_filename,
                sheet=program.survey_sheet, sha256=program.survey_sha256, data=data,
                schema_yaml=program.schema_yaml, plan=dict(program.plan),
                data_key=program.data_key, keep_files=bool(program.keep_files),
                models=tuple(models), other_models=len(rows) - len(current))

        return self.database.read(work)

    def models_of(self, name: str, data_key: str) -> tuple[ProjectModel, ...]:
        """The program's models trained on the mapping ``data_key`` (one used before)."""

        def work(session: Session) -> tuple[ProjectModel, ...]:
            rows = program_models(session, self._program(session, name),
                                  Model.data_key == data_key, full=True)
            return tuple(_project_model(r, name) for r in rows)

        return self.database.read(work)

    def wave_count(self, name: str) -> int:
        return int(self.database.read(lambda s: s.scalar(
            select(func.count(Wave.id)).where(Wave.program_id == self._program(s, name).id))))

    def stored_results(self, name: str, schema: SurveySchema) -> Results:
        """The results of the stored cross-validations and the kept survey file, by the
        library's one builder (nothing is retrained)."""
        import numpy as np

        from cx_app.engine.grouping import resolve_plan
        from cx_app.engine.plan import PlanSpec
        from cx_app.models.analysis import finish_evaluation
        from cx_app.models.evaluation import evaluate_result
        from cx_app.survey.importing import load_survey

        program = self.reopen(name)
        if program.data is None or not program.models:
            raise WorkspaceError(
                f"the program {name!r} has no results yet: it needs a trained model and its "
                "survey file kept in the workspace (the app's Project page) to report on.")
        survey = load_survey(program.data, schema=schema, sheet=program.sheet,
                             filename=program.filename)
        plan = resolve_plan(PlanSpec.model_validate(program.plan), survey.classes)
        first = program.models[0].cv.fold
        models = [m for m in program.models if np.array_equal(m.cv.fold, first)]
        calibrations = {m.cv.calibration for m in models}
        return finish_evaluation(
            survey, {m.model_id: evaluate_result(m.cv, plan) for m in models}, plan, None,
            seed=models[0].seed, calibration=calibrations.pop() if len(calibrations) == 1
            else ", ".join(f"{m.model_id}: {m.cv.calibration}" for m in models))
