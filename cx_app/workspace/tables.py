"""The workspace's tables (SQLAlchemy 2 declarative, typed ``Mapped[...]``).

The schema at the newest migration (the migrations, not ``create_all``, make real databases; a
test checks both agree). JSON is stored as text (:class:`JsonText`): Python's encoding
round-trips NaN (an undefined metric), which PostgreSQL's ``json`` type would refuse.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from cx_app.json_values import json_default

__all__ = ["AuditEvent", "Base", "CrossValidation", "Estimate", "Fit", "Identity", "JsonText", "Model",
           "Program", "Report", "StoredFile", "Wave"]

NAMING = {"ix": "ix_%(column_0_label)s", "uq": "uq_%(table_name)s_%(column_0_name)s",
          "ck": "ck_%(table_name)s_%(constraint_name)s",
          "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
          "pk": "pk_%(table_name)s"}  # so that migrations (SQLite's batch mode) can name them


class JsonText(TypeDecorator):
    """A JSON value stored as text (numpy values as plain numbers, NaN kept)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value, default=json_default,
                                                      ensure_ascii=False, sort_keys=True)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JsonText, dict[str, Any] | None: JsonText, bytes: LargeBinary,
                           dt.datetime: DateTime(timezone=True)}


def _parent(table: str, **options: Any) -> Any:
    return mapped_column(ForeignKey(f"{table}.id", ondelete="CASCADE"), **options)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


class _Keyed(Base):
    __abstract__ = True
    id: Mapped[int] = mapped_column(primary_key=True)


class _Dated(_Keyed):
    __abstract__ = True
    created: Mapped[dt.datetime] = mapped_column(default=utc_now)


class Program(_Dated):
    """A CX program: its reference survey (bytes only when allowed) and mapping."""

    __tablename__ = "programs"

    name: Mapped[str] = mapped_column(String(200), unique=True)
    schema_yaml: Mapped[str] = mapped_column(Text)
    plan: Mapped[dict[str, Any]]
    settings: Mapped[dict[str, Any]]
    survey_filename: Mapped[str | None] = mapped_column(String(500))
    survey_sheet: Mapped[str | None] = mapped_column(String(500))
    survey_sha256: Mapped[str] = mapped_column(String(64))
    survey_bytes: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    results_json: Mapped[str | None] = mapped_column(Text, deferred=True)
    data_key: Mapped[str | None] = mapped_column(String(64))
    """The training data key of the mapping in use: models of another key were trained on an
    earlier mapping."""
    keep_files: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    team: Mapped[str | None] = mapped_column(String(200))

    models: Mapped[list[Model]] = relationship(back_populates="program",
                                               cascade="all, delete-orphan",
                                               passive_deletes=True, order_by="Model.id")
    waves: Mapped[list[Wave]] = relationship(back_populates="program",
                                             cascade="all, delete-orphan",
                                             passive_deletes=True)


class Model(_Dated):
    __tablename__ = "models"

    program_id: Mapped[int] = _parent("programs", index=True)
    model_id: Mapped[str] = mapped_column(String(100))
    algorithm: Mapped[str] = mapped_column(String(50))
    preset: Mapped[str] = mapped_column(String(20))
    calibration: Mapped[str] = mapped_column(String(50))
    file_sha256: Mapped[str | None] = mapped_column(String(64))
    skops: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    """The model fitted on all respondents (None until fitted: the app stores a model as soon
    as its cross-validation ends)."""
    model_metadata: Mapped[dict[str, Any]]
    fit_seconds: Mapped[float] = mapped_column(Float)
    training_key: Mapped[str | None] = mapped_column(String(64))
    data_key: Mapped[str | None] = mapped_column(String(64))
    recipe: Mapped[dict[str, Any] | None]
    permutation: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)  # folds × attributes
    respondents: Mapped[int | None] = mapped_column(Integer)

    program: Mapped[Program] = relationship(back_populates="models")
    crossval: Mapped[CrossValidation | None] = relationship(
        back_populates="model", cascade="all, delete-orphan", passive_deletes=True)


class CrossValidation(_Keyed):
    """Out-of-fold arrays as ``.npy`` bytes, read back with ``allow_pickle=False``."""

    __tablename__ = "crossval"

    model_id: Mapped[int] = _parent("models", unique=True)
    fields: Mapped[dict[str, Any]]  # everything but the arrays
    y_true: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    y_pred: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    proba: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    fold: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)

    model: Mapped[Model] = relationship(back_populates="crossval")


class Wave(_Dated):
    """One wave of a program. Content-addressed: a file (its SHA-256) gives one wave, or one
    per value of its wave column (``part``); adding it again finds the same row."""

    __tablename__ = "waves"
    __table_args__ = (UniqueConstraint("program_id", "file_sha256", "part",
                                       name="uq_waves_content"),)

    program_id: Mapped[int] = _parent("programs", index=True)
    file_sha256: Mapped[str] = mapped_column(String(64))
    part: Mapped[str] = mapped_column(String(200), default="")
    filename: Mapped[str | None] = mapped_column(String(500))
    sheet: Mapped[str | None] = mapped_column(String(500))  # None: added before migration 0002
    label: Mapped[str] = mapped_column(String(200))
    wave_date: Mapped[dt.date | None] = mapped_column(Date)
    respondents: Mapped[int] = mapped_column(Integer)

    program: Mapped[Program] = relationship(back_populates="waves")
    estimates: Mapped[list[Estimate]] = relationship(
        back_populates="wave", cascade="all, delete-orphan", passive_deletes=True)


class Estimate(_Dated):
    """A wave's estimate by one model, its headline numbers also as columns."""

    __tablename__ = "estimates"
    __table_args__ = (UniqueConstraint("wave_id", "model_id", name="uq_estimates_wave_model"),)

    wave_id: Mapped[int] = _parent("waves", index=True)
    model_id: Mapped[int] = _parent("models", index=True)
    document: Mapped[dict[str, Any]]
    segments: Mapped[dict[str, Any]]  # {segment name: {value: SegmentEstimate.to_dict()}}
    estimated_nps: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float] = mapped_column(Float)
    realized_nps: Mapped[float | None] = mapped_column(Float)

    wave: Mapped[Wave] = relationship(back_populates="estimates")


class StoredFile(_Dated):
    """A survey or wave file kept (when the analyst allows it), one row per content."""

    __tablename__ = "files"
    __table_args__ = (UniqueConstraint("program_id", "sha256", name="uq_files_content"),)

    program_id: Mapped[int] = _parent("programs")
    sha256: Mapped[str] = mapped_column(String(64))
    filename: Mapped[str | None] = mapped_column(String(500))
    size: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)


class Fit(_Dated):
    """One measured training: expected times are learned from these."""

    __tablename__ = "fits"

    algorithm: Mapped[str] = mapped_column(String(50), index=True)
    preset: Mapped[str] = mapped_column(String(20))
    respondents: Mapped[int] = mapped_column(Integer)
    attributes: Mapped[int] = mapped_column(Integer)
    folds: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float)


class AuditEvent(_Dated):
    """One change made to a program; kept when the program is deleted (it names it)."""

    __tablename__ = "audit_events"

    user: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(50))
    program: Mapped[str | None] = mapped_column(String(200), index=True)
    detail: Mapped[str | None] = mapped_column(Text)
    issuer: Mapped[str | None] = mapped_column(String(500))  # None: CLI, local app
    subject: Mapped[str | None] = mapped_column(String(255))


class Identity(_Dated):
    """A sign-in identity bound to its e-mail address at its first sign-in."""

    __tablename__ = "identities"
    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_identities_issuer"),
                      UniqueConstraint("email", name="uq_identities_email"))

    issuer: Mapped[str] = mapped_column(String(500))
    subject: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(320))


class Report(_Dated):
    __tablename__ = "reports"

    program_id: Mapped[int] = _parent("programs", index=True)
    kind: Mapped[str] = mapped_column(String(20))
    filename: Mapped[str] = mapped_column(String(500))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer)
    waves: Mapped[int] = mapped_column(Integer)
