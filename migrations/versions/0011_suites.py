"""Suites of stored PyTorch references: the suites and suite_tasks tables (issue 42, item 5)

Revision ID: 0011_suites
Revises: 0010_pytorch_tasks
Create Date: 2026-12-08 00:50:00.000000

A suite names the PyTorch tasks (pytorch_tasks rows) made from one folder of references, in the folder's order,
and the references it refused with their reasons.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_suites"
down_revision: str | Sequence[str] | None = "0010_pytorch_tasks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "suites",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("api_key_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("precision", sa.String(length=8), nullable=False),
        sa.Column("refused", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["api_key_id"], ["api_keys.id"], name=op.f("fk_suites_api_key_id_api_keys"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suites")),
    )
    with op.batch_alter_table("suites", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_suites_api_key_id"), ["api_key_id"], unique=False)
    op.create_table(
        "suite_tasks",
        sa.Column("suite_id", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(["suite_id"], ["suites.id"], name=op.f("fk_suite_tasks_suite_id_suites"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["task_id"], ["pytorch_tasks.id"], name=op.f("fk_suite_tasks_task_id_pytorch_tasks"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("suite_id", "position", name=op.f("pk_suite_tasks")),
    )
    with op.batch_alter_table("suite_tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_suite_tasks_task_id"), ["task_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("suite_tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_suite_tasks_task_id"))
    op.drop_table("suite_tasks")
    with op.batch_alter_table("suites", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_suites_api_key_id"))
    op.drop_table("suites")
