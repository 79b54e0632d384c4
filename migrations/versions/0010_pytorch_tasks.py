"""PyTorch references stored as tasks: the pytorch_tasks table (issue 42)

Revision ID: 0010_pytorch_tasks
Revises: 0009_attempt_sanitizer
Create Date: 2026-12-07 23:50:00.000000

Tasks made from a reference before this revision lived only in the process that probed them: their jobs cannot
be resumed (they fail with "unknown task" as before).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_pytorch_tasks"
down_revision: str | Sequence[str] | None = "0009_attempt_sanitizer"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pytorch_tasks",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("api_key_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("precision", sa.String(length=8), nullable=False),
        sa.Column("reference_py", sa.Text(), nullable=False),
        sa.Column("probe", sa.JSON(), nullable=False),
        sa.Column("reference_arrays", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["api_key_id"], ["api_keys.id"], name=op.f("fk_pytorch_tasks_api_key_id_api_keys"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pytorch_tasks")),
    )
    with op.batch_alter_table("pytorch_tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pytorch_tasks_api_key_id"), ["api_key_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("pytorch_tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pytorch_tasks_api_key_id"))
    op.drop_table("pytorch_tasks")
