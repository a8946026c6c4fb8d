"""Programs in the workspace: create one from a reference survey, add and remove waves, show it.

Returns typed documents, never rows. Adding waves is content-addressed: a file whose SHA-256 the
program has already is not read again. Every change writes its audit row in its transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload, undefer

from cx_app.errors import WorkspaceError
from cx_app.provenance import sha256_hex
from cx_app.workspace import audit
from cx_app.workspace.access import Action, Actor
from cx_app.workspace.database import Database, open_database
from cx_app.workspace.labels import wave_order_key
from cx_app.workspace.names import program_name
from cx_app.workspace.records import (
    FittedModel,
    KeptWave,
    as_utc,
    estimate_row,
    estimating_row,
    keep_file,
    model_file,
    model_rows,
    model_summary,
    program_models,
    survey_identity,
    wave_view,
)
from cx_app.workspace.services import (
    EstimatedPart,
    estimate_file,
    estimate_kept,
    read_file,
    train_reference,
)
from cx_app.workspace.tables import Estimate, Model, Program, Report, StoredFile, Wave
from cx_app.workspace.views import AddedWave, ProgramSummary, ProgramView, with_change_alerts

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.models.results import Results
    from cx_app.survey.schema import SurveySchema
    from cx_app.workspace.identities import SignIn
    from cx_app.workspace.teams import Teams

__all__ = ["Workspace"]

FILE_LENGTH = 500  # the longest file and sheet name the tables hold


def _cut(text: str | None, length: int) -> str | None:
    return None if text is None else text[:length]


def _current(program: Program) -> Any:
    """Models of the program's mapping in use (a model the CLI made has no data key)."""
    return (Model.data_key.is_(None) if program.data_key is None
            else Model.data_key.is_(None) | (Model.data_key == program.data_key))


class Workspace:
    """A workspace database and its programs, acting for ``user`` (default: the operating-system
    account); ``teams``: team mode, the user sees and changes only what their roles allow."""

    def __init__(self, database: Database, *, user: str | None = None,
                 teams: Teams | None = None, acting_as: str | None = None,
                 sign_in: SignIn | None = None) -> None:
        self.database = database
        self.sign_in = sign_in  # the audit trail records its issuer and subject
        user = audit.cli_user() if user is None else user.strip()
        if not user or len(user) > audit.USER_CHARS:
            raise WorkspaceError(f"a workspace acts for a user named in 1 to {audit.USER_CHARS} "
                                 "characters (the audit trail records who made each change)")
        self.actor = Actor(user, teams, acting_as)

    @classmethod
    def open(cls, url: str | None = None, *, user: str | None = None,
             teams: Teams | None = None, acting_as: str | None = None) -> Workspace:
        """``acting_as``: the e-mail the teams file is asked about when it is not ``user``."""
        return cls(open_database(url), user=user, teams=teams, acting_as=acting_as)

    def for_user(self, user: str, teams: Teams | None = None,
                 sign_in: SignIn | None = None) -> Workspace:
        """This workspace's database acting for ``user`` (one per signed-in user on one shared
        engine: do not :meth:`close` it)."""
        return Workspace(self.database, user=user, teams=teams, sign_in=sign_in)

    @property
    def user(self) -> str:
        return self.actor.user

    def record_change(self, session: Session | None, action: audit.AuditAction, program: str,
                      detail: str | None = None) -> None:
        found = self.sign_in
        audit.record(self.database, self.user, action, program, _cut(detail, 2000),
                     session=session, issuer=None if found is None else found.issuer,
                     subject=None if found is None else found.subject)

    def close(self) -> None:
        self.database.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ finding programs

    def _program(self, session: Session, name: str, action: Action = Action.READ,
                 doing: str | None = None) -> Program:
        return self.actor.find(session, name, action, self.database.shown_url, doing)

    program_row = _program  # how cx_app.workspace.analyses (ProgramLookup) finds programs

    def list_programs(self) -> list[ProgramSummary]:

        def work(session: Session) -> list[ProgramSummary]:
            counts = dict(session.execute(select(Wave.program_id, func.count(Wave.id))
                                          .group_by(Wave.program_id)).all())
            last: dict[int, tuple[Any, str]] = {}
            for program_id, created, label in session.execute(
                    select(Wave.program_id, Wave.created, Wave.label).order_by(Wave.id)):
                last[program_id] = (created, label)  # the newest row of each program last
            programs = session.scalars(select(Program).options(selectinload(Program.models))
                                       .order_by(Program.name)).all()
            return [ProgramSummary(p.name, as_utc(p.created),
                                   tuple(m.model_id for m in p.models), counts.get(p.id, 0),
                                   survey_identity(p), p.team,
                                   last[p.id][1] if p.id in last else None,
                                   as_utc(last[p.id][0]) if p.id in last else as_utc(p.created))
                    for p in programs if self.actor.can(p.team, Action.READ)]

        return self.database.read(work)

    # ------------------------------------------------------------------ creating

    def create_program(self, name: str, source: Any, *, schema: SurveySchema | None = None,
                       sheet: str | int | None = None, filename: str | None = None,
                       algorithm: str = "lr", preset: str | None = None,
                       calibration: str = "auto", folds: int = 10, seed: int = 0,
                       keep_survey: bool = False, missing_policy: str | None = None,
                       team: str | None = None, progress: Any = None) -> ProgramView:
        """A new program from its reference survey and a model of ``algorithm`` trained on it;
        ``keep_survey``: store the file itself (default: its SHA-256, name and sheet only)."""
        from cx_app.estimate.model_file import model_bytes

        name = program_name(name)
        self.check_new_program(team)
        self._refuse_taken(name)
        made = train_reference(source, filename=filename, schema=schema, sheet=sheet,
                               missing_policy=missing_policy, algorithm=algorithm,
                               preset=preset, calibration=calibration, folds=folds, seed=seed,
                               progress=progress)
        survey, data, model_id = made.survey, made.data, made.model_id
        row = model_rows(made.model, made.cv, model_id=model_id, skops=model_bytes(made.model))
        row.data_key, row.respondents = survey.data_key, len(survey.y)

        keep = keep_survey and not survey.source.held_personal_data  # never personal data

        def work(session: Session) -> None:
            session.add(Program(
                name=name, schema_yaml=survey.schema.to_yaml(),
                plan=survey.schema.plan_spec.model_dump(mode="json"), settings=made.settings,
                survey_filename=_cut(survey.source.filename, FILE_LENGTH),
                survey_sheet=_cut(survey.source.sheet, FILE_LENGTH),
                survey_sha256=survey.source.sha256, survey_bytes=data if keep else None,
                results_json=made.results.to_json(), data_key=survey.data_key,
                keep_files=keep, models=[row], team=team))
            session.flush()
            self.record_change(session, audit.AuditAction.PROGRAM_CREATED, name,
                               f"from {survey.source.filename}, model {model_id}"
                               + (f", team {team}" if team else ""))

        try:
            self.database.write(work)
        except IntegrityError:  # created by another process in the meantime
            self._refuse_taken(name)
            raise
        return self.show(name)

    def check_new_program(self, team: str | None) -> None:
        self.actor.require_known_team(team)
        self.actor.require(team, Action.ANALYSE, doing="creating a program")

    def _refuse_taken(self, name: str) -> None:
        taken = self.database.read(
            lambda s: s.scalar(select(Program.id).where(Program.name == name)))
        if taken is not None:
            raise WorkspaceError(f"the workspace {self.database.shown_url} already has a program "
                                 f"named {name!r}: choose another name, or add waves to it "
                                 "(cx-app program add-wave).")

    # ------------------------------------------------------------------ waves

    def add_waves(self, name: str, sources: Sequence[Any], *, label: str | None = None,
                  sheet: str | int | None = None, audit_sample: Any = None) -> list[AddedWave]:
        """Add each file (a path, or ``(bytes, file name)``) as a wave; ``label`` and
        ``audit_sample`` name one wave's."""
        if (label is not None or audit_sample is not None) and len(sources) > 1:
            raise WorkspaceError(f"a {'label' if label else 'audit sample'} names one wave: give "
                                 "one file, or let each file's wave column or name label it")
        self.database.read(lambda s: self._program(s, name, Action.ANALYSE, "adding waves"))
        models = self._models(name)
        if not models:
            raise WorkspaceError(f"the program {name!r} has no model fitted on all respondents "
                                 "yet, so its waves cannot be estimated: fit one first (the "
                                 "New wave page's 'Fit on all respondents').")
        added: list[AddedWave] = []
        for source in sources:
            data, filename = read_file(source)
            sample = None if audit_sample is None else read_file(audit_sample)
            added.extend(self._add_file(name, models, data, filename, label, sheet, sample))
        return added

    def _models(self, name: str) -> list[FittedModel]:

        def work(session: Session) -> list[Model]:
            program = self._program(session, name)
            return program_models(session, program, Model.skops.is_not(None), _current(program),
                                  full=True)

        return [FittedModel(row_id=row.id, model_id=row.model_id, model=model_file(row, name))
                for row in self.database.read(work)]

    def _existing(self, name: str, sha256: str) -> list[AddedWave]:
        def work(session: Session) -> list[AddedWave]:
            program = self._program(session, name)
            waves = session.scalars(select(Wave).where(Wave.program_id == program.id,
                                                       Wave.file_sha256 == sha256)).all()
            return [AddedWave(w.label, w.filename, w.file_sha256, w.part, w.respondents,
                              "already") for w in waves]

        return self.database.read(work)

    def _add_file(self, name: str, models: list[FittedModel], data: bytes, filename: str,
                  label: str | None, sheet: str | int | None,
                  sample: tuple[bytes, str] | None = None) -> list[AddedWave]:
        sha256 = sha256_hex(data)
        existing = self._existing(name, sha256)
        if existing and sample:
            raise WorkspaceError(f"{filename} is already a wave of {name!r}: remove it first")
        if existing:
            return existing
        parts = estimate_file(models, data, filename, label=label, sheet=sheet, sample=sample)
        waves = [self._wave_row(p, sha256, filename) for p in parts]
        personal = any(p.held_personal_data for p in parts)

        def work(session: Session) -> list[AddedWave]:
            program = self._program(session, name, Action.ANALYSE, "adding waves")
            if session.scalar(select(Wave.id).where(Wave.program_id == program.id,
                                                    Wave.file_sha256 == sha256).limit(1)):
                return []  # added by another process meanwhile
            for wave in waves:
                wave.program_id = program.id
                session.add(wave)
                self.record_change(session, audit.AuditAction.WAVE_ADDED, name,
                                   f"{wave.label} ({wave.filename}, {wave.respondents} respondents)")
            if program.keep_files and not personal:  # its personal data was dropped: not kept
                keep_file(session, program.id, data, filename)
            return [AddedWave(w.label, w.filename, w.file_sha256, w.part, w.respondents,
                              "added") for w in waves]

        try:
            added = self.database.write(work)
        except IntegrityError:  # the same file, added by another process at the same moment
            added = []
        return added or self._existing(name, sha256)

    @staticmethod
    def _wave_row(part: EstimatedPart, sha256: str, filename: str) -> Wave:
        return Wave(file_sha256=sha256, part=part.part, filename=filename[:FILE_LENGTH],
                    sheet=_cut(part.sheet, FILE_LENGTH), label=part.label, wave_date=part.date,
                    respondents=part.respondents,
                    estimates=[estimate_row(e.model_row, e.document, e.segments)
                               for e in part.estimates])

    def estimate_waves(self, name: str, model: str) -> list[str]:
        """Estimate by ``model`` every wave it has not estimated yet, from the kept files; the
        labels of the waves whose file is not kept."""
        def fitted(session: Session) -> int | None:
            program = self._program(session, name)
            return session.scalar(select(Model.id).where(
                Model.program_id == program.id, Model.model_id == model,
                Model.skops.is_not(None), _current(program)).order_by(Model.id).limit(1))

        row_id = self.database.read(fitted)
        if row_id is None:
            raise WorkspaceError(f"the program {name!r} has no model {model!r} fitted on all "
                                 "respondents.")

        def missing(session: Session) -> list[KeptWave]:
            program = self._program(session, name, Action.ANALYSE, "estimating waves")
            done = select(Estimate.wave_id).where(Estimate.model_id == row_id)
            waves = session.scalars(select(Wave).where(Wave.program_id == program.id,
                                                       Wave.id.not_in(done))).all()
            files = dict(session.execute(select(StoredFile.sha256, StoredFile.data).where(
                StoredFile.program_id == program.id,
                StoredFile.sha256.in_({w.file_sha256 for w in waves}))).all())
            return [KeptWave(wave_id=w.id, sha256=w.file_sha256, part=w.part,
                             filename=w.filename, sheet=w.sheet, label=w.label,
                             data=files.get(w.file_sha256)) for w in waves]

        todo = self.database.read(missing)
        if not any(w.data is not None for w in todo):
            return [w.label for w in todo]
        # the model file is opened (and checked) only when a wave waits for it
        row = self.database.read(lambda session: session.scalars(
            select(Model).options(undefer(Model.skops)).where(Model.id == row_id)).one())
        estimates, not_kept = estimate_kept(
            FittedModel(row_id=row_id, model_id=model, model=model_file(row, name)), todo)

        def work(session: Session) -> None:
            for wave_id, found in estimates.items():
                row = estimate_row(row_id, found.document, found.segments)
                row.wave_id = wave_id
                session.add(row)

        if estimates:
            with suppress(IntegrityError):  # estimated by another process meanwhile
                self.database.write(work)
        return not_kept

    def remove_wave(self, name: str, label: str, *, sha256: str | None = None) -> int:
        """``sha256``: which file, when two carry the same label; the number of waves removed."""

        def work(session: Session) -> int:
            program = self._program(session, name, Action.ANALYSE, "removing waves")
            where = [Wave.program_id == program.id, Wave.label == label]
            if sha256:
                where.append(Wave.file_sha256.startswith(sha256.lower()))
            found = session.execute(select(Wave.id, Wave.filename).where(*where)).all()
            if not found:
                raise WorkspaceError(f"the program {name!r} has no wave labelled {label!r}.")
            if len(found) > 1:
                files = ", ".join(sorted({str(f) for _, f in found}))
                raise WorkspaceError(f"the program {name!r} has {len(found)} waves labelled "
                                     f"{label!r} ({files}): name the file's SHA-256 too.")
            session.execute(delete(Wave).where(Wave.id.in_([i for i, _ in found])))
            self.record_change(session, audit.AuditAction.WAVE_REMOVED, name,
                               f"{label} ({found[0][1]})")
            return len(found)

        return self.database.write(work)

    # ------------------------------------------------------------------ reading

    def show(self, name: str, *, model: str | None = None) -> ProgramView:
        """The program with its waves in wave order, estimated by ``model`` (default: the one
        the New wave page preselects, :func:`estimating_row`)."""

        def work(session: Session) -> ProgramView:
            program = self._program(session, name)
            rows = program_models(session, program, _current(program))
            if not rows:
                raise WorkspaceError(f"the program {name!r} has no model yet.")
            chosen = estimating_row(rows) if model is None else next(
                (r for r in rows if r.model_id == model), None)
            if chosen is None:
                raise WorkspaceError(f"the program {name!r} has no model {model!r}; its models: "
                                     f"{', '.join(r.model_id for r in rows)}.")
            pairs = session.execute(
                select(Wave, Estimate).join(Estimate, Estimate.wave_id == Wave.id)
                .where(Wave.program_id == program.id, Estimate.model_id == chosen.id)).all()
            pairs = sorted(pairs, key=lambda p: (wave_order_key(p[0].label, p[0].wave_date),
                                                 p[0].id))  # one label: in the order added
            return ProgramView(
                name=program.name, created=as_utc(program.created), team=program.team,
                survey=survey_identity(program),
                survey_included=bool(session.scalar(select(Program.survey_bytes.is_not(None))
                                                    .where(Program.id == program.id))),
                models=tuple(model_summary(r) for r in rows),
                waves=with_change_alerts([wave_view(w, e, chosen.model_id) for w, e in pairs]))

        return self.database.read(work)

    def program_model(self, name: str, model: str | None = None) -> TrainedModel:
        for fitted in self._models(name):
            if model is None or fitted.model_id == model:
                return fitted.model
        raise WorkspaceError(f"the program {name!r} has no model {model!r}.")

    def results(self, name: str) -> Results:
        """The one made when the CLI created the program, else (a program of the app) built
        from the stored cross-validations and the kept survey file."""
        import json

        from cx_app.models.results import Results

        text = self.database.read(lambda s: s.scalar(
            select(Program.results_json).where(Program.id == self._program(s, name).id)))
        if text is None:
            from cx_app.workspace.analyses import AnalysisStore

            return AnalysisStore(self).stored_results(name, self.schema(name))
        return Results.from_dict(json.loads(text), source=f"program {name}")

    def schema(self, name: str) -> SurveySchema:
        from cx_app.survey.schema import schema_from_yaml_text

        text = self.database.read(lambda s: self._program(s, name).schema_yaml)
        return schema_from_yaml_text(text, f"program {name}'s schema")

    def record_report(self, name: str, kind: str, path: Path, data: bytes, waves: int) -> None:
        def work(session: Session) -> None:
            session.add(Report(program_id=self._program(session, name).id, kind=kind,
                               filename=_cut(str(path), FILE_LENGTH), sha256=sha256_hex(data),
                               size=len(data),
                               waves=waves))
            self.record_change(session, audit.AuditAction.REPORT_EXPORTED, name,
                               f"{kind} {Path(path).name}, {waves} wave(s)")

        self.database.write(work)

    def delete_program(self, name: str) -> None:
        """Its audit rows stay."""

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ADMINISTER, "deleting a program")
            session.execute(delete(Program).where(Program.id == program.id))
            self.record_change(session, audit.AuditAction.PROGRAM_DELETED, name,
                               None if program.team is None else f"team {program.team}")

        self.database.write(work)

    def move_program(self, name: str, team: str) -> None:
        self.actor.require_known_team(team)

        def work(session: Session) -> None:
            program = self._program(session, name, Action.ADMINISTER, "moving a program")
            self.actor.require(team, Action.ADMINISTER, doing="moving a program into a team")
            before, program.team = program.team, team
            self.record_change(session, audit.AuditAction.PROGRAM_MOVED, name,
                               f"from {before or 'no team'} to {team}")

        self.database.write(work)

    def audit(self, name: str, *, limit: int = audit.DEFAULT_LIMIT
              ) -> tuple[audit.AuditRecord, ...]:
        """Newest first, since it was created (an earlier program of that name is not it)."""
        created = self.database.read(lambda s: self._program(s, name).created)
        return audit.events(self.database, name, since=created, limit=limit)
