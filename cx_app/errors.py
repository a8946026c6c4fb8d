"""The project's own error types.

Every message is written for a CX analyst: it names the file, sheet, row, column, plan step or
group at fault and says what to do. The app and the CLI show ``str(error)``; tests assert it.
"""

from __future__ import annotations


class CxAppError(Exception):
    """Base class of every error this library raises on purpose."""


class SurveyFileError(CxAppError):
    """A survey file cannot be read or used (format, encryption, emptiness, size limits)."""


class SchemaError(CxAppError):
    """A survey schema (or a column mapping) is invalid or does not match the data."""


class PlanError(CxAppError):
    """A reduction plan is invalid: groups that do not partition the classes, unknown members."""


class ModelFileError(CxAppError):
    """A saved model file cannot be loaded safely (unknown types, pickle, wrong version)."""


class AnalysisError(CxAppError):
    """An analysis cannot run on the given data (too few respondents, a single class, ...)."""


class ClusterError(CxAppError):
    """The Dask cluster cannot be used: unreachable or lost scheduler, no workers, workers
    whose package versions differ from this machine's."""


class WorkspaceError(CxAppError):
    """The workspace database cannot be used as asked: unreachable or locked database, an
    unknown program, a program name taken, a database written by a newer cx-app."""


class AccessDenied(CxAppError):
    """A signed-in user may not do this (team mode): not a member of the program's team, or a
    role below the one the action needs. The message names the user, the team and the role."""
