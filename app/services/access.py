"""Who may read or act on a job (app/permissions.py's rules), as the services check them."""

from __future__ import annotations

import re
from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import permissions
from ..bounds import JOB_ID_PATTERN
from ..db.models import Job
from ..permissions import Caller
from ..store import jobs as store
from .errors import Forbidden, Invalid, NotFound, Unavailable

JobRow = Job  # a job as the services hand it to routes and pages (which do not import the models themselves)


def check_page_size(limit: int, max_page_size: int) -> None:
    """A list's `limit` at most the service's page size (CUDAMASTER_SERVICE__MAX_PAGE_SIZE): a 422 naming it."""
    if limit > max_page_size:
        raise Invalid(
            ("query", "limit"),
            f"limit {limit} is over the page size limit {max_page_size} (CUDAMASTER_SERVICE__MAX_PAGE_SIZE); page with offset",
            limit,
        )


def no_job(job_id: str) -> NotFound:
    # The same answer for a job that does not exist and for another team's job: ids do not leak.
    return NotFound(f"no job {job_id[:64]!r} visible to this key; list your team's jobs with GET /api/v1/jobs")


def readable_job(session: Session, caller: Caller, job_id: str, *, detail: bool = False) -> Job:
    job = store.get_job(session, job_id, detail=detail) if re.fullmatch(JOB_ID_PATTERN, job_id) else None
    if job is None or not permissions.can_read(caller, job):
        raise no_job(job_id)
    return job


def require_actor(caller: Caller, owned: permissions.Owned, what: str, verb: str) -> None:
    """Forbidden unless the caller may act on `owned` (a job or a campaign of its own team)."""
    if not permissions.can_act(caller, owned):
        raise Forbidden(f"{caller.label} cannot {verb} {what}: only the key that submitted it ({owned.api_key_id}) or an admin can")


def actionable_job(session: Session, caller: Caller, job_id: str, verb: str) -> Job:
    job = readable_job(session, caller, job_id)
    require_actor(caller, job, f"job {job.id}", verb)
    return job


def require_gpus(can_run_jobs: bool, note: str) -> None:
    """Work that would run a kernel (submit, resume, answer) is refused when nothing can run it."""
    if not can_run_jobs:
        raise Unavailable(f"this service cannot run jobs: {note}")


def visible_job_ids(session: Session, caller: Caller, job_ids: Collection[str]) -> set[str]:
    """Those of `job_ids` the caller may read."""
    if not job_ids:
        return set()
    return set(session.scalars(select(Job.id).where(Job.id.in_(list(job_ids)), permissions.visible_jobs(caller))))
