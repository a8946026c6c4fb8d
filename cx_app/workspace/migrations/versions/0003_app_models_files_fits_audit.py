"""Revision 0003: the app's models, kept files, measured fits, teams and the audit trail.

- ``models``: a model trained in the app is stored as soon as its cross-validation ends, before
  any model fitted on all respondents exists, so ``skops`` and ``file_sha256`` may be empty; new
  columns hold the training key and data key (which mapping it was trained on), its recipe, the
  permutation importance (``.npy``) and the number of respondents.
- ``programs``: the data key of the mapping in use, whether files are kept, and the team.
- ``files``: survey and wave files kept with a program (when the analyst allows), by SHA-256.
- ``fits``: every measured training (algorithm, preset, respondents, attributes, folds, seconds),
  from which expected training times are learned.
- ``audit_events``: who did what to which program, when.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def _created() -> sa.Column:
    return sa.Column("created", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.alter_column("skops", existing_type=sa.LargeBinary(), nullable=True)
        batch.alter_column("file_sha256", existing_type=sa.String(64), nullable=True)
        batch.add_column(sa.Column("training_key", sa.String(64), nullable=True))
        batch.add_column(sa.Column("data_key", sa.String(64), nullable=True))
        batch.add_column(sa.Column("recipe", sa.Text(), nullable=True))
        batch.add_column(sa.Column("permutation", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("respondents", sa.Integer(), nullable=True))
    with op.batch_alter_table("programs") as batch:
        batch.add_column(sa.Column("data_key", sa.String(64), nullable=True))
        batch.add_column(sa.Column("keep_files", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column("team", sa.String(200), nullable=True))
    op.create_table(
        "files",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("filename", sa.String(500), nullable=True),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        _created(),
        sa.PrimaryKeyConstraint("id", name="pk_files"),
        sa.ForeignKeyConstraint(["program_id"], ["programs.id"], ondelete="CASCADE",
                                name="fk_files_program_id_programs"),
        sa.UniqueConstraint("program_id", "sha256", name="uq_files_content"),
    )
    op.create_table(
        "fits",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("algorithm", sa.String(50), nullable=False),
        sa.Column("preset", sa.String(20), nullable=False),
        sa.Column("respondents", sa.Integer(), nullable=False),
        sa.Column("attributes", sa.Integer(), nullable=False),
        sa.Column("folds", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        _created(),
        sa.PrimaryKeyConstraint("id", name="pk_fits"),
    )
    op.create_index("ix_fits_algorithm", "fits", ["algorithm"])
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        _created(),
        sa.Column("user", sa.String(320), nullable=False),
        sa.Column("action", sa.String(50), nullable=False),
        sa.Column("program", sa.String(200), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_audit_events"),
    )
    op.create_index("ix_audit_events_program", "audit_events", ["program"])


def downgrade() -> None:
    op.drop_table("audit_events")
    op.drop_table("fits")
    op.drop_table("files")
    with op.batch_alter_table("programs") as batch:
        for column in ("team", "keep_files", "data_key"):
            batch.drop_column(column)
    with op.batch_alter_table("models") as batch:
        for column in ("respondents", "permutation", "recipe", "data_key", "training_key"):
            batch.drop_column(column)
        batch.alter_column("file_sha256", existing_type=sa.String(64), nullable=False)
        batch.alter_column("skops", existing_type=sa.LargeBinary(), nullable=False)
