"""LLM calls recorded before they are sent: llm_calls.status (sent, paid, failed, lost_in_flight)

Revision ID: 0005_faults
Revises: 0004_review
Create Date: 2026-12-03 08:00:00.000000

Calls stored before this revision were stored once answered: they are `paid`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_faults"
down_revision: str | Sequence[str] | None = "0004_review"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status", sa.String(length=16), server_default="paid", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("llm_calls", schema=None) as batch_op:
        batch_op.drop_column("status")
