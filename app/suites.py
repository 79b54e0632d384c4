"""Suites: a folder of PyTorch references stored as tasks without a job (issue 42, item 5; `POST /api/v1/suites`).

Each reference goes through the job submit's own path (app/pytorch_tasks.py `store`: probed in the sandbox within the
submit-time limits, stored, registered); one that cannot be a task is listed with the reason and the others are kept.
The suite row names the tasks made in the folder's order (suite_tasks) and the refused references. Like its tasks, a
suite is private to the key that made it (app/permissions.py). Campaigns expand `selection.suite` to its tasks
(app/campaigns/store.py); the leaderboard filters on them (app/services/insights.py)."""

from __future__ import annotations

import secrets

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from settings import ServiceSettings

from . import pytorch_tasks
from .db.models import StoredPyTorchTask, Suite, SuiteTask
from .db.types import utcnow
from .schemas import PyTorchTaskIn
from .services.errors import Invalid


def create(
    session: Session, name: str, precision: str, references: list[PyTorchTaskIn], api_key_id: str | None, settings: ServiceSettings
) -> Suite:
    """Probe and store every reference (committed once, with the suite). Unavailable (no sandbox, no torch) is raised
    on: it is the service's state, not a reference's fault, and nothing is stored."""
    suite = Suite(id="su_" + secrets.token_hex(8), api_key_id=api_key_id, name=name, precision=precision, refused=[], created_at=utcnow())
    session.add(suite)
    refused: list[dict[str, str]] = []
    made: list[str] = []
    seen: set[str] = set()
    for ref in references:
        if ref.name in seen:
            refused.append({"name": ref.name, "reason": f"the name {ref.name} is another reference's too: rename one"})
            continue
        seen.add(ref.name)
        try:
            task = pytorch_tasks.store(session, ref, precision, api_key_id, settings)
        except Invalid as exc:
            refused.append({"name": ref.name, "reason": exc.msg})
            continue
        made.append(task.name)
    suite.refused = refused
    session.flush()  # the task rows before the links that name them
    for i, task_id in enumerate(made):
        session.add(SuiteTask(suite_id=suite.id, position=i, task_id=task_id))
    session.commit()
    return suite


def get(session: Session, suite_id: str) -> Suite | None:
    return session.get(Suite, suite_id)


def of_key(session: Session, api_key_id: str | None) -> list[Suite]:
    """A key's suites, newest first."""
    if api_key_id is None:
        return []
    return list(session.scalars(select(Suite).where(Suite.api_key_id == api_key_id).order_by(Suite.created_at.desc(), Suite.id)))


def task_rows(session: Session, suite_id: str) -> list[StoredPyTorchTask]:
    """The suite's tasks in its order."""
    query = select(StoredPyTorchTask).join(SuiteTask, SuiteTask.task_id == StoredPyTorchTask.id).where(SuiteTask.suite_id == suite_id)
    return list(session.scalars(query.order_by(SuiteTask.position)))


def task_ids(session: Session, suite_id: str) -> list[str]:
    """The suite's task ids in its order (the link rows only: no reference text or probe is read)."""
    return list(session.scalars(select(SuiteTask.task_id).where(SuiteTask.suite_id == suite_id).order_by(SuiteTask.position)))


def task_counts(session: Session, suite_ids: list[str]) -> dict[str, int]:
    """How many tasks each suite holds, in one query."""
    query = select(SuiteTask.suite_id, func.count()).where(SuiteTask.suite_id.in_(suite_ids)).group_by(SuiteTask.suite_id)
    return {suite_id: count for suite_id, count in session.execute(query)}
