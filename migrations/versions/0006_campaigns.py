"""campaigns: campaigns and campaign_variants

Revision ID: 0006_campaigns
Revises: 0005_faults
Create Date: 2026-12-03 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_campaigns"
down_revision: str | Sequence[str] | None = "0005_faults"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "campaigns",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("selection", sa.JSON(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("max_in_flight", sa.Integer(), nullable=False),
        sa.Column("max_cost_usd", sa.Float(), nullable=True),
        sa.Column("max_tokens", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("api_key_id", sa.String(length=32), nullable=True),
        sa.Column("team", sa.String(length=64), server_default="default", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["api_key_id"], ["api_keys.id"], name=op.f("fk_campaigns_api_key_id_api_keys"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_campaigns")),
    )
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_campaigns_api_key_id"), ["api_key_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_campaigns_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_campaigns_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_campaigns_team"), ["team"], unique=False)

    op.create_table(
        "campaign_variants",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=128), nullable=False),
        sa.Column("precision", sa.String(length=8), nullable=False),
        sa.Column("job_id", sa.String(length=40), nullable=True),
        sa.Column("resume_requested", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["campaign_id"], ["campaigns.id"], name=op.f("fk_campaign_variants_campaign_id_campaigns"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_campaign_variants_job_id_jobs"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_campaign_variants")),
        sa.UniqueConstraint("campaign_id", "task", "precision", name="uq_campaign_variants_campaign_id_task"),
        sa.UniqueConstraint("job_id", name=op.f("uq_campaign_variants_job_id")),
    )
    with op.batch_alter_table("campaign_variants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_campaign_variants_campaign_id"), ["campaign_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("campaign_variants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_campaign_variants_campaign_id"))
    op.drop_table("campaign_variants")
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_campaigns_team"))
        batch_op.drop_index(batch_op.f("ix_campaigns_status"))
        batch_op.drop_index(batch_op.f("ix_campaigns_created_at"))
        batch_op.drop_index(batch_op.f("ix_campaigns_api_key_id"))
    op.drop_table("campaigns")
