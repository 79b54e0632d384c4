"""the GPU model of each measurement: attempts.gpu_model, measurements.gpu_model

Revision ID: 0003_gpu
Revises: 0002_keys
Create Date: 2026-12-03 08:00:00.000000

Filled from the evaluation's `gpu.name` when an attempt is stored. Attempts stored before stay NULL
are backfilled here from their stored evaluation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_gpu"
down_revision: str | Sequence[str] | None = "0002_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("gpu_model", sa.String(length=128), nullable=True))
        batch_op.create_index(batch_op.f("ix_attempts_gpu_model"), ["gpu_model"], unique=False)
    with op.batch_alter_table("measurements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("gpu_model", sa.String(length=128), nullable=True))
        batch_op.create_index(batch_op.f("ix_measurements_gpu_model"), ["gpu_model"], unique=False)
    # Backfill from the stored evaluations (their GpuInfo name).
    conn = op.get_bind()
    attempts = sa.table("attempts", sa.column("id", sa.Integer), sa.column("evaluation", sa.JSON), sa.column("gpu_model", sa.String))
    measurements = sa.table("measurements", sa.column("attempt_id", sa.Integer), sa.column("gpu_model", sa.String))
    for attempt_id, evaluation in conn.execute(sa.select(attempts.c.id, attempts.c.evaluation)).all():
        if isinstance(evaluation, str):
            evaluation = json.loads(evaluation)
        name = str(((evaluation or {}).get("gpu") or {}).get("name") or "")[:128]
        if name:
            conn.execute(attempts.update().where(attempts.c.id == attempt_id).values(gpu_model=name))
            conn.execute(measurements.update().where(measurements.c.attempt_id == attempt_id).values(gpu_model=name))


def downgrade() -> None:
    with op.batch_alter_table("measurements", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_measurements_gpu_model"))
        batch_op.drop_column("gpu_model")
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempts_gpu_model"))
        batch_op.drop_column("gpu_model")
