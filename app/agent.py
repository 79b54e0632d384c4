"""The contract between the job runner and the agent, and the adapter to graph.runner.

The runner calls a `RunJob` function in a worker thread with a `JobRun`; it returns an object with
the fields of graph.runner.JobOutcome (status, message, attempts, llm_calls, ...). Tests inject
their own function through `create_app(run_job=...)`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

AGENT_STATUSES = {"finished", "no_correct_kernel", "waiting_for_input", "stopped", "failed"}


@dataclass
class JobRun:
    job_id: str
    spec: dict[str, Any]  # graph.runner.JobSpec fields
    resume: bool  # the job ran before: continue from its checkpoint
    answer: str | None  # manual mode: the answer to the question the job is waiting on
    evaluator: Any  # GPU evaluator (wrapped in the per-GPU lock), or None for the agent's default
    checkpoint_url: str
    on_event: Callable[[dict[str, Any]], None]
    should_stop: Callable[[], bool]
    # The LLM call ledger (graph.llm.call_ledger): stores a call record (status `sent` before the request,
    # `failed` on an error answer); returns False, storing nothing, when a `sent` call may not start
    # because the job is stopping.
    record_llm_call: Callable[[dict[str, Any]], bool] = lambda call: True


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

    with call_ledger(run.record_llm_call):
        return _run_graph(run)


def _run_graph(run: JobRun) -> Any:
    from graph.runner import JobSpec, job_state, resume_job, start_job

    saver = checkpointer(run.checkpoint_url)
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
            run.on_event({"type": "attempt", "job_id": run.job_id, "node": "resume", **attempt})
        for call in values.get("llm_calls", []):
            run.on_event({"type": "llm_call", "job_id": run.job_id, "node": "resume", **call})
        return resume_job(run.job_id, answer=run.answer, **kwargs)
    # First run, or a crash before the first checkpoint: start (the stored events dedupe any replay).
    return start_job(JobSpec(**run.spec), job_id=run.job_id, **kwargs)


def outcome_fields(outcome: Any) -> dict[str, Any]:
    """JobOutcome (pydantic model, dataclass or dict) -> plain dict."""
    if outcome is None:
        return {"status": "failed", "message": "the agent returned nothing"}
    if hasattr(outcome, "model_dump"):
        return outcome.model_dump(mode="json")
    if isinstance(outcome, dict):
        return dict(outcome)
    return {k: getattr(outcome, k, None) for k in ("job_id", "status", "best", "attempts", "llm_calls", "totals", "message")}
