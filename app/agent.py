"""The contract between the job runner and the agent, and the adapter to graph.runner.

The runner calls a `RunJob` function in a worker thread with a `JobRun`; it returns a
graph.contract.Outcome (status, message, attempts, llm_calls, ...) and sends graph.contract events
through `on_event`. Tests inject their own function through `create_app(run_job=...)`.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from graph.contract import Answer, AttemptEvent, JobSpec, LlmCallEvent, Outcome, ProfileEvent


@dataclass
class JobRun:
    job_id: str
    spec: JobSpec
    resume: bool  # the job ran before: continue from its checkpoint
    answer: Answer | None  # manual mode: the answer to the question it names
    evaluator: Any  # GPU evaluator (wrapped in the per-GPU lock), or None for the agent's default
    checkpoint_url: str
    on_event: Callable[[Any], None]  # called with graph.contract event models
    should_stop: Callable[[], bool]
    # The LLM call ledger (graph.llm.call_ledger): stores a call record (status `sent` before the request,
    # `failed` on an error answer); returns False, storing nothing, when a `sent` call may not start
    # because the job is stopping.
    record_llm_call: Callable[[dict[str, Any]], bool] = lambda call: True
    # The job's stored calls by call key (graph.spending.RecordedSpending), lost-in-flight ones included: the
    # spending cap counts them. None: only the graph's own calls count.
    spent: Callable[[], Any] | None = None
    # Raises (app.store.leases.LeaseLost) once another runner holds the job: called before each checkpoint write,
    # so a run that lost its lease never forks the job's checkpoint history. None: no fencing (the CLI).
    check_lease: Callable[[], None] | None = None
    # Called with the checkpoint write's own psycopg cursor, first in its transaction, when the checkpoint store
    # is the service's PostgreSQL database (app.store.leases.hold_on_cursor): the lease check and the write then
    # commit together, so no takeover slips in between. None: `check_lease` runs before the write instead.
    fence_checkpoint: Callable[[Any], None] | None = None
    # Runs a checkpoint read or write, again with backoff while the database is unreachable (bounded:
    # graph.database_faults.retry). None: once.
    retry_database: Callable[[Callable[[], Any]], Any] | None = None


RunJob = Callable[[JobRun], Any]

_checkpointers: dict[str, Any] = {}
_checkpointers_lock = threading.Lock()


def checkpointer(url: str) -> Any:
    """One LangGraph saver per process and URL (a SQLite saver serialises its writers itself)."""
    from graph.runner import make_checkpointer

    with _checkpointers_lock:
        if url not in _checkpointers:
            _checkpointers[url] = make_checkpointer(url)
        return _checkpointers[url]


def run_with_graph(run: JobRun) -> Any:
    """The real agent (graph.runner): start the job, or resume it from its checkpoint."""
    from graph.llm import call_ledger

    with call_ledger(run.record_llm_call, run.spent):
        return _run_graph(run)


def fenced(
    saver: Any,
    check: Callable[[], None] | None,
    in_transaction: Callable[[Any], None] | None = None,
    retry: Callable[[Callable[[], Any]], Any] | None = None,
) -> Any:
    """The saver, fenced by the run's lease and riding out database hiccups: a shallow copy sharing the saver's
    connections and lock. On a PostgresSaver with `in_transaction`, each checkpoint write's transaction starts
    with it (the lease check commits with the write); otherwise `check` runs before each write. `retry` wraps
    every read and write (get_tuple, put, put_writes)."""
    if check is None and in_transaction is None and retry is None:
        return saver
    view = copy.copy(saver)
    cls = type(saver)
    if in_transaction is not None and _is_postgres(saver):
        view._cursor = _fenced_cursor(saver, in_transaction)
        put: Callable[..., Any] = partial(cls.put, view)
        put_writes: Callable[..., Any] = partial(cls.put_writes, view)
    else:
        put, put_writes = _checked(saver.put, check), _checked(saver.put_writes, check)
    view.put, view.put_writes = _retried(put, retry), _retried(put_writes, retry)
    view.get_tuple = _retried(partial(cls.get_tuple, view), retry)
    return view


def _is_postgres(saver: Any) -> bool:
    from langgraph.checkpoint.postgres import PostgresSaver

    return isinstance(saver, PostgresSaver)


def _fenced_cursor(saver: Any, fence: Callable[[Any], None]) -> Callable[..., Any]:
    """PostgresSaver._cursor whose writing cursors (pipeline=True: put, put_writes) are one transaction that
    `fence` opens; reading cursors are the saver's own."""
    from langgraph.checkpoint.postgres import _internal
    from psycopg.rows import dict_row

    @contextlib.contextmanager
    def cursor(*, pipeline: bool = False) -> Iterator[Any]:
        if not pipeline:
            with saver._cursor(pipeline=False) as cur:
                yield cur
            return
        with (
            saver.lock,
            _internal.get_connection(saver.conn) as conn,
            conn.transaction(),
            conn.cursor(binary=True, row_factory=dict_row) as cur,
        ):
            fence(cur)
            yield cur

    return cursor


def _checked(write: Callable[..., Any], check: Callable[[], None] | None) -> Callable[..., Any]:
    if check is None:
        return write

    def checked(*args: Any, **kwargs: Any) -> Any:
        check()
        return write(*args, **kwargs)

    return checked


def _retried(fn: Callable[..., Any], retry: Callable[[Callable[[], Any]], Any] | None) -> Callable[..., Any]:
    if retry is None:
        return fn
    return lambda *args, **kwargs: retry(lambda: fn(*args, **kwargs))


def _run_graph(run: JobRun) -> Any:
    from graph.runner import job_state, resume_job, start_job

    saver = fenced(checkpointer(run.checkpoint_url), run.check_lease, run.fence_checkpoint, run.retry_database)
    kwargs = dict(checkpointer=saver, evaluator=run.evaluator, on_event=run.on_event, should_stop=run.should_stop)
    state: dict[str, Any] = {}
    if run.resume:
        try:
            state = job_state(run.job_id, saver)
        except Exception:  # noqa: BLE001 - no state: the job crashed before its first checkpoint
            state = {}
    if state.get("exists"):
        # A crash between a checkpoint and the delivery of its events loses nothing: replay what the
        # checkpoint holds first (stored once, by id), then continue.
        values = state.get("values") or {}
        for attempt in values.get("attempts", []):
            run.on_event(AttemptEvent.model_validate({**attempt, "node": "resume"}))
        for call in values.get("llm_calls", []):
            run.on_event(LlmCallEvent.model_validate({**call, "node": "resume"}))
        for profile in values.get("profiles", []):
            of = profile["attempt_id"]
            run.on_event(
                ProfileEvent.model_validate({**profile["profile"], "job_id": run.job_id, "node": "resume", "of": of, "attempt_id": of})
            )
        return resume_job(run.job_id, answer=run.answer, **kwargs)
    # First run, or a crash before the first checkpoint: start (the stored events dedupe any replay).
    return start_job(run.spec, job_id=run.job_id, **kwargs)


def outcome_of(job_id: str, outcome: Any) -> Outcome:
    """What a RunJob returned, checked against the contract (anything else fails the job, saying why)."""
    if outcome is None:
        return Outcome(job_id=job_id, status="failed", message="the agent returned nothing")
    if isinstance(outcome, Outcome):
        return outcome
    return Outcome.model_validate(outcome.model_dump(mode="json") if hasattr(outcome, "model_dump") else outcome)
