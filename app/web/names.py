"""What the pages call things: a job by its kernel's name (a custom kernel's, not its `ct_…` id), an attempt by
its number within its job (1, 2, 3 in the job's order: round, debug step), a key by its name, a campaign by its
name. Each reads what a page of rows needs in one query."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db.models import ApiKey, Attempt, Campaign, CampaignVariant, CustomTask

CUSTOM_PREFIX = "ct_"


def task_titles(session: Session, tasks: Iterable[str]) -> dict[str, str]:
    """Each task's title: a benchmark task's name as is, a custom kernel's own name (its id when gone)."""
    tasks = set(tasks)
    custom = [t for t in tasks if t.startswith(CUSTOM_PREFIX)]
    titles = {t: t for t in tasks}
    if custom:
        titles.update({i: name for i, name in session.execute(select(CustomTask.id, CustomTask.name).where(CustomTask.id.in_(custom)))})
    return titles


def key_names(session: Session, key_ids: Iterable[str | None]) -> dict[str, str]:
    ids = {k for k in key_ids if k}
    if not ids:
        return {}
    return {i: name for i, name in session.execute(select(ApiKey.id, ApiKey.name).where(ApiKey.id.in_(ids)))}


def campaigns_of(session: Session, job_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The campaign (id, name) each job runs a variant of; jobs submitted on their own are not in it."""
    ids = list(job_ids)
    if not ids:
        return {}
    rows = session.execute(
        select(CampaignVariant.job_id, Campaign.id, Campaign.name)
        .join(Campaign, Campaign.id == CampaignVariant.campaign_id)
        .where(CampaignVariant.job_id.in_(ids))
    )
    return {job_id: (cid, name) for job_id, cid, name in rows if job_id is not None}


def numbered(attempts: Iterable[Any]) -> dict[int, int]:
    """Attempt id -> its number in its job, for attempts given in the job's order (Job.attempts)."""
    return {a.id: i for i, a in enumerate(attempts, start=1)}


def attempt_numbers(session: Session, job_ids: Iterable[str]) -> dict[int, int]:
    """Attempt id -> its number in its job, for every attempt of these jobs."""
    ids = list(set(job_ids))
    if not ids:
        return {}
    rows = session.execute(
        select(Attempt.id, Attempt.job_id)
        .where(Attempt.job_id.in_(ids))
        .order_by(Attempt.job_id, Attempt.round, Attempt.debug_step, Attempt.id)
    )
    out: dict[int, int] = {}
    counts: dict[str, int] = {}
    for attempt_id, job_id in rows:
        counts[job_id] = counts.get(job_id, 0) + 1
        out[attempt_id] = counts[job_id]
    return out
