"""Jobs: submit, list, read, attempt sources, cancel, resume, answer, and the event stream (SSE)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from sqlalchemy.orm import Session

from bench_tasks import TaskError, load_task

from .. import custom_tasks
from ..db.models import ALL_STATUSES, QUEUED, RUNNING, ApiKey
from ..runner import JobRunner
from ..schemas import AnswerIn, JobDetail, JobOut, JobPage, JobSubmit
from ..settings import ServiceSettings
from ..store import jobs as store
from .deps import get_runner, get_session, get_settings, read_access, write_access

router = APIRouter(prefix="/jobs", tags=["jobs"])

_NOT_FOUND = "no job {id}; list jobs with GET /api/v1/jobs"


def _job_or_404(session: Session, job_id: str, detail: bool = False):
    job = store.get_job(session, job_id, detail=detail)
    if job is None:
        raise HTTPException(404, _NOT_FOUND.format(id=job_id))
    return job


@router.post("", status_code=201, response_model=JobOut, summary="Submit a job",
             responses={401: {"description": "no API key"}, 403: {"description": "key not valid"},
                        413: {"description": "request or source too large"}, 422: {"description": "invalid submission"},
                        429: {"description": "too many jobs in flight for this key"}})
def submit_job(body: JobSubmit, session: Session = Depends(get_session), key: ApiKey = Depends(write_access),
               settings: ServiceSettings = Depends(get_settings), runner: JobRunner = Depends(get_runner)):
    """Queue an optimization job on a benchmark task, or on a `custom` task (the team's own kernel, whose
    oracle is its baseline's output); it starts when a slot is free."""
    if store.in_flight_count(session, key.id) >= settings.max_jobs_in_flight_per_key:
        raise HTTPException(429, f"API key {key.id} already has {settings.max_jobs_in_flight_per_key} jobs queued, running or "
                                 "waiting (CUDAMASTER_MAX_JOBS_IN_FLIGHT_PER_KEY); wait for one to finish or cancel one")
    if body.custom is not None:
        size = len(body.custom.baseline_cu.encode())
        if size > settings.max_source_bytes:
            raise HTTPException(413, f"custom.baseline_cu is {size} bytes; the limit is {settings.max_source_bytes} "
                                     "(CUDAMASTER_MAX_SOURCE_BYTES)")
        try:
            custom_tasks.validate(body.custom, body.precision)
            _, task = custom_tasks.store(session, body.custom, body.precision, key.id)
        except custom_tasks.CustomTaskInvalid as exc:
            raise HTTPException(422, f"custom task: {exc}") from None
    else:
        try:
            task = load_task(body.task)
            task.variant(body.precision)
        except TaskError as exc:
            raise HTTPException(422, f"task: {exc}") from None
    job = store.create_job(session, task=task.name, precision=body.precision, settings=body.agent_spec() | {"task": task.name},
                           api_key_id=key.id)
    runner.wake()
    return JobOut.model_validate(job)


@router.get("", response_model=JobPage, summary="List jobs, newest first")
def list_jobs(session: Session = Depends(get_session), _key=Depends(read_access), settings: ServiceSettings = Depends(get_settings),
              status: Annotated[str | None, Query(description="one of " + ", ".join(ALL_STATUSES))] = None,
              task: Annotated[str | None, Query(max_length=128)] = None,
              limit: Annotated[int, Query(ge=1)] = 50, offset: Annotated[int, Query(ge=0)] = 0):
    if status is not None and status not in ALL_STATUSES:
        raise HTTPException(422, f"unknown status {status!r}; use one of {', '.join(ALL_STATUSES)}")
    if limit > settings.max_page_size:
        raise HTTPException(422, f"limit {limit} is over the page size limit {settings.max_page_size}; page with offset")
    rows, total = store.list_jobs(session, status=status, task=task, limit=limit, offset=offset)
    return JobPage(items=[JobOut.model_validate(j) for j in rows], total=total, limit=limit, offset=offset,
                   next_offset=offset + limit if offset + limit < total else None)


@router.get("/{job_id}", response_model=JobDetail, summary="One job with its attempts, measurements, profiles and LLM calls")
def get_job(job_id: str, session: Session = Depends(get_session), _key=Depends(read_access)):
    job = _job_or_404(session, job_id, detail=True)
    return JobDetail.model_validate(
        {**JobOut.model_validate(job).model_dump(), "attempts": job.attempts, "llm_calls": job.llm_calls})


@router.get("/{job_id}/attempts/{attempt_id}/source", response_class=PlainTextResponse, summary="An attempt's CUDA source",
            responses={200: {"content": {"text/x-cuda": {}}}})
def attempt_source(job_id: str, attempt_id: int, session: Session = Depends(get_session), _key=Depends(read_access)):
    attempt = store.get_attempt(session, job_id, attempt_id)
    if attempt is None:
        raise HTTPException(404, f"job {job_id} has no attempt {attempt_id}; GET /api/v1/jobs/{job_id} lists its attempts")
    return PlainTextResponse(attempt.source, media_type="text/x-cuda; charset=utf-8")


@router.post("/{job_id}/cancel", response_model=JobOut, summary="Cancel a job (a running one stops at its next step)")
def cancel_job(job_id: str, session: Session = Depends(get_session), _key: ApiKey = Depends(write_access),
               runner: JobRunner = Depends(get_runner)):
    job = _job_or_404(session, job_id)
    try:
        job = store.request_cancel(session, job)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.request_stop(job_id)
    return JobOut.model_validate(job)


@router.post("/{job_id}/resume", response_model=JobOut, summary="Resume a cancelled or failed job from its last checkpoint")
def resume_job(job_id: str, session: Session = Depends(get_session), _key: ApiKey = Depends(write_access),
               runner: JobRunner = Depends(get_runner)):
    job = _job_or_404(session, job_id)
    try:
        job = store.request_resume(session, job)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)


@router.post("/{job_id}/answer", response_model=JobOut, summary="Answer the question a manual-mode job is waiting on")
def answer_job(job_id: str, body: AnswerIn, session: Session = Depends(get_session), _key: ApiKey = Depends(write_access),
               runner: JobRunner = Depends(get_runner)):
    job = _job_or_404(session, job_id)
    try:
        job = store.submit_answer(session, job, body.answer)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)


def _existing_job(job_id: str, request: Request) -> None:
    # Checked before the stream starts, so an unknown job is a plain 404 and not an empty stream. A short
    # session of its own: a request-scoped one would stay open (idle in transaction) for the whole stream.
    with request.app.state.sessions() as session:
        _job_or_404(session, job_id)


def _snapshot(request: Request, job_id: str, after: int):
    with request.app.state.sessions() as session:
        job = store.get_job(session, job_id)
        if job is None:
            return None, []
        status = job.status  # read before the events: an event stored before a final status is never missed
        return status, [(e.id, e.type, e.payload) for e in store.events_after(session, job_id, after)]


@router.get("/{job_id}/events", response_class=EventSourceResponse, summary="Stream a job's events (server-sent events)",
            description="Replays the stored events after `Last-Event-ID` (or `after`), then streams new ones. Event names are "
                        "the agent's event types (node, attempt, llm_call, interrupt, finished); a final `end` event carries "
                        "the job's status when it stops running (finished, failed, cancelled, or waiting_for_input).")
async def job_events(job_id: str, request: Request, _key=Depends(read_access), _job=Depends(_existing_job),
                     last_event_id: Annotated[str | None, Header()] = None,
                     after: Annotated[int, Query(ge=0, description="send events with id greater than this")] = 0
                     ) -> AsyncIterator[ServerSentEvent]:
    runner: JobRunner = request.app.state.runner
    if last_event_id and last_event_id.isdigit():
        after = max(after, int(last_event_id))
    while True:
        changed = runner.change_event(job_id)
        status, events = await asyncio.to_thread(_snapshot, request, job_id, after)
        for event_id, kind, payload in events:
            yield ServerSentEvent(data=payload, event=kind, id=str(event_id))
            after = event_id
        if events:
            continue
        if status not in (QUEUED, RUNNING):
            yield ServerSentEvent(data={"job_id": job_id, "status": status}, event="end")
            return
        try:
            await asyncio.wait_for(changed.wait(), timeout=1.0)  # also polls: another process may run the job
        except TimeoutError:
            pass
