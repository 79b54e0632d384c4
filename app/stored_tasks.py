"""Tasks the service stores, by id: custom tasks (`ct_…`, app/custom_tasks.py) and PyTorch references (`pt_…`,
app/pytorch_tasks.py). A stored task is registered with the harness in the process that made it; every other
process (after a restart, another replica, the runner claiming a job another replica queued) registers it from its
row here, before the task is looked up by name. A Ray worker gets it in its work item (bench_tasks/work.py)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from bench_tasks.spec import Task

from . import custom_tasks, pytorch_tasks
from .bounds import is_custom_task_id, is_pytorch_task_id
from .db.models import CustomTask, StoredPyTorchTask
from .pytorch_tasks import StoredTaskInvalid as StoredTaskInvalid  # one error for both kinds of stored task


def row_of(session: Session, name: str) -> CustomTask | StoredPyTorchTask | None:
    """The stored row of a task id (None: not a stored task's id, or no such row)."""
    if is_custom_task_id(name):
        return session.get(CustomTask, name)
    if is_pytorch_task_id(name):
        return session.get(StoredPyTorchTask, name)
    return None


def register(row: CustomTask | StoredPyTorchTask) -> Task:
    """Register a stored task with the harness; raises StoredTaskInvalid when it cannot be rebuilt."""
    try:
        if isinstance(row, CustomTask):
            return custom_tasks.register(row)
        return pytorch_tasks.register(row)
    except custom_tasks.CustomTaskInvalid as exc:
        raise StoredTaskInvalid(str(exc)) from None


def register_named(session: Session, name: str) -> Task | None:
    """Register the stored task `name` (a job's task) when it is one; None when it is not a stored task's id or no
    row holds it (the caller's lookup by name then reports it unknown)."""
    row = row_of(session, name)
    return None if row is None else register(row)


def register_all(session: Session) -> int:
    """Register every stored task (at start-up, before jobs resume); returns how many. One that fails today's checks
    is reported in the log and skipped (its jobs fail with the reason when they resume)."""
    return custom_tasks.register_all(session) + pytorch_tasks.register_all(session)
