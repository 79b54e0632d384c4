"""Leases: one runner holds a running job; it renews the lease while it works. A job whose holder
died (lease expired) is claimed by the next runner that looks, which resumes it from its checkpoint.

Fencing: each claim stores a lease of its own in `jobs.lease_holder`: the runner's id and a fresh
generation token (`<runner id>#<generation>`), so a runner that claims a job again (after a stall, or a
restart under the same id) holds a lease its older run does not. Every write a run makes for its job
(checkpoint, event, attempt, LLM-call record, settle) first calls `hold` in the write's own transaction:
it locks the job's row (PostgreSQL) or the database (SQLite) and raises LeaseLost unless the run's lease is
still the job's. A stalled runner that wakes after a takeover thus writes nothing, and stops.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from graph.database_faults import LeaseTakenOver

from ..db.models import CANCELLED, FAILED, FINISHED, NO_CORRECT, QUEUED, RUNNING, WAITING, Job
from ..db.types import utcnow
from .events import mark_lost_in_flight
from .jobs import LOCK_TIMEOUT_MS, lock_job, short_lock_wait


class LeaseLost(LeaseTakenOver):
    """The run's lease is no longer the job's: another runner took the job over. Nothing was written."""


@dataclass(frozen=True)
class Claim:
    job_id: str
    settings: dict[str, Any]
    resume: bool  # the job ran before: continue from its checkpoint
    answer: str | None
    cancel_requested: bool
    answer_for: str | None = None  # the id of the question `answer` answers (graph.contract.Answer)
    lease: str = ""  # `<runner id>#<generation>`: what this run's writes are fenced with


def new_lease(holder: str) -> str:
    """A lease of `holder`'s own for one claim (fits jobs.lease_holder)."""
    return f"{holder[:100]}#{uuid.uuid4().hex[:16]}"


def holder_of(lease: str | None) -> str | None:
    """The runner id of a lease."""
    return None if lease is None else lease.rsplit("#", 1)[0]


def hold(session: Session, job_id: str, lease: str) -> None:
    """Fence a write: raise LeaseLost unless `lease` is still the job's. Call it first in the write's transaction:
    the no-op update takes the job row's lock (the database's write lock on SQLite) until the caller commits, so
    a takeover cannot slip in between this check and the write."""
    short_lock_wait(session)
    result = session.execute(update(Job).where(Job.id == job_id, Job.lease_holder == lease).values(lease_holder=lease))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise LeaseLost(f"the lease {lease} of job {job_id} was taken over by another runner; this run writes nothing more")


def hold_on_cursor(cursor: Any, job_id: str, lease: str) -> None:
    """`hold` on a psycopg cursor inside another writer's transaction on the same database (the checkpointer's:
    app/agent.py), so the lease check and the checkpoint write commit together, or not at all."""
    cursor.execute(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
    cursor.execute(f"UPDATE {Job.__tablename__} SET lease_holder = %s WHERE id = %s AND lease_holder = %s", (lease, job_id, lease))
    if cursor.rowcount != 1:
        raise LeaseLost(f"the lease {lease} of job {job_id} was taken over by another runner; this run writes nothing more")


def check(session: Session, job_id: str, lease: str) -> None:
    """`hold` in a transaction of its own (before a write elsewhere: the checkpoint store)."""
    hold(session, job_id, lease)
    session.commit()


def _free(now):
    return or_(Job.lease_holder.is_(None), Job.lease_expires_at.is_(None), Job.lease_expires_at < now)


def claim_jobs(session: Session, holder: str, lease_s: float, limit: int) -> list[Claim]:
    """Take up to `limit` queued jobs, or running jobs whose holder's lease ran out (oldest first).

    One transaction: the candidates are locked with `FOR UPDATE SKIP LOCKED`, so a job whose row another
    transaction holds (a replica frozen mid-write, a cancel) is passed over, not waited on, and the rest are
    claimed at once; every other lock wait is bounded (short_lock_wait). The row locks are held until the
    commit: a cancel waits, then sees the job running (and asks the runner to stop it). On SQLite (no row
    locks) the claim's own update checks the job is still free."""
    now = utcnow()
    short_lock_wait(session)
    candidates = session.scalars(
        select(Job)
        .where(Job.status.in_((QUEUED, RUNNING)), _free(now))
        .order_by(Job.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .execution_options(populate_existing=True)
    ).all()
    claims = [claim for job in candidates if (claim := _claim_one(session, job, holder, lease_s, now)) is not None]
    session.commit()
    return claims


def _claim_one(session: Session, job: Job, holder: str, lease_s: float, now: Any) -> Claim | None:
    lease = new_lease(holder)
    result = session.execute(
        update(Job)
        .where(Job.id == job.id, Job.status.in_((QUEUED, RUNNING)), _free(now))
        .values(lease_holder=lease, lease_expires_at=now + timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return None  # SQLite: another runner was faster, or the job was cancelled meanwhile
    session.refresh(job)
    resume = job.started_at is not None
    job.status, job.message, job.updated_at = RUNNING, "running" if not resume else "resumed from its last checkpoint", now
    job.started_at = job.started_at or now
    if resume:
        mark_lost_in_flight(session, job.id)  # sent by a holder that is gone: never answered to this runner
    return Claim(job.id, dict(job.settings), resume, job.pending_answer, job.cancel_requested, job.answer_for, lease)


def renew(session: Session, job_id: str, lease: str, lease_s: float) -> tuple[bool, bool]:
    """Extend the lease (a claim's `lease`); returns (still held, cancel requested)."""
    now = utcnow()
    short_lock_wait(session)
    result = session.execute(
        update(Job).where(Job.id == job_id, Job.lease_holder == lease).values(lease_expires_at=now + timedelta(seconds=lease_s))
    )
    session.commit()
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return False, False
    return True, bool(session.scalar(select(Job.cancel_requested).where(Job.id == job_id)))


OUTCOME_STATUS = {"finished": FINISHED, "no_correct_kernel": NO_CORRECT, "waiting_for_input": WAITING, "failed": FAILED}


def settle(
    session: Session,
    job_id: str,
    lease: str,
    outcome_status: str,
    message: str,
    *,
    draining: bool,
    question: Any = None,
    stop_reason: str | None = None,
    paused: bool = False,
) -> str | None:
    """Record how a run ended and release the lease (a claim's `lease`). Returns the job's new status (None if
    the lease was lost). `paused`: the run stopped on a transient fault (the database was unreachable); the job
    stays running with its lease released, so the next claim resumes it from its checkpoint."""
    job = lock_job(session, job_id)  # a cancel stored meanwhile is seen here, or waits for this settle
    if job is None or job.lease_holder != lease:
        session.rollback()
        return None  # another runner took the job over; it owns the outcome
    now = utcnow()
    if job.cancel_requested and outcome_status in ("stopped", "failed", "waiting_for_input"):
        # The cancel wins over how the stop showed itself: a question reached, or a step that failed
        # because it was interrupted.
        why = f" (the run ended with: {message})" if outcome_status == "failed" and message else ""
        status, message = CANCELLED, f"cancelled{why}; resume with POST /api/v1/jobs/{job_id}/resume"
    elif outcome_status == "stopped":
        if paused:
            status = RUNNING
        elif draining:
            status, message = RUNNING, "service stopped; the job resumes from its checkpoint when the service starts again"
        else:
            status = FAILED
            message = message or "the agent stopped without a reason"
    else:
        status = OUTCOME_STATUS.get(outcome_status, FAILED)
        if outcome_status not in OUTCOME_STATUS:
            message = f"the agent returned an unknown status {outcome_status!r}: {message}"
    job.status, job.message, job.updated_at = status, message[:4000], now
    job.stop_reason = stop_reason if status in (FINISHED, NO_CORRECT) else None
    # The answer this run was given is consumed whatever the outcome (or refused as an answer to another
    # question, graph.runner.resume_job): a job that asks again must not hand the next run (after a cancel
    # and resume) the answer to the previous question.
    job.pending_answer, job.answer_for = None, None
    if status != WAITING:
        job.question = None
    elif question is not None and not job.question:
        job.question = {"type": "interrupt", "job_id": job_id, "question": question}
    if status in (FINISHED, NO_CORRECT, CANCELLED, FAILED):
        job.finished_at = now
        job.cancel_requested = False
    job.lease_holder, job.lease_expires_at = None, None
    mark_lost_in_flight(session, job_id)  # the run is over: a call it never reported back is lost
    session.commit()
    return status


def release_all(session: Session, holder: str) -> None:
    """On a clean shutdown: leave running jobs claimable at once by the next start."""
    held = Job.lease_holder.startswith(f"{holder[:100]}#", autoescape=True)
    short_lock_wait(session)
    session.execute(update(Job).where(held).values(lease_holder=None, lease_expires_at=None))
    session.commit()
