"""Revision 0001, the workspace schema: programs, models, waves and estimates.

Programs, their models with the cross-validation arrays, waves and the estimate of each wave
by each model.

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _created() -> sa.Column:
    return sa.Column("created", sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "programs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        _created(),
        sa.Column("schema_yaml", sa.Text(), nullable=False),
        sa.Column("plan", sa.Text(), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("survey_filename", sa.String(500), nullable=True),
        sa.Column("survey_sheet", sa.String(500), nullable=True),
        sa.Column("survey_sha256", sa.String(64), nullable=False),
        sa.Column("survey_bytes", sa.LargeBinary(), nullable=True),
        sa.Column("results_json", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_programs"),
        sa.UniqueConstraint("name", name="uq_programs_name"),
    )
    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.String(100), nullable=False),
        sa.Column("algorithm", sa.String(50), nullable=False),
        sa.Column("preset", sa.String(20), nullable=False),
        sa.Column("calibration", sa.String(50), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("skops", sa.LargeBinary(), nullable=False),
        sa.Column("model_metadata", sa.Text(), nullable=False),
        sa.Column("fit_seconds", sa.Float(), nullable=False),
        _created(),
        sa.PrimaryKeyConstraint("id", name="pk_models"),
        sa.ForeignKeyConstraint(["program_id"], ["programs.id"], ondelete="CASCADE",
                                name="fk_models_program_id_programs"),
    )
    op.create_index("ix_models_program_id", "models", ["program_id"])
    op.create_table(
        "crossval",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("fields", sa.Text(), nullable=False),
        sa.Column("y_true", sa.LargeBinary(), nullable=False),
        sa.Column("y_pred", sa.LargeBinary(), nullable=False),
        sa.Column("proba", sa.LargeBinary(), nullable=False),
        sa.Column("fold", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_crossval"),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE",
                                name="fk_crossval_model_id_models"),
        sa.UniqueConstraint("model_id", name="uq_crossval_model_id"),
    )
    op.create_table(
        "waves",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("part", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(500), nullable=True),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("wave_date", sa.Date(), nullable=True),
        sa.Column("respondents", sa.Integer(), nullable=False),
        _created(),
        sa.PrimaryKeyConstraint("id", name="pk_waves"),
        sa.ForeignKeyConstraint(["program_id"], ["programs.id"], ondelete="CASCADE",
                                name="fk_waves_program_id_programs"),
        sa.UniqueConstraint("program_id", "file_sha256", "part", name="uq_waves_content"),
    )
    op.create_index("ix_waves_program_id", "waves", ["program_id"])
    op.create_table(
        "estimates",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("wave_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("segments", sa.Text(), nullable=False),
        sa.Column("estimated_nps", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=False),
        sa.Column("realized_nps", sa.Float(), nullable=True),
        _created(),
        sa.PrimaryKeyConstraint("id", name="pk_estimates"),
        sa.ForeignKeyConstraint(["wave_id"], ["waves.id"], ondelete="CASCADE",
                                name="fk_estimates_wave_id_waves"),
        sa.ForeignKeyConstraint(["model_id"], ["models.id"], ondelete="CASCADE",
                                name="fk_estimates_model_id_models"),
        sa.UniqueConstraint("wave_id", "model_id", name="uq_estimates_wave_model"),
    )
    op.create_index("ix_estimates_wave_id", "estimates", ["wave_id"])
    op.create_index("ix_estimates_model_id", "estimates", ["model_id"])


def downgrade() -> None:
    for table in ("estimates", "waves", "crossval", "models", "programs"):
        op.drop_table(table)
