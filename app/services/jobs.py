"""Jobs: submit, read, cancel, resume and answer, for the API's routes and the dashboard's pages alike.

Who may do what: app/permissions.py (reads: the job's team or an admin; actions: the job's own key or an
admin; another team's job is answered like a missing one)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from bench_tasks import TaskError, load_task
from bench_tasks.harness.sandbox import SandboxUnavailable
from bench_tasks.spec import Task
from graph import spending
from settings import AgentSettings, ServiceSettings, get_harness_settings

from .. import custom_tasks, permissions, pytorch_tasks, stored_tasks
from ..bounds import is_stored_task_id
from ..db.models import CANCELLED, FAILED, QUEUED, RUNNING
from ..evaluation import Evaluation
from ..limits import InFlightLimit, service_limits, take_job_slot
from ..permissions import Caller
from ..runner import JobRunner
from ..schemas import AnswerIn, JobDetail, JobOut, JobPage, JobSubmit
from ..store import jobs as store
from .access import actionable_job, readable_job, require_gpus
from .errors import Conflict, Invalid, NotFound, TooLarge, TooMany, Unavailable

COMPILE_LOG_CHARS = 8000  # of a refused baseline's compile log, sent back with the refusal


def _custom_task(session: Session, caller: Caller, body: JobSubmit, settings: ServiceSettings) -> Task:
    """A new custom task, checked and stored (not committed) in the session; its baseline compiles in one of the
    process's submit-time compile slots (TooMany when none is free or the key compiled its limit this minute)."""
    assert body.custom is not None and caller.key_id is not None
    try:
        custom_tasks.validate(
            body.custom, body.precision, max_sizes=settings.max_custom_sizes, max_elements_per_size=settings.max_custom_elements
        )
        with service_limits(settings).compile(caller.key_id):
            return custom_tasks.store(session, body.custom, body.precision, caller.key_id, harness=get_harness_settings(), commit=False)[1]
    except custom_tasks.CustomTaskInvalid as exc:
        if exc.log is not None:  # the baseline does not build: its compile log (the tail, where the errors are) goes back
            raise Invalid(
                ("body", "custom", "baseline_cu"), f"custom task: {exc}", ctx={"compile_log": exc.log[-COMPILE_LOG_CHARS:]}
            ) from None
        raise Invalid(("body", "custom"), f"custom task: {exc}") from None
    except SandboxUnavailable as exc:
        raise Unavailable(f"cannot check the custom task's baseline here: {exc}") from None


def _named_task(session: Session, caller: Caller, name: str, precision: str) -> Task:
    """A benchmark task, or a stored task (custom, PyTorch reference) of the caller's, by name, with the precision checked."""
    try:
        if is_stored_task_id(name):
            row = stored_tasks.row_of(session, name)
            if row is None or not permissions.can_use_custom_task(caller, row):  # the same answer: ids do not leak
                raise NotFound(
                    f"no stored task {name} created by {caller.label}: a custom task or PyTorch reference is private "
                    "to the key that submitted it; send `custom` or `pytorch` to submit your own"
                )
            task = stored_tasks.register(row)  # stored by another replica, or before a restart: loadable here too
        else:
            task = load_task(name)
        task.variant(precision)
    except (TaskError, stored_tasks.StoredTaskInvalid) as exc:
        raise Invalid(("body", "task"), f"task: {exc}", name) from None
    return task


def submit(
    session: Session,
    caller: Caller,
    body: JobSubmit,
    settings: ServiceSettings,
    agent: AgentSettings,
    evaluation: Evaluation,
    runner: JobRunner,
) -> JobOut:
    """Queue a job (committed) on a benchmark task, a new custom task or one this key stored before."""
    require_gpus(evaluation.can_run_jobs, evaluation.note)
    if body.custom is not None and (size := len(body.custom.baseline_cu.encode())) > settings.max_source_bytes:
        raise TooLarge(
            f"custom.baseline_cu is {size} bytes; the limit is {settings.max_source_bytes} (CUDAMASTER_SERVICE__MAX_SOURCE_BYTES)"
        )
    assert caller.key_id is not None
    service_limits(settings).submit(caller.key_id)
    if body.custom is not None:
        task = _custom_task(session, caller, body, settings)
    elif body.pytorch is not None:  # run in the sandbox: a 422 with the reason where it cannot be a task
        task = pytorch_tasks.store(session, body.pytorch, body.precision, caller.key_id, settings)  # committed with the job
    else:
        assert body.task is not None
        task = _named_task(session, caller, body.task, body.precision)
    spec = body.agent_spec(task.name)
    if (why := spending.unenforceable(spec, agent)) is not None:
        raise Invalid(("body", "spending_cap"), why)
    try:  # the key's lock, held until the commit below: the count and the insert are one step
        take_job_slot(session, caller.key_id, settings.max_jobs_in_flight_per_key)
    except InFlightLimit as exc:
        raise TooMany(str(exc)) from None
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


def page_of_jobs(session: Session, caller: Caller, *, limit: int, offset: int, **filters: str | None) -> JobPage:
    """The jobs the caller may read (its team's; an admin every team's), filtered (status, task, precision, model,
    key) and sorted (`sort`) as store.list_jobs does, one page."""
    team = None if permissions.is_admin(caller) else caller.team
    rows, total = store.list_jobs(session, limit=limit, offset=offset, team=team, **filters)  # type: ignore[arg-type]
    return JobPage(
        items=[JobOut.model_validate(j) for j in rows],
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


def attempt_source(session: Session, caller: Caller, job_id: str, attempt_id: int) -> str:
    """An attempt's CUDA source, for a caller that may read its job."""
    job = readable_job(session, caller, job_id)
    attempt = store.get_attempt(session, job.id, attempt_id)
    if attempt is None:
        raise NotFound(f"job {job.id} has no attempt {attempt_id}; GET /api/v1/jobs/{job.id} lists its attempts")
    return attempt.source


def events_since(session: Session, job_id: str, after: int) -> tuple[str | None, bool, list[tuple[int, str, Any]]]:
    """What a job's event stream sends next: (the job's status, whether it may still change, its stored events after
    `after` as (id, type, payload)); (None, False, []) once the job is gone. The status is read before the events: an
    event stored before a final status is never missed."""
    job = store.get_job(session, job_id)
    if job is None:
        return None, False, []
    status = job.status
    return status, status in (QUEUED, RUNNING), [(e.id, e.type, e.payload) for e in store.events_after(session, job_id, after)]


def detail(session: Session, caller: Caller, job_id: str) -> JobDetail:
    """One job with its attempts and LLM calls."""
    job = readable_job(session, caller, job_id, detail=True)
    return JobDetail.model_validate({**JobOut.model_validate(job).model_dump(), "attempts": job.attempts, "llm_calls": job.llm_calls})


def cancel(session: Session, caller: Caller, job_id: str, runner: JobRunner) -> JobOut:
    """Cancel a job (a running one stops at its next step): its own key or an admin."""
    job = actionable_job(session, caller, job_id, "cancel")
    try:
        job = store.request_cancel(session, job)
    except store.JobStateError as exc:
        raise Conflict(str(exc)) from None
    runner.request_stop(job.id)
    return JobOut.model_validate(job)


def resume(session: Session, caller: Caller, job_id: str, settings: ServiceSettings, evaluation: Evaluation, runner: JobRunner) -> JobOut:
    """Resume a cancelled or failed job from its last checkpoint; it counts against its key's in-flight limit again."""
    job = actionable_job(session, caller, job_id, "resume")
    require_gpus(evaluation.can_run_jobs, evaluation.note)
    if job.status in (CANCELLED, FAILED) and job.api_key_id is not None:
        try:
            take_job_slot(session, job.api_key_id, settings.max_jobs_in_flight_per_key)
        except InFlightLimit as exc:
            raise TooMany(str(exc)) from None
        session.refresh(job)
    try:
        job = store.request_resume(session, job)
    except store.JobStateError as exc:
        raise Conflict(str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)


def answer(session: Session, caller: Caller, job_id: str, body: AnswerIn, evaluation: Evaluation, runner: JobRunner) -> JobOut:
    """Answer the question a manual-mode job waits on: its own key or an admin."""
    job = actionable_job(session, caller, job_id, "answer")
    require_gpus(evaluation.can_run_jobs, evaluation.note)
    try:
        job = store.submit_answer(session, job, body.answer, body.question_id)
    except store.JobStateError as exc:
        raise Conflict(str(exc)) from None
    runner.wake()
    return JobOut.model_validate(job)
