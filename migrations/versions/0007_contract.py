"""the typed contract: jobs.answer_for, jobs.stop_reason, profiles.mode, profiles.tokens, profiles.note

Revision ID: 0007_contract
Revises: 0006_campaigns
Create Date: 2026-12-03 08:30:00.000000

An answer is bound to the question it answers (jobs.answer_for); a finished job says why it stopped
before its rounds were done (jobs.stop_reason, e.g. "spending_cap"); a profile keeps the mode and
the tokens of the text the planner saw, and a note. Existing profiles were filtered ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_contract"
down_revision: str | Sequence[str] | None = "0006_campaigns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("answer_for", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("stop_reason", sa.String(length=32), nullable=True))

    with op.batch_alter_table("profiles", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mode", sa.String(length=16), server_default="filtered", nullable=False))
        batch_op.add_column(sa.Column("tokens", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("profiles", schema=None) as batch_op:
        batch_op.drop_column("note")
        batch_op.drop_column("tokens")
        batch_op.drop_column("mode")

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("stop_reason")
        batch_op.drop_column("answer_for")
