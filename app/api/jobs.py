"""Jobs: submit, list, read, attempt sources, cancel, resume, answer, and the event stream (SSE).

Who may do what: app/permissions.py (reads: the job's team or an admin; actions: the job's own key
or an admin; another team's job is answered like a missing one, 404).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query, Request
from fastapi.responses import PlainTextResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent

from bench_tasks import TaskError, load_task
from bench_tasks.harness.sandbox import SandboxUnavailable
from bench_tasks.spec import Task
from graph import spending
from settings import ServiceSettings, get_harness_settings

from .. import custom_tasks, permissions
from ..bounds import INT32_MAX, KEY_ID_PATTERN, MAX_OFFSET, MODEL_PATTERN, TASK_PATTERN, is_custom_task_id
from ..db.models import CANCELLED, FAILED, QUEUED, RUNNING, CustomTask
from ..limits import InFlightLimit, take_job_slot
from ..permissions import Caller
from ..schemas import AnswerIn, JobDetail, JobOut, JobPage, JobStatus, JobSubmit, Precision
from ..store import jobs as store
from ..streams import service_stopping, until_service_stops
from .deps import KeyHolder, Reader, RunnerDep, SessionDep, SettingsDep, Submitter, actionable_job, readable_job, require_gpus
from .errors import responses, unprocessable

router = APIRouter(prefix="/jobs", tags=["jobs"])

JobId = Annotated[str, Path(max_length=64, description="a job id, job_ and 16 hex digits")]
_READ = responses(401, 403, 404)
_ACT = responses(401, 403, 404, 409)
COMPILE_LOG_CHARS = 8000  # of a refused baseline's compile log, sent back in the 422
_SOURCE: dict[int | str, dict[str, Any]] = {200: {"content": {"text/x-cuda": {}}}}


def _task_of(session: SessionDep, caller: Caller, body: JobSubmit, settings: ServiceSettings) -> Task:
    """The task a submission names, checked; a new custom task is stored (not committed) in the session."""
    assert caller.key_id is not None
    if body.custom is not None:
        try:
            custom_tasks.validate(
                body.custom, body.precision, max_sizes=settings.max_custom_sizes, max_elements_per_size=settings.max_custom_elements
            )
            return custom_tasks.store(session, body.custom, body.precision, caller.key_id, harness=get_harness_settings(), commit=False)[1]
        except custom_tasks.CustomTaskInvalid as exc:
            if exc.log is not None:  # the baseline does not build: its compile log (the tail, where the errors are) goes back
                raise unprocessable(
                    ("body", "custom", "baseline_cu"), f"custom task: {exc}", ctx={"compile_log": exc.log[-COMPILE_LOG_CHARS:]}
                ) from None
            raise unprocessable(("body", "custom"), f"custom task: {exc}") from None
        except SandboxUnavailable as exc:
            raise HTTPException(503, f"cannot check the custom task's baseline here: {exc}") from None
    assert body.task is not None
    try:
        if is_custom_task_id(body.task):
            row = session.get(CustomTask, body.task)
            if row is None or not permissions.can_use_custom_task(caller, row):  # the same answer: ids do not leak
                raise HTTPException(
                    404,
                    f"no custom task {body.task} created by {caller.label}: a custom task is private "
                    "to the key that submitted it; send `custom` to submit your own",
                )
            task = custom_tasks.register(row)  # stored by another replica, or before a restart: loadable here too
        else:
            task = load_task(body.task)
        task.variant(body.precision)
    except (TaskError, custom_tasks.CustomTaskInvalid) as exc:
        raise unprocessable(("body", "task"), f"task: {exc}", body.task) from None
    return task


@router.post("", status_code=201, response_model=JobOut, summary="Submit a job", responses=responses(400, 401, 403, 404, 413, 429, 503))
def submit_job(
    body: JobSubmit, request: Request, session: SessionDep, caller: Submitter, settings: SettingsDep, runner: RunnerDep
) -> JobOut:
    """Queue an optimization job on a benchmark task, on a `custom` task (the team's own kernel, whose
    oracle is its baseline's output), or again on a custom task this key created (`"task": "ct_…"`); it
    starts when a slot is free. Needs a member or admin key."""
    require_gpus(request)
    if body.custom is not None:
        size = len(body.custom.baseline_cu.encode())
        if size > settings.max_source_bytes:
            raise HTTPException(
                413, f"custom.baseline_cu is {size} bytes; the limit is {settings.max_source_bytes} (CUDAMASTER_SERVICE__MAX_SOURCE_BYTES)"
            )
    task = _task_of(session, caller, body, settings)
    spec = body.agent_spec(task.name)
    if (why := spending.unenforceable(spec, request.app.state.tree.agent)) is not None:
        raise unprocessable(("body", "spending_cap"), why)
    assert caller.key_id is not None
    try:  # the key's lock, held until the commit below: the count and the insert are one step
        take_job_slot(session, caller.key_id, settings.max_jobs_in_flight_per_key)
    except InFlightLimit as exc:
        raise HTTPException(429, str(exc)) from None
    job = store.create_job(
        session,
        task=task.name,
        precision=body.precision,
        settings=spec.model_dump(mode="json"),
        api_key_id=caller.key_id,
        team=caller.team,
        commit=False,
    )
    session.commit()
    runner.wake()
    return JobOut.model_validate(job)


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
    if limit > settings.max_page_size:
        raise unprocessable(
            ("query", "limit"),
            f"limit {limit} is over the page size limit {settings.max_page_size} (CUDAMASTER_SERVICE__MAX_PAGE_SIZE); page with offset",
            limit,
        )
    team = None if permissions.is_admin(caller) else caller.team
    rows, total = store.list_jobs(
        session, status=status, task=task, limit=limit, offset=offset, team=team, precision=precision, model=model, key=key, sort=sort
    )
    return JobPage(
        items=[JobOut.model_validate(j) for j in rows],
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


@router.get(
    "/{job_id}", response_model=JobDetail, summary="One job with its attempts, measurements, profiles and LLM calls", responses=_READ
)
def get_job(job_id: JobId, session: SessionDep, caller: Reader) -> JobDetail:
    job = readable_job(session, caller, job_id, detail=True)
    return JobDetail.model_validate({**JobOut.model_validate(job).model_dump(), "attempts": job.attempts, "llm_calls": job.llm_calls})


@router.get(
    "/{job_id}/attempts/{attempt_id}/source",
    response_class=PlainTextResponse,
    summary="An attempt's CUDA source",
    responses=_SOURCE | _READ,
)
def attempt_source(
    job_id: JobId, attempt_id: Annotated[int, Path(ge=1, le=INT32_MAX)], session: SessionDep, caller: Reader
) -> PlainTextResponse:
    job = readable_job(session, caller, job_id)
    attempt = store.get_attempt(session, job.id, attempt_id)
    if attempt is None:
        raise HTTPException(404, f"job {job.id} has no attempt {attempt_id}; GET /api/v1/jobs/{job.id} lists its attempts")
    return PlainTextResponse(attempt.source, media_type="text/x-cuda; charset=utf-8")


@router.post("/{job_id}/cancel", response_model=JobOut, summary="Cancel a job (a running one stops at its next step)", responses=_ACT)
def cancel_job(job_id: JobId, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin."""
    job = actionable_job(session, caller, job_id, "cancel")
    try:
        job = store.request_cancel(session, job)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.request_stop(job.id)
    return JobOut.model_validate(job)


@router.post(
    "/{job_id}/resume",
    response_model=JobOut,
    summary="Resume a cancelled or failed job from its last checkpoint",
    responses=_ACT | responses(429, 503),
)
def resume_job(job_id: JobId, request: Request, session: SessionDep, caller: KeyHolder, settings: SettingsDep, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin. The job counts against its key's in-flight limit again."""
    job = actionable_job(session, caller, job_id, "resume")
    require_gpus(request)
    if job.status in (CANCELLED, FAILED) and job.api_key_id is not None:
        try:
            take_job_slot(session, job.api_key_id, settings.max_jobs_in_flight_per_key)
        except InFlightLimit as exc:
            raise HTTPException(429, str(exc)) from None
        session.refresh(job)
    try:
        job = store.request_resume(session, job)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)


@router.post(
    "/{job_id}/answer",
    response_model=JobOut,
    summary="Answer the question a manual-mode job is waiting on",
    responses=_ACT | responses(400, 413, 503),
)
def answer_job(job_id: JobId, body: AnswerIn, request: Request, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> JobOut:
    """The job's own key or an admin."""
    job = actionable_job(session, caller, job_id, "answer")
    require_gpus(request)
    try:
        job = store.submit_answer(session, job, body.answer, body.question_id)
    except store.JobStateError as exc:
        raise HTTPException(409, str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)


def _readable(job_id: JobId, request: Request, caller: Reader) -> None:
    # Checked before the stream starts, so an unknown job is a plain 404 and not an empty stream. A short
    # session of its own: a request-scoped one would stay open (idle in transaction) for the whole stream.
    with request.app.state.sessions() as session:
        readable_job(session, caller, job_id)


def _snapshot(request: Request, job_id: str, after: int) -> tuple[str | None, list[tuple[int, str, Any]]]:
    with request.app.state.sessions() as session:
        job = store.get_job(session, job_id)
        if job is None:
            return None, []
        status = job.status  # read before the events: an event stored before a final status is never missed
        return status, [(e.id, e.type, e.payload) for e in store.events_after(session, job_id, after)]


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
    responses=_READ,
    description="Replays the stored events after `Last-Event-ID` (or `after`), then streams new ones. Event names are "
    "the agent's event types (node, attempt, llm_call, profile, interrupt, finished), each event's data its "
    "graph.contract model (sources, evaluations, logs and responses blanked); a final `end` event carries "
    "the job's status when it stops running (finished, failed, cancelled, or waiting_for_input).",
)
async def job_events(
    job_id: JobId, request: Request, _job: Annotated[None, Depends(_readable)], after: Annotated[int, Depends(_start_after)]
) -> AsyncIterator[ServerSentEvent]:
    runner = request.app.state.runner
    # At SIGTERM the stream closes with `service_stopping` (the client reconnects with Last-Event-ID): app/streams.py.
    last = service_stopping("reconnect with Last-Event-ID to continue from here", job_id=job_id)
    async for event in until_service_stops(runner, _job_events(request, runner, job_id, after), last):
        yield event


async def _job_events(request: Request, runner: Any, job_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
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
        with contextlib.suppress(TimeoutError):  # also polls: another process may run the job
            async with asyncio.timeout(1.0):
                await changed.wait()
