"""The job runner: started and stopped with the app (lifespan).

- At most `max_running_jobs` jobs execute at once, each in a worker thread of its own pool.
- A job runs only while this runner holds its lease (renewed every third of `lease_seconds`). Every write
  the run makes for its job (checkpoint, event, attempt, LLM-call record, settle) is fenced with its claim's
  lease (app/store/leases.py): once another runner holds the job (this one stalled past its lease), the
  write is refused, the run stops at once, and its LLM call ledger refuses the next call.
- At start-up it claims every job left running (lease released by a clean stop, or expired after a
  crash) and resumes it from its checkpoint; then it keeps polling for queued jobs.
- On shutdown it asks running jobs to stop at their next step (a checkpoint), waits up to
  `drain_seconds`, and releases their leases so the next start resumes them at once. The stop begins
  at the signal itself (`begin_stop`, called from the service's SIGTERM/SIGINT handler): from then on
  no job starts and no LLM call starts, and the event streams close (the server waits for them
  before it runs the shutdown). Job threads are daemon threads: one stuck past `drain_seconds` (in a
  call that never returns) does not keep the process alive; its job resumes from its checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from graph import database_faults
from graph.contract import Answer, AttemptEvent, JobSpec, LlmCallEvent, Outcome
from graph.spending import Spent
from settings import ServiceSettings

from . import stored_tasks
from .agent import JobRun, RunJob, outcome_of
from .db.engine import same_database
from .reviews import ReviewRule
from .store import leases
from .store.events import job_gpu_model, job_spending, record_event

log = logging.getLogger("cudamaster.runner")


def _event_type(event: Any) -> str:
    """The `type` of an event as the agent sent it: a contract model or its dict (record_event takes both)."""
    return str(event.get("type") if isinstance(event, dict) else getattr(event, "type", "?"))


async def _in_daemon_thread(name: str, fn: Any, *args: Any) -> Any:
    """fn(*args) in a daemon thread of its own, awaited (the runner bounds how many run at once)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def target() -> None:
        try:
            result, error = fn(*args), None
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            result, error = None, exc
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the process is exiting
                loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future


class JobRunner:
    def __init__(
        self, settings: ServiceSettings, sessions: sessionmaker[Session], run_job: RunJob, evaluator: Any = None, *, checkpoint_url: str
    ):
        self.settings = settings
        self.review = ReviewRule.of(settings)
        self.checkpoint_url = checkpoint_url  # the settings tree's checkpoint store (the CLI's resume reads it too)
        self.sessions = sessions
        self.run_job = run_job
        self.evaluator = evaluator
        self.holder = settings.runner_id
        self._tasks: dict[str, asyncio.Task] = {}
        self._stops: dict[str, threading.Event] = {}
        self._changes: dict[str, asyncio.Event] = {}
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()  # set at begin_stop: event streams close (app/streams.py)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task | None = None
        self.draining = False
        self.listeners: list[Callable[[], None]] = []  # called (on the loop) each time one of its jobs ends

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        self._bind_loop()
        self._main = asyncio.create_task(self._dispatch_loop(), name="job-dispatch")

    def begin_stop(self) -> None:
        """The service is stopping: no job starts, running jobs stop at their next step and start no LLM
        call, event streams close. Safe to call from a signal handler (it takes no lock: the flag is read
        by the LLM call ledger at once, the rest is done by the event loop), more than once."""
        self.draining = True
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop_all)

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._stopping = loop, asyncio.Event()

    def stopping(self) -> asyncio.Event:
        """An event set when the service begins to stop (event streams wait on it: app/streams.py). On the
        event loop; binds the runner to it when it was not started (no GPU here: streams still close)."""
        self._bind_loop()
        if self.draining:
            self._stopping.set()
        return self._stopping

    def _stop_all(self) -> None:
        self._stopping.set()
        for stop in list(self._stops.values()):
            stop.set()
        if self._main is not None:
            self._main.cancel()
        for job_id in list(self._changes):
            self._signal(job_id)

    async def stop(self) -> None:
        self.draining = True
        self._stop_all()
        if self._main:
            self._main.cancel()
            await asyncio.gather(self._main, return_exceptions=True)
        if self._tasks:
            log.info("draining %d running job(s) to a checkpoint", len(self._tasks))
            _, pending = await asyncio.wait(list(self._tasks.values()), timeout=self.settings.drain_seconds)
            if pending:
                log.warning(
                    "%d job(s) did not reach a checkpoint within %.0fs; they resume from their last one",
                    len(pending),
                    self.settings.drain_seconds,
                )
        await asyncio.to_thread(self._with_session, leases.release_all, self.holder)

    # -- what the API uses ---------------------------------------------------------------------------
    def wake(self) -> None:
        self._wake.set()

    def request_stop(self, job_id: str) -> None:
        """Cancel: the agent sees should_stop() at its next step."""
        if job_id in self._stops:
            self._stops[job_id].set()

    def change_event(self, job_id: str) -> asyncio.Event:
        """An event set the next time this job stores something (SSE waits on it)."""
        ev = self._changes.get(job_id)
        if ev is None or ev.is_set():
            ev = self._changes[job_id] = asyncio.Event()
        return ev

    def running(self) -> list[str]:
        return sorted(self._tasks)

    # -- internals -----------------------------------------------------------------------------------
    def _with_session(self, fn, *args, **kwargs):
        with self.sessions() as session:
            return fn(session, *args, **kwargs)

    def _signal(self, job_id: str) -> None:
        ev = self._changes.pop(job_id, None)
        if ev is not None:
            ev.set()

    def _signal_threadsafe(self, job_id: str) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._signal, job_id)

    async def _dispatch_loop(self) -> None:
        while True:
            try:
                free = self.settings.max_running_jobs - len(self._tasks)
                if free > 0:
                    claims = await asyncio.to_thread(self._with_session, leases.claim_jobs, self.holder, self.settings.lease_seconds, free)
                    for claim in claims:
                        self._stops[claim.job_id] = threading.Event()
                        if claim.cancel_requested or self.draining:
                            self._stops[claim.job_id].set()
                        self._tasks[claim.job_id] = asyncio.create_task(self._execute(claim), name=f"job-{claim.job_id}")
                        self._signal(claim.job_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a database hiccup must not kill the runner
                if database_faults.is_transient(exc):
                    log.warning(
                        "claiming jobs: the database is unreachable (%s); trying again in %.1fs",
                        type(exc).__name__,
                        self.settings.poll_seconds,
                    )
                else:
                    log.exception("claiming jobs failed; retrying in %.1fs", self.settings.poll_seconds)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.poll_seconds)

    async def _execute(self, claim: leases.Claim) -> None:
        job_id = claim.job_id
        stop = self._stops[job_id]
        renewer = asyncio.create_task(self._renew(claim, stop))
        try:
            try:
                outcome = outcome_of(job_id, await _in_daemon_thread(f"job-{job_id}", self._run_sync, claim, stop))
                paused = False
            except Exception as exc:  # noqa: BLE001 - the job fails (or pauses), the service stays up
                outcome, paused = self._raised(job_id, exc), database_faults.is_transient(exc)
            renewer.cancel()
            try:
                await asyncio.to_thread(self._settle, claim, outcome, paused)
            except Exception:
                log.exception("job %s: its outcome (%s) could not be recorded; it resumes from its checkpoint", job_id, outcome.status)
        finally:
            renewer.cancel()
            self._tasks.pop(job_id, None)
            self._stops.pop(job_id, None)
            self._signal(job_id)
            self.wake()
            for listener in self.listeners:
                listener()

    def _raised(self, job_id: str, exc: Exception) -> Outcome:
        """The outcome of a run that raised: paused when the database was unreachable, stopped when another runner
        took the job over, failed otherwise."""
        if database_faults.is_transient(exc):
            log.warning("job %s paused: the database stayed unreachable (%s); it resumes from its checkpoint", job_id, type(exc).__name__)
            message = "paused: the database was unreachable; the job resumes from its last checkpoint by itself"
            return Outcome(job_id=job_id, status="stopped", message=message)
        if isinstance(exc, database_faults.LeaseTakenOver):
            log.info("job %s stops here, another runner holds it now: %s", job_id, exc)
            return Outcome(job_id=job_id, status="stopped", message=str(exc))
        log.error("job %s raised:\n%s", job_id, traceback.format_exc())
        return Outcome(
            job_id=job_id,
            status="failed",
            message=f"the agent raised {type(exc).__name__}: {exc}. Fix the cause and "
            f"POST /api/v1/jobs/{job_id}/resume to continue from the last checkpoint.",
        )

    def _db(self, fn: Callable[[], Any], what: str, within: float = 1.0) -> Any:
        """fn(), again with backoff while the database is unreachable, for up to `within` leases."""
        return database_faults.retry(fn, within_s=within * self.settings.lease_seconds, what=what, log=log)

    def _fence(self, claim: leases.Claim) -> Callable[[Session], None]:
        return lambda session: leases.hold(session, claim.job_id, claim.lease)

    def _lost(self, claim: leases.Claim, stop: threading.Event, lost: leases.LeaseLost) -> None:
        if not stop.is_set():
            log.info("job %s stops here, another runner holds it now: %s", claim.job_id, lost)
        stop.set()

    def _checkpoint_fences(self, claim: leases.Claim, stop: threading.Event) -> tuple[Callable[[], None], Callable[[Any], None] | None]:
        """The lease check before a checkpoint write, and (when the checkpoints live in the service's PostgreSQL
        database) the one run first in the write's own transaction."""

        def check_lease() -> None:  # before each checkpoint write (the checkpoint store may be another database)
            try:
                self._with_session(leases.check, claim.job_id, claim.lease)
            except leases.LeaseLost as lost:
                self._lost(claim, stop, lost)
                raise

        def fence_checkpoint(cursor: Any) -> None:  # in the checkpoint write's transaction (the same database)
            try:
                leases.hold_on_cursor(cursor, claim.job_id, claim.lease)
            except leases.LeaseLost as lost:
                self._lost(claim, stop, lost)
                raise

        same = same_database(self.checkpoint_url, self.settings.database_url)
        return check_lease, fence_checkpoint if same else None

    def _run_sync(self, claim: leases.Claim, stop: threading.Event) -> Any:
        fence = self._fence(claim)

        def store_once(event: Any) -> None:
            with self.sessions() as session:
                record_event(session, claim.job_id, event, self.review, fence=fence)

        def store(event: Any) -> None:  # raises LeaseLost, writing nothing, once another runner holds the job
            self._db(lambda: store_once(event), f"job {claim.job_id}: storing its {_event_type(event)} event")
            self._signal_threadsafe(claim.job_id)

        def on_event(event: Any) -> None:
            try:
                store(event)
            except leases.LeaseLost as lost:  # the event of a run that is no longer the job's is dropped
                self._lost(claim, stop, lost)

        check_lease, fence_checkpoint = self._checkpoint_fences(claim, stop)
        answer = None if claim.answer is None else Answer(question_id=claim.answer_for, text=claim.answer)

        def record_llm_call(call: dict[str, Any]) -> bool:
            if call.get("status") == "sent" and (stop.is_set() or self.draining):
                return False  # stopping (cancel, or the service shutting down): no new LLM call starts
            try:
                store(LlmCallEvent.model_validate({**call, "node": "ledger"}))  # the lease is checked right before the call
            except leases.LeaseLost as lost:
                self._lost(claim, stop, lost)
                return False  # another runner holds the job: this one sends nothing
            return True

        def spent() -> dict[str, Spent]:
            rows = self._db(lambda: self._with_session(job_spending, claim.job_id), f"job {claim.job_id}: reading its spending")
            return {key: Spent(tokens, usd) for key, (tokens, usd) in rows.items()}

        spec = JobSpec.model_validate(claim.settings)
        # a stored task (custom, PyTorch reference) queued by another replica or before a restart: loadable here too
        self._db(lambda: self._with_session(stored_tasks.register_named, spec.task), f"job {claim.job_id}: loading its task")
        run = JobRun(
            job_id=claim.job_id,
            spec=spec,
            resume=claim.resume,
            answer=answer,
            evaluator=self._evaluator_for(claim.job_id),
            checkpoint_url=self.checkpoint_url,
            on_event=on_event,
            should_stop=stop.is_set,
            record_llm_call=record_llm_call,
            spent=spent,
            check_lease=check_lease,
            fence_checkpoint=fence_checkpoint,
            retry_database=lambda fn: self._db(fn, f"job {claim.job_id}: its checkpoint"),
        )
        return self.run_job(run)

    def _evaluator_for(self, job_id: str) -> Any:
        """A cluster evaluator (gpu/ray) per job: its items take the job's turns in the fair queue, and its
        measurements stay on the GPU model of the job's first one (stored, so a restart keeps it)."""
        if self.evaluator is None or not hasattr(self.evaluator, "for_job"):
            return self.evaluator
        gpu_model = self._db(lambda: self._with_session(job_gpu_model, job_id), f"job {job_id}: reading its GPU model")
        return self.evaluator.for_job(job_id, gpu_model)

    def _settle(self, claim: leases.Claim, outcome: Outcome, paused: bool = False) -> None:
        """Record the outcome, again with backoff while the database is unreachable (for up to two leases: a run
        that ends during an outage is not left running; past that its lease lapses and the job resumes)."""
        self._db(lambda: self._settle_once(claim, outcome, paused), f"job {claim.job_id}: recording its outcome", within=2.0)

    def _settle_once(self, claim: leases.Claim, outcome: Outcome, paused: bool) -> None:
        job_id = claim.job_id
        fence = self._fence(claim)
        with self.sessions() as session:
            # Reconcile: anything in the outcome that no event delivered is stored now (idempotent).
            try:
                for attempt in outcome.attempts:
                    record_event(session, job_id, AttemptEvent(**attempt.model_dump(), node="settle"), self.review, fence=fence)
                for call in outcome.llm_calls:
                    record_event(session, job_id, LlmCallEvent(**call.model_dump(), node="settle"), fence=fence)
            except leases.LeaseLost:
                log.warning("job %s was taken over by another runner; this run's outcome (%s) is dropped", job_id, outcome.status)
                return
            question = outcome.question.model_dump(mode="json") if outcome.question else None
            status = leases.settle(
                session,
                job_id,
                claim.lease,
                outcome.status,
                outcome.message,
                draining=self.draining,
                question=question,
                stop_reason=outcome.stop_reason,
                paused=paused,
            )
        log.info("job %s -> %s", job_id, status)

    async def _renew(self, claim: leases.Claim, stop: threading.Event) -> None:
        job_id = claim.job_id
        every = self.settings.lease_seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                held, cancel = await asyncio.to_thread(self._with_session, leases.renew, job_id, claim.lease, self.settings.lease_seconds)
            except Exception as exc:  # try again next time; the lease has slack
                if database_faults.is_transient(exc):
                    log.warning("renewing the lease of %s: the database is unreachable (%s)", job_id, type(exc).__name__)
                else:
                    log.exception("renewing the lease of %s failed", job_id)
                continue
            if not held:
                log.error("lost the lease of job %s (another runner took it over); stopping it here", job_id)
                stop.set()
                return
            if cancel:
                stop.set()
