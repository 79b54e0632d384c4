"""key roles and teams: api_keys.role, api_keys.team, api_keys.last_submit_at, jobs.team

Revision ID: 0002_keys
Revises: 0001
Create Date: 2026-12-03 10:00:00.000000

Keys that existed before get the role `member` and the team `default` (least privilege: create an
admin with `cudamaster keys create --role admin`); their jobs get the team of their key.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_keys"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("role", sa.String(length=16), server_default="member", nullable=False))
        batch_op.add_column(sa.Column("team", sa.String(length=64), server_default="default", nullable=False))
        batch_op.add_column(sa.Column("last_submit_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_api_keys_team"), ["team"], unique=False)

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("team", sa.String(length=64), server_default="default", nullable=False))
        batch_op.create_index(batch_op.f("ix_jobs_team"), ["team"], unique=False)
    op.execute(
        "UPDATE jobs SET team = (SELECT api_keys.team FROM api_keys WHERE api_keys.id = jobs.api_key_id) WHERE api_key_id IS NOT NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_team"))
        batch_op.drop_column("team")

    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_team"))
        batch_op.drop_column("last_submit_at")
        batch_op.drop_column("team")
        batch_op.drop_column("role")
