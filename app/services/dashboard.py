"""What the dashboard's pages read (app/web): one page of jobs, the rows' labels, a job's page, the review queue,
the costs page's names. Visibility (app/permissions.py) is a WHERE clause of every query, applied before LIMIT:
a page holds as many rows as the reader may see, never fewer. The pages import this module and the other
services, never a store or a model (the import-linter contract "app.web reads through app.services")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from .. import permissions
from ..db.models import (
    ACTIVE_STATUSES,
    ALL_STATUSES,
    CAMPAIGN_CANCELLED,
    CAMPAIGN_CAPPED,
    CAMPAIGN_FINISHED,
    CAMPAIGN_RUNNING,
    CAMPAIGN_STATUSES,
    CANCELLED,
    FAILED,
    REVIEW_STATUSES,
    WAITING,
    ApiKey,
    Attempt,
    Campaign,
    CampaignVariant,
    CustomTask,
    Job,
    JobEvent,
    Review,
)
from ..db.types import utcnow
from ..permissions import Caller
from ..store import aggregates
from ..store import jobs as store
from .access import readable_job
from .reviews import flagged_share, list_reviews

__all__ = [  # the statuses the pages filter and show, named here so that the pages need no model
    "ACTIVE_STATUSES",
    "ALL_STATUSES",
    "CAMPAIGN_CANCELLED",
    "CAMPAIGN_CAPPED",
    "CAMPAIGN_FINISHED",
    "CAMPAIGN_RUNNING",
    "CAMPAIGN_STATUSES",
    "CANCELLED",
    "FAILED",
    "REVIEW_STATUSES",
    "WAITING",
    "utcnow",
]

SORTS = tuple(store.SORTS)
CUSTOM_PREFIX = "ct_"
# A job committed a little after the page read its rows may carry an earlier created_at: look back this far.
NEW_JOBS_SLACK = timedelta(seconds=10)


@dataclass(frozen=True)
class JobFilters:
    """The jobs list's filters ("" or None: any)."""

    status: str | None = None
    task: str | None = None
    precision: str | None = None
    model: str | None = None
    key: str | None = None

    @classmethod
    def of(cls, values: dict[str, str]) -> JobFilters:
        return cls(**{k: values.get(k) or None for k in ("status", "task", "precision", "model", "key")})

    def where(self, caller: Caller) -> list[ColumnElement[bool]]:
        """The WHERE clause: these filters and what `caller` may read (permissions.visible_jobs)."""
        return [permissions.visible_jobs(caller), *store.job_filters(**self.__dict__)]


def jobs_page(session: Session, caller: Caller, filters: JobFilters, *, sort: str, limit: int, offset: int) -> tuple[list[Job], int]:
    """One page of the jobs `caller` may read that match `filters` (visibility in SQL, before LIMIT), and how many
    match in all."""
    conds = filters.where(caller)
    column = store.SORTS[sort.removeprefix("-")]
    first = column.desc().nulls_last() if sort.startswith("-") else column.asc().nulls_last()
    query = select(Job).where(*conds).order_by(first, Job.created_at.desc(), Job.id.desc())
    rows = list(session.scalars(query.limit(limit).offset(offset)))
    return rows, session.scalar(select(func.count(Job.id)).where(*conds)) or 0


def jobs_by_id(session: Session, caller: Caller, ids: list[str]) -> list[Job]:
    """The jobs of `ids` that `caller` may read (a live table's rows)."""
    if not ids:
        return []
    return list(session.scalars(select(Job).where(permissions.visible_jobs(caller), Job.id.in_(ids))))


def jobs_since(session: Session, caller: Caller, filters: JobFilters, since: datetime, known: list[str], limit: int) -> list[Job]:
    """Jobs created since `since` (less NEW_JOBS_SLACK) that match `filters`, `caller` may read and are not in
    `known`; oldest first, at most `limit` (visibility in SQL, before LIMIT)."""
    query = select(Job).where(*filters.where(caller), Job.created_at >= since - NEW_JOBS_SLACK, Job.id.not_in(known))
    return list(session.scalars(query.order_by(Job.created_at, Job.id).limit(limit)))


def models_of(session: Session, job_ids: list[str]) -> dict[str, list[str]]:
    return aggregates.models_of(session, job_ids)


def known_models(session: Session, caller: Caller) -> list[str]:
    return aggregates.known_models(session, permissions.visible_jobs(caller))


def rounds_used(session: Session, job_ids: list[str]) -> dict[str, int]:
    if not job_ids:
        return {}
    rows = session.execute(select(Attempt.job_id, func.max(Attempt.round)).where(Attempt.job_id.in_(job_ids)).group_by(Attempt.job_id))
    return {job_id: int(r or 0) for job_id, r in rows}


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


def attempt_numbers(session: Session, job_ids: Iterable[str]) -> dict[int, int]:
    """Attempt id -> its number in its job (1, 2, 3 in the job's order), for every attempt of these jobs."""
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


def job_with_attempts(session: Session, caller: Caller, job_id: str) -> Job:
    """The job with its attempts, measurements, profiles and LLM calls (NotFound unless `caller` may read it)."""
    return readable_job(session, caller, job_id, detail=True)


def job_events(session: Session, job_id: str, limit: int = 2000) -> list[JobEvent]:
    return store.events_after(session, job_id, 0, limit=limit)


def review_status(session: Session, job_id: str) -> dict[int, str]:
    """Attempt id -> its review's status, for the job's flagged attempts."""
    return dict(session.execute(select(Review.attempt_id, Review.status).where(Review.job_id == job_id)).all())


def reviews_page(session: Session, caller: Caller, status: str | None, *, limit: int, offset: int) -> tuple[list[Review], int]:
    return list_reviews(session, permissions.visible_jobs(caller), status=status, limit=limit, offset=offset)


def flagged(session: Session, caller: Caller) -> tuple[int, int]:
    """(correct attempts flagged, correct attempts) over the jobs `caller` may read."""
    return flagged_share(session, permissions.visible_jobs(caller))


def can_review(caller: Caller, review: Review) -> bool:
    return permissions.can_review(caller, review.job)
