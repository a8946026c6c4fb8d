"""Revision 0004: sign-in identities bound to their address, and who made each audited change.

- ``identities``: a person of team mode is the pair (issuer, subject) of their identity
  provider; the first sign-in of a subject binds it to its e-mail address, and another subject
  claiming that address later is refused (:mod:`cx_app.workspace.identities`).
- ``audit_events``: the issuer and subject of the signed-in person who made the change, beside
  the address already recorded in ``user`` (empty for the CLI and the local app).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "identities",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("issuer", sa.String(500), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_identities"),
        sa.UniqueConstraint("issuer", "subject", name="uq_identities_issuer"),
        sa.UniqueConstraint("email", name="uq_identities_email"),
    )
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("issuer", sa.String(500), nullable=True))
        batch.add_column(sa.Column("subject", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.drop_column("subject")
        batch.drop_column("issuer")
    op.drop_table("identities")
