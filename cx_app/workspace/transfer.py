"""One program out of the workspace as a ``.cxproj`` file, and back in.

What only a program has (each wave's label, date, file, part and segment estimates) travels in
the project's ``settings.json`` under ``program``; a project saved by the app imports too, its
estimates as waves labelled from their files.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, undefer

from cx_app.atomic_files import write_bytes_atomic
from cx_app.errors import WorkspaceError
from cx_app.project import Project, ProjectModel, project_bytes, read_project
from cx_app.provenance import survey_key, training_key
from cx_app.workspace.audit import AuditAction
from cx_app.workspace.labels import label_from_file
from cx_app.workspace.names import program_name
from cx_app.workspace.programs import Workspace
from cx_app.workspace.records import crossval_result, estimate_row, model_file, model_rows
from cx_app.workspace.tables import CrossValidation, Model, Program, Wave

__all__ = ["export_program", "import_program"]


def _project_model(row: Model, program: Program, name: str) -> ProjectModel:
    cv = crossval_result(row.crossval)
    data_key = survey_key(program.survey_sha256, program.survey_sheet, program.schema_yaml,
                          program.survey_filename)
    recipe = {"settings": dict(cv.settings), "calibration": cv.calibration,
              "preset": cv.preset}
    return ProjectModel(model_id=row.model_id, algorithm_id=row.algorithm,
                        settings=dict(cv.settings), folds=cv.folds, seed=cv.seed,
                        key=training_key(data_key, row.algorithm, recipe, cv.folds, cv.seed),
                        cv=cv, final=model_file(row, name), final_bytes=row.skops)


def export_program(workspace: Workspace, name: str, path: str | Path | None = None) -> bytes:
    view = workspace.show(name)  # refuses a program the user may not read

    def work(session: Session) -> Project:
        program = session.scalar(
            select(Program).where(Program.name == name)
            .options(undefer(Program.survey_bytes), undefer(Program.results_json),
                     selectinload(Program.models).options(
                         undefer(Model.skops), selectinload(Model.crossval).options(
                             undefer(CrossValidation.y_true), undefer(CrossValidation.y_pred),
                             undefer(CrossValidation.proba), undefer(CrossValidation.fold)))))
        if program is None:
            raise WorkspaceError(f"no program named {name!r}")
        models = tuple(_project_model(row, program, name) for row in program.models)
        waves = [{"label": w.label, "date": None if w.date is None else w.date.isoformat(),
                  "file": w.filename, "sha256": w.sha256, "part": w.part,
                  "respondents": w.respondents,
                  "segments": {by: {v: f.to_dict() for v, f in values.items()}
                               for by, values in w.segments.items()}} for w in view.waves]
        return Project(
            schema_yaml=program.schema_yaml, plan=program.plan,
            survey=view.survey, models=models, survey_bytes=program.survey_bytes,
            estimates=tuple(w.estimate.to_dict() for w in view.waves),
            results=program.results_json,
            settings={**program.settings, "program": {"name": name, "waves": waves}})

    data = project_bytes(workspace.database.read(work))
    if path is not None:
        write_bytes_atomic(Path(path), data)
    workspace.record_change(None, AuditAction.PROGRAM_EXPORTED, name,
                            "project file" if path is None else f"to {Path(path).name}")
    return data


def _wave_info(estimate: dict[str, Any], info: dict[str, Any] | None) -> dict[str, Any]:
    """From the program's settings when it has them, else from the estimate's source file."""
    if info is not None:
        date = info.get("date")
        return {**info, "date": None if date is None else dt.date.fromisoformat(date)}
    source = estimate.get("source", {})
    filename = source.get("filename")
    label, date = label_from_file(filename)
    return {"label": label, "date": date, "file": filename,
            "sha256": source.get("sha256") or "", "part": "",
            "respondents": int(estimate["n"]), "segments": {}}


def import_program(workspace: Workspace, source: str | Path | bytes, *,
                   name: str | None = None, team: str | None = None) -> str:
    """Add the program of a ``.cxproj`` file; the name it was given (default: its exported
    name). Only models with their model file come in (a wave needs one to be estimated)."""
    workspace.check_new_program(team)
    project = read_project(source)
    meta = project.settings.get("program") if isinstance(project.settings, dict) else None
    fallback = Path(source).stem if isinstance(source, str | Path) else "imported program"
    chosen = program_name(name if name is not None else (meta or {}).get("name") or fallback)
    finals = [m for m in project.models if m.final is not None]
    if not finals:
        raise WorkspaceError("the project file holds no fitted model, so its waves cannot be "
                             "estimated: train and save the model first.")
    from cx_app.estimate.model_file import model_bytes

    waves_info = (meta or {}).get("waves") or [None] * len(project.estimates)
    settings = {k: v for k, v in project.settings.items() if k != "program"}

    def work(session: Session) -> None:
        if session.scalar(select(Program.id).where(Program.name == chosen)) is not None:
            raise WorkspaceError(f"the workspace already has a program named {chosen!r}: "
                                 "import it under another name.")
        models = [model_rows(m.final, m.cv, model_id=m.model_id,
                             skops=m.final_bytes or model_bytes(m.final)) for m in finals]
        program = Program(name=chosen, schema_yaml=project.schema_yaml, plan=dict(project.plan),
                          settings=settings, survey_filename=project.survey.filename,
                          survey_sheet=project.survey.sheet, survey_sha256=project.survey.sha256,
                          survey_bytes=project.survey_bytes, results_json=project.results,
                          models=models, team=team)
        session.add(program)
        session.flush()
        workspace.record_change(session, AuditAction.PROGRAM_IMPORTED, chosen,
                                (f"from {Path(source).name}" if isinstance(source, str | Path)
                                 else "from a project file") + (f", team {team}" if team else ""))
        by_file = {m.file_sha256: m for m in models}
        seen: set[tuple[str, str]] = set()
        for estimate, info in zip(project.estimates, waves_info, strict=True):
            wave = _wave_info(dict(estimate), info)
            if (wave["sha256"], wave["part"]) in seen:  # the same file estimated twice
                continue
            seen.add((wave["sha256"], wave["part"]))
            model = by_file.get((estimate.get("model") or {}).get("file_sha256"), models[0])
            session.add(Wave(
                program_id=program.id, file_sha256=wave["sha256"], part=wave["part"],
                filename=wave["file"], label=wave["label"], wave_date=wave["date"],
                respondents=wave["respondents"],
                estimates=[estimate_row(model.id, dict(estimate), wave["segments"])]))

    workspace.database.write(work)
    return chosen
