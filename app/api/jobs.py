"""Jobs: submit, list, read, attempt sources, cancel, resume, answer, and the event stream (SSE).

Who may do what: app/permissions.py (reads: the job's team or an admin; actions: the job's own key
or an admin; another team's job is answered like a missing one, 404).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import PlainTextResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent

from ..bounds import INT32_MAX, KEY_ID_PATTERN, MAX_OFFSET, MODEL_PATTERN, TASK_PATTERN
from ..permissions import Caller
from ..schemas import AnswerIn, JobDetail, JobOut, JobPage, JobStatus, JobSubmit, Precision
from ..services import access, jobs, keys
from ..streams import open_stream, service_stopping, until_service_stops
from .deps import KeyHolder, Reader, RunnerDep, SessionDep, SettingsDep, Submitter, readable_job
from .errors import as_http, responses, unprocessable

router = APIRouter(prefix="/jobs", tags=["jobs"])

JobId = Annotated[str, Path(max_length=64, description="a job id, job_ and 16 hex digits")]
_READ = responses(401, 403, 404)
_ACT = responses(401, 403, 404, 409)
_SOURCE: dict[int | str, dict[str, Any]] = {200: {"content": {"text/x-cuda": {}}}}


@router.post("", status_code=201, response_model=JobOut, summary="Submit a job", responses=responses(400, 401, 403, 404, 413, 429, 503))
def submit_job(
    body: JobSubmit, request: Request, session: SessionDep, caller: Submitter, settings: SettingsDep, runner: RunnerDep
) -> JobOut:
    """Queue an optimization job on a benchmark task, on a `custom` task (the team's own kernel, whose
    oracle is its baseline's output), or again on a custom task this key created (`"task": "ct_…"`); it
    starts when a slot is free. Needs a member or admin key."""
    with as_http():
        return jobs.submit(session, caller, body, settings, request.app.state.tree.agent, request.app.state.evaluation, runner)


JobSort = Literal[
    "created",
    "-created",
    "status",
    "-status",
    "task",
    "-task",
    "precision",
    "-precision",
    "best_score",
    "-best_score",
    "cost",
    "-cost",
    "tokens",
    "-tokens",
    "rounds",
    "-rounds",
]


@router.get("", response_model=JobPage, summary="List the jobs this key may read, newest first", responses=responses(401, 403))
def list_jobs(
    session: SessionDep,
    caller: Reader,
    settings: SettingsDep,
    status: Annotated[JobStatus | None, Query()] = None,
    task: Annotated[str | None, Query(max_length=64, pattern=TASK_PATTERN)] = None,
    precision: Annotated[Precision | None, Query()] = None,
    model: Annotated[str | None, Query(max_length=128, pattern=MODEL_PATTERN, description="jobs that called this model")] = None,
    key: Annotated[str | None, Query(max_length=32, pattern=KEY_ID_PATTERN, description="jobs submitted by this key id")] = None,
    sort: Annotated[JobSort, Query(description="sort key; a leading - sorts descending")] = "-created",
    limit: Annotated[int, Query(ge=1, le=INT32_MAX, description="page size (at most CUDAMASTER_SERVICE__MAX_PAGE_SIZE)")] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> JobPage:
    """A key lists its team's jobs; an admin lists every team's."""
    with as_http():
        access.check_page_size(limit, settings.max_page_size)
    return jobs.page_of_jobs(
        session, caller, limit=limit, offset=offset, status=status, task=task, precision=precision, model=model, key=key, sort=sort
    )


@router.get(
    "/{job_id}", response_model=JobDetail, summary="One job with its attempts, measurements, profiles and LLM calls", responses=_READ
)
def get_job(job_id: JobId, session: SessionDep, caller: Reader) -> JobDetail:
    with as_http():
        return jobs.detail(session, caller, job_id)


@router.get(
    "/{job_id}/attempts/{attempt_id}/source",
    response_class=PlainTextResponse,
    summary="An attempt's CUDA source",
    responses=_SOURCE | _READ,
)
def attempt_source(
    job_id: JobId, attempt_id: Annotated[int, Path(ge=1, le=INT32_MAX)], session: SessionDep, caller: Reader
) -> PlainTextResponse:
    with as_http():
        source = jobs.attempt_source(session, caller, job_id, attempt_id)
    return PlainTextResponse(source, media_type="text/x-cuda; charset=utf-8")


@router.post("/{job_id}/cancel", response_model=JobOut, summary="Cancel a job (a running one stops at its next step)", responses=_ACT)
def cancel_job(job_id: JobId, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin."""
    with as_http():
        return jobs.cancel(session, caller, job_id, runner)


@router.post(
    "/{job_id}/resume",
    response_model=JobOut,
    summary="Resume a cancelled or failed job from its last checkpoint",
    responses=_ACT | responses(429, 503),
)
def resume_job(job_id: JobId, request: Request, session: SessionDep, caller: KeyHolder, settings: SettingsDep, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin. The job counts against its key's in-flight limit again."""
    with as_http():
        return jobs.resume(session, caller, job_id, settings, request.app.state.evaluation, runner)


@router.post(
    "/{job_id}/answer",
    response_model=JobOut,
    summary="Answer the question a manual-mode job is waiting on",
    responses=_ACT | responses(400, 413, 503),
)
def answer_job(job_id: JobId, body: AnswerIn, request: Request, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin."""
    with as_http():
        return jobs.answer(session, caller, job_id, body, request.app.state.evaluation, runner)


def _readable(job_id: JobId, request: Request, caller: Reader, settings: SettingsDep) -> Iterator[None]:
    # Checked before the stream starts, so an unknown job is a plain 404 and not an empty stream. A short
    # session of its own: a request-scoped one would stay open (idle in transaction) for the whole stream.
    with request.app.state.sessions() as session:
        readable_job(session, caller, job_id)
    # One of the key's stream slots, held until the stream ends (a dependency's exit runs after the response).
    with as_http(), open_stream(settings, caller.key_id or f"address {request.client.host if request.client else '?'}"):
        yield


def _snapshot(request: Request, caller: Caller, job_id: str, after: int) -> tuple[str | None, bool, list[tuple[int, str, Any]]] | None:
    """The job's events after `after` (jobs.events_since); None once the stream's key is revoked: the stream ends."""
    with request.app.state.sessions() as session:
        if not keys.still_active(session, caller):
            return None
        return jobs.events_since(session, job_id, after)


def _start_after(
    last_event_id: Annotated[str | None, Header(max_length=10, pattern=r"^[0-9]{1,10}$")] = None,
    after: Annotated[int, Query(ge=0, le=INT32_MAX, description="send events with id greater than this")] = 0,
) -> int:
    # A dependency, not the stream's body: an error raised once the stream has started cannot be a 422.
    if last_event_id is None:
        return after
    if int(last_event_id) > INT32_MAX:
        raise unprocessable(("header", "last-event-id"), f"Last-Event-ID must be an event id, at most {INT32_MAX}", last_event_id)
    return max(after, int(last_event_id))


@router.get(
    "/{job_id}/events",
    response_class=EventSourceResponse,
    summary="Stream a job's events (server-sent events)",
    responses=_READ | responses(429),
    description="Replays the stored events after `Last-Event-ID` (or `after`), then streams new ones. Event names are "
    "the agent's event types (node, attempt, llm_call, profile, interrupt, finished), each event's data its "
    "graph.contract model (sources, evaluations, logs and responses blanked); a final `end` event carries "
    "the job's status when it stops running (finished, failed, cancelled, or waiting_for_input). The stream ends "
    "without one when its key is revoked.",
)
async def job_events(
    job_id: JobId,
    request: Request,
    caller: Reader,
    _job: Annotated[None, Depends(_readable)],
    after: Annotated[int, Depends(_start_after)],
) -> AsyncIterator[ServerSentEvent]:
    runner = request.app.state.runner
    # At SIGTERM the stream closes with `service_stopping` (the client reconnects with Last-Event-ID): app/streams.py.
    last = service_stopping("reconnect with Last-Event-ID to continue from here", job_id=job_id)
    async for event in until_service_stops(runner, _job_events(request, runner, caller, job_id, after), last):
        yield event


async def _job_events(request: Request, runner: Any, caller: Caller, job_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
    while True:
        changed = runner.change_event(job_id)
        snapshot = await asyncio.to_thread(_snapshot, request, caller, job_id, after)
        if snapshot is None:  # the key was revoked while its stream was open: nothing more for it
            return
        status, active, events = snapshot
        for event_id, kind, payload in events:
            yield ServerSentEvent(data=payload, event=kind, id=str(event_id))
            after = event_id
        if events:
            continue
        if not active:
            yield ServerSentEvent(data={"job_id": job_id, "status": status}, event="end")
            return
        with contextlib.suppress(TimeoutError):  # also polls: another process may run the job
            async with asyncio.timeout(1.0):
                await changed.wait()
