"""dashboard sessions kept server-side: dashboard_sessions (logout ends a session; issue 30)

Revision ID: 0008_dashboard_sessions
Revises: 0007_contract
Create Date: 2026-12-05 09:30:00.000000

A dashboard cookie now names a row of dashboard_sessions; logout deletes it, so a replayed cookie no
longer signs in. Cookies issued before this revision name no row: their holders sign in again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_dashboard_sessions"
down_revision: str | Sequence[str] | None = "0007_contract"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dashboard_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("api_key_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_dashboard_sessions_api_key_id_api_keys"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dashboard_sessions")),
    )
    with op.batch_alter_table("dashboard_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_dashboard_sessions_api_key_id"), ["api_key_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_dashboard_sessions_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("dashboard_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dashboard_sessions_expires_at"))
        batch_op.drop_index(batch_op.f("ix_dashboard_sessions_api_key_id"))
    op.drop_table("dashboard_sessions")
