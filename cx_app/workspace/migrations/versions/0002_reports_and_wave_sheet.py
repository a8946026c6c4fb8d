"""Revision 0002: the reports made of a program and the sheet each wave was read from.

Reports are a new table; the sheet is a new column of ``waves`` (None for the waves added
before it).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("waves") as batch:
        batch.add_column(sa.Column("sheet", sa.String(500), nullable=True))
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("filename", sa.String(500), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("waves", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reports"),
        sa.ForeignKeyConstraint(["program_id"], ["programs.id"], ondelete="CASCADE",
                                name="fk_reports_program_id_programs"),
    )
    op.create_index("ix_reports_program_id", "reports", ["program_id"])


def downgrade() -> None:
    op.drop_table("reports")
    with op.batch_alter_table("waves") as batch:
        batch.drop_column("sheet")
