"""Jobs: create, list, read, and the state changes the API asks for (cancel, resume, answer)."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import ColumnElement, exists, func, select, text, update
from sqlalchemy.orm import Session, selectinload

from ..db.models import ACTIVE_STATUSES, CANCELLED, DEFAULT_TEAM, FAILED, QUEUED, RUNNING, WAITING, Attempt, Job, JobEvent, LlmCall
from ..db.types import utcnow


class JobStateError(Exception):
    """The job is not in a state that allows this; the message says what is possible."""


def new_job_id() -> str:
    return "job_" + secrets.token_hex(8)


def create_job(
    session: Session,
    *,
    task: str,
    precision: str,
    settings: dict[str, Any],
    api_key_id: str | None,
    team: str = DEFAULT_TEAM,
    commit: bool = True,
) -> Job:
    """`commit=False` leaves the commit to the caller (the per-key limit holds its lock until then)."""
    now = utcnow()
    job = Job(
        id=new_job_id(),
        task=task,
        precision=precision,
        settings=settings,
        status=QUEUED,
        message="queued",
        api_key_id=api_key_id,
        team=team,
        created_at=now,
        updated_at=now,
        attempts_count=0,
        llm_calls_count=0,
        input_tokens=0,
        output_tokens=0,
        reasoning_tokens=0,
        cached_tokens=0,
        cost_usd=0.0,
        llm_latency_s=0.0,
        cancel_requested=False,
    )
    session.add(job)
    if commit:
        session.commit()
    return job


def in_flight_count(session: Session, api_key_id: str | None) -> int:
    return session.scalar(select(func.count(Job.id)).where(Job.api_key_id == api_key_id, Job.status.in_(ACTIVE_STATUSES))) or 0


# How a job list may be sorted: name -> what it sorts by (list_jobs: "-name" sorts descending).
SORTS = {
    "created": Job.created_at,
    "status": Job.status,
    "task": Job.task,
    "precision": Job.precision,
    "best_score": Job.best_score,
    "cost": Job.cost_usd,
    "tokens": Job.input_tokens + Job.output_tokens,
    "rounds": Job.attempts_count,
}


def job_filters(
    *,
    team: str | None = None,
    status: str | None = None,
    task: str | None = None,
    precision: str | None = None,
    model: str | None = None,
    key: str | None = None,
) -> list[ColumnElement[bool]]:
    """The WHERE conditions of a job list (list_jobs; the dashboard's live table uses them for new jobs)."""
    conds: list[ColumnElement[bool]] = []
    if team is not None:
        conds.append(Job.team == team)
    if status:
        conds.append(Job.status == status)
    if task:
        conds.append(Job.task == task)
    if precision:
        conds.append(Job.precision == precision)
    if key:
        conds.append(Job.api_key_id == key)
    if model:
        conds.append(exists().where(LlmCall.job_id == Job.id, LlmCall.model == model))
    return conds


def list_jobs(
    session: Session,
    *,
    status: str | None,
    task: str | None,
    limit: int,
    offset: int,
    team: str | None = None,
    precision: str | None = None,
    model: str | None = None,
    key: str | None = None,
    sort: str = "-created",
) -> tuple[list[Job], int]:
    """`team`: only that team's jobs (None: every team's). `model`: jobs with an LLM call to that model.
    `key`: jobs submitted by that key id. `sort`: a name of SORTS, descending when prefixed with "-"."""
    conds = job_filters(team=team, status=status, task=task, precision=precision, model=model, key=key)
    column = SORTS[sort.removeprefix("-")]
    order = (
        (column.desc().nulls_last(), Job.created_at.desc(), Job.id.desc())
        if sort.startswith("-")
        else (column.asc().nulls_last(), Job.created_at.desc(), Job.id.desc())
    )
    rows = session.scalars(select(Job).where(*conds).order_by(*order).limit(limit).offset(offset)).all()
    return list(rows), session.scalar(select(func.count(Job.id)).where(*conds)) or 0


def get_job(session: Session, job_id: str, *, detail: bool = False) -> Job | None:
    if not detail:
        return session.get(Job, job_id)
    query = (
        select(Job)
        .where(Job.id == job_id)
        .options(
            selectinload(Job.attempts).selectinload(Attempt.measurements),
            selectinload(Job.attempts).selectinload(Attempt.profile),
            selectinload(Job.llm_calls),
        )
    )
    return session.scalar(query)


def get_attempt(session: Session, job_id: str, attempt_id: int) -> Attempt | None:
    return session.scalar(select(Attempt).where(Attempt.job_id == job_id, Attempt.id == attempt_id))


def events_after(session: Session, job_id: str, after: int, limit: int = 500) -> list[JobEvent]:
    return list(session.scalars(select(JobEvent).where(JobEvent.job_id == job_id, JobEvent.id > after).order_by(JobEvent.id).limit(limit)))


# How long a claim, cancel, settle or lease write waits for a row lock (PostgreSQL) before it gives up with a
# transient error (the caller retries, the API answers 503): a replica frozen while it holds a job's row (a GC or
# VM pause, a partitioned connection) must not stall the others.
LOCK_TIMEOUT_MS = 2000


def short_lock_wait(session: Session) -> None:
    """Bound the lock waits of the rest of this transaction (`SET LOCAL lock_timeout`): a wait past
    LOCK_TIMEOUT_MS raises OperationalError (LockNotAvailable). SQLite waits on its busy timeout instead."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}"))


def lock_job(session: Session, job_id: str) -> Job | None:
    """Take the job's row lock for the rest of the transaction and return the row as stored now.

    Every change of a job's status that depends on its current status is made under this lock (the
    API's cancel, the runner's settle), so two of them are applied one after the other and each sees
    what the other wrote. The lock is an UPDATE of the row: a row lock on PostgreSQL, the database's
    write lock on SQLite (where SELECT ... FOR UPDATE locks nothing). Its wait is bounded (short_lock_wait)."""
    short_lock_wait(session)
    result = session.execute(update(Job).where(Job.id == job_id).values(updated_at=utcnow()))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return None
    return session.scalar(select(Job).where(Job.id == job_id).execution_options(populate_existing=True))


def request_cancel(session: Session, job: Job) -> Job:
    """Queued or waiting jobs stop at once; a running job is told to stop at its next step (with a checkpoint).

    Decided on the row as it is under its lock, not on `job` as read earlier: a job that reached a
    question (or was claimed by a runner) since then is cancelled as what it is now."""
    locked = lock_job(session, job.id)
    if locked is None:
        session.rollback()
        raise JobStateError(f"job {job.id} no longer exists")
    job = locked
    if job.status in (QUEUED, WAITING):
        job.status, job.message, job.finished_at = CANCELLED, "cancelled before it ran further", utcnow()
        job.cancel_requested = False
        job.pending_answer, job.question = None, None
    elif job.status == RUNNING:
        job.cancel_requested, job.message = True, "cancel requested; stopping at the next step"
    else:
        status = job.status
        session.rollback()
        raise JobStateError(f"job {job.id} is {status}; only queued, running or waiting jobs can be cancelled")
    session.commit()
    return job


def request_resume(session: Session, job: Job) -> Job:
    if job.status == WAITING:
        raise JobStateError(f'job {job.id} is waiting for an answer: POST /api/v1/jobs/{job.id}/answer with {{"answer": ...}}')
    if job.status not in (CANCELLED, FAILED):
        raise JobStateError(f"job {job.id} is {job.status}; only cancelled or failed jobs can be resumed")
    job.status, job.message, job.finished_at, job.cancel_requested = QUEUED, "queued to resume from its last checkpoint", None, False
    job.updated_at = utcnow()
    session.commit()
    return job


def pending_question_id(job: Job) -> str | None:
    """The id of the question a waiting job asked (its interrupt event's graph.contract.Question)."""
    question = (job.question or {}).get("question")
    return question.get("question_id") if isinstance(question, dict) else None


def submit_answer(session: Session, job: Job, answer: str, question_id: str | None = None) -> Job:
    """Queue the job with `answer`, bound to the question it is waiting on (`question_id`, when given,
    must be that one): the agent feeds it to that question only."""
    if job.status != WAITING:
        raise JobStateError(f"job {job.id} is {job.status}, not waiting for input; nothing to answer")
    pending = pending_question_id(job)
    if question_id is not None and question_id != pending:
        raise JobStateError(f"job {job.id} waits on question {pending}, not {question_id}: GET /api/v1/jobs/{job.id} shows its question")
    job.pending_answer, job.answer_for = answer, pending
    job.status, job.message, job.question = QUEUED, "answer received; queued to continue", None
    job.updated_at = utcnow()
    session.commit()
    return job
