"""reviews of flagged attempts, and service secrets (the dashboard's cookie key)

Revision ID: 0004_review
Revises: 0003_gpu
Create Date: 2026-12-03 08:00:00.000000

Attempts stored before this revision have no review row: the leaderboard counts them (they were
never flagged).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_review"
down_revision: str | Sequence[str] | None = "0003_gpu"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("flagged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewer_key_id", sa.String(length=32), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["attempt_id"], ["attempts.id"], name=op.f("fk_reviews_attempt_id_attempts"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_reviews_job_id_jobs"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["reviewer_key_id"], ["api_keys.id"], name=op.f("fk_reviews_reviewer_key_id_api_keys"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint("attempt_id", name=op.f("uq_reviews_attempt_id")),
    )
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reviews_job_id"), ["job_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_reviews_status"), ["status"], unique=False)

    op.create_table(
        "service_secrets",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_service_secrets")),
    )


def downgrade() -> None:
    op.drop_table("service_secrets")
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reviews_status"))
        batch_op.drop_index(batch_op.f("ix_reviews_job_id"))
    op.drop_table("reviews")
