"""compute-sanitizer verdicts per attempt: attempts.sanitizer (JSON) and attempts.sanitizer_status (issue 41)

Revision ID: 0009_attempt_sanitizer
Revises: 0008_dashboard_sessions
Create Date: 2026-12-07 21:00:00.000000

Attempts stored before this revision were never sanitized: both columns stay null for them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_attempt_sanitizer"
down_revision: str | Sequence[str] | None = "0008_dashboard_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sanitizer", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("sanitizer_status", sa.String(length=16), nullable=True))
        batch_op.create_index(batch_op.f("ix_attempts_sanitizer_status"), ["sanitizer_status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempts_sanitizer_status"))
        batch_op.drop_column("sanitizer_status")
        batch_op.drop_column("sanitizer")
