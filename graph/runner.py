"""Running jobs: start, resume (after a crash, a stop or a question), inspect.

A job is one LangGraph thread (thread_id = job id) checkpointed after every step (durability
"sync"). Its ledger (attempts, LLM calls, rounds) lives in the state and only grows. Compile and
GPU results are also cached per job by source hash (CachingEvaluator), so a job killed in the middle
of a step redoes at most that step, and never a finished compile or evaluation.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command
from pydantic import BaseModel, Field

from bench_tasks import TaskError, load_task

from .builder import build_graph
from .deps import Deps
from .evaluator import CachingEvaluator, Evaluator, LocalEvaluator
from .llm import LlmError, is_transient, load_replay_file
from .settings import AgentSettings, JobSpec
from .state import GRAPH_VERSION

log = logging.getLogger(__name__)

Status = Literal["finished", "no_correct_kernel", "waiting_for_input", "stopped", "failed"]
EventSink = Callable[[dict[str, Any]], None]
FINAL_STATUSES = ("finished", "no_correct_kernel")  # what the graph's `finish` node sets


class JobOutcome(BaseModel):
    job_id: str
    status: Status
    best: dict[str, Any] | None = None  # the best correct attempt (with its evaluation), or None
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    llm_calls: list[dict[str, Any]] = Field(default_factory=list)
    rounds: list[dict[str, Any]] = Field(default_factory=list)  # per round: strategy, verdict, P, tokens, cost
    totals: dict[str, Any] = Field(default_factory=dict)  # tokens and cost_usd over all LLM calls
    question: dict[str, Any] | None = None  # the pending interrupt's payload when waiting_for_input
    message: str = ""


# -- checkpointers ---------------------------------------------------------------------------------
def _tree():
    from app.config import load_settings  # the settings tree (imports graph.settings, not this module)

    return load_settings()


def make_checkpointer(url: str | None = None):
    """SqliteSaver for sqlite:///path, PostgresSaver for postgresql://... ; default: the settings tree's
    checkpoint store (the one the service uses too). One saver per process (SQLite locks per saver)."""
    url = url or _tree().checkpoint_store()
    if url.startswith("sqlite:"):
        from langgraph.checkpoint.sqlite import SqliteSaver

        if not url.startswith("sqlite:///"):
            raise ValueError(f"bad SQLite URL {url!r}: use sqlite:///relative/path or sqlite:////absolute/path")
        path = url.removeprefix("sqlite:///")
        if path != ":memory:":
            file = Path(path).expanduser()
            file.parent.mkdir(parents=True, exist_ok=True)
            path = str(file)
        conn = sqlite3.connect(path, check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        return saver
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        url = url.replace("postgresql+psycopg://", "postgresql://")
        pool = ConnectionPool(
            url, min_size=1, max_size=4, open=True, kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0}
        )
        saver = PostgresSaver(pool)  # type: ignore[arg-type, assignment]
        saver.setup()
        saver._cudamaster_pool = pool  # type: ignore[attr-defined]  # keep the pool alive with the saver
        return saver
    raise ValueError(f"unsupported database URL {url!r}: use sqlite:///path or postgresql://user@host/db")


# -- running -------------------------------------------------------------------------------------
def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def _config(job_id: str, settings: AgentSettings) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": job_id},
        "recursion_limit": settings.recursion_limit,
        "metadata": {"graph_version": GRAPH_VERSION},
    }


def _graph(job_id: str, settings: AgentSettings, checkpointer, evaluator: Evaluator | None):
    inner = evaluator if evaluator is not None else LocalEvaluator()
    if not isinstance(inner, CachingEvaluator):
        inner = CachingEvaluator(inner, settings.jobs_dir() / job_id)
    return build_graph(Deps(settings=settings, evaluator=inner), checkpointer=checkpointer)


def _emit(sink: EventSink | None, event: dict[str, Any]) -> None:
    if sink is None:
        return
    try:
        sink(event)
    except Exception:  # noqa: BLE001 - a broken consumer must not break the job
        log.exception("on_event consumer failed on %s", event.get("type"))


def _pending_interrupt(snapshot) -> Any | None:
    for task in snapshot.tasks or ():
        for intr in task.interrupts or ():
            return intr.value
    return None


def _graph_ended(snapshot) -> bool:
    """The run reached END. `next` alone does not say so: a live snapshot (get_state without a
    checkpoint id) folds in the saved writes of tasks that already finished and leaves them out of
    `next`. After a crash between a step's task writes and the checkpoint that closes the step,
    `next` is empty while that step is still in `tasks` and the graph has more to do; running the
    thread again (input None) applies those writes and continues."""
    return not snapshot.next and not snapshot.tasks


def _end_status(job_id: str, snapshot, values: dict[str, Any]) -> tuple[Status, str]:
    """Status and message of a snapshot with nothing left in `next` (no pending question)."""
    if not _graph_ended(snapshot):
        done = ", ".join(t.name for t in snapshot.tasks)
        return "stopped", (f"stopped after {done} finished, before its step was checkpointed; resume with `cudamaster resume {job_id}`")
    status = values.get("status")
    if status in FINAL_STATUSES:
        return status, values.get("message", "")
    # The graph only reaches END through `finish`, which always sets a final status.
    return "failed", f"the graph ended with status {status!r} instead of a final one"


def _pending_error(snapshot) -> str | None:
    for task in snapshot.tasks or ():
        if task.error:
            return f"{task.name}: {task.error}"
    return None


def totals(llm_calls: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens")
    out: dict[str, Any] = {k: sum(int(c.get(k, 0)) for c in llm_calls) for k in keys}
    out["cost_usd"] = round(sum(float(c.get("cost_usd", 0.0)) for c in llm_calls), 8)
    out["llm_calls"] = len(llm_calls)
    out["unpriced_models"] = sorted({c["model"] for c in llm_calls if not c.get("priced", True)})
    return out


def _outcome(job_id: str, values: dict[str, Any], status: Status, message: str, question: Any = None) -> JobOutcome:
    calls = list(values.get("llm_calls", []))
    return JobOutcome(
        job_id=job_id,
        status=status,
        best=values.get("best"),
        attempts=list(values.get("attempts", [])),
        llm_calls=calls,
        rounds=list(values.get("round_log", [])),
        totals=totals(calls),
        question=question,
        message=message,
    )


def _failure_message(exc: BaseException, job_id: str, settings: AgentSettings) -> str:
    if isinstance(exc, LlmError):
        return str(exc)
    if is_transient(exc):
        return (
            f"the LLM endpoint kept failing after {settings.retry.max_attempts} attempts "
            f"({type(exc).__name__}: {exc}); resume later with `cudamaster resume {job_id}`"
        )
    return f"{type(exc).__name__}: {exc}"


def _run(
    graph, job_id: str, graph_input: Any, settings: AgentSettings, on_event: EventSink | None, should_stop: Callable[[], bool] | None
) -> JobOutcome:
    config = _config(job_id, settings)
    current_round = (graph.get_state(config).values or {}).get("round", 0)
    control = RunControl()
    status: Status | None = None
    message = ""
    try:
        for chunk in graph.stream(graph_input, config, stream_mode="updates", durability="sync", control=control):
            for node, update in chunk.items():
                if node == "__metadata__":  # e.g. {"cached": True}: a finished task's saved writes, replayed on resume
                    continue
                if node == "__interrupt__":
                    for intr in update:
                        value = intr.value if isinstance(intr.value, dict) else {"question": intr.value}
                        _emit(
                            on_event,
                            {
                                "type": "interrupt",
                                "job_id": job_id,
                                "round": current_round,
                                "node": value.get("role", ""),
                                "interrupt_id": intr.id,
                                "question": value,
                            },
                        )
                    continue
                update = update or {}
                if node != "round_end" and "round" in update:
                    current_round = update["round"]
                for a in update.get("attempts", []):
                    _emit(on_event, {"type": "attempt", "job_id": job_id, "node": node, **a})
                for c in update.get("llm_calls", []):
                    _emit(on_event, {"type": "llm_call", "node": node, **c})
                for shown in (update.get("profile"), update.get("current_profile")):
                    if shown:
                        _emit(on_event, profile_event(job_id, shown, sent=shown is update.get("profile")))
                last = (update.get("attempts") or [None])[-1]
                _emit(
                    on_event,
                    {
                        "type": "node",
                        "job_id": job_id,
                        "round": current_round,
                        "node": node,
                        "verdict": last["verdict"] if last else None,
                        "speedup": last["score"] if last else None,
                    },
                )
                if node == "round_end":
                    current_round = update.get("round", current_round)
            if should_stop is not None and not control.drain_requested and should_stop():
                control.request_drain("stop requested")
    except GraphDrained:
        status, message = "stopped", f"stopped at a step boundary; resume with `cudamaster resume {job_id}`"
    except Exception as exc:  # noqa: BLE001 - the outcome reports it; the checkpoint keeps the job resumable
        log.warning("job %s failed: %s", job_id, exc, exc_info=not isinstance(exc, LlmError))
        status, message = "failed", _failure_message(exc, job_id, settings)
    snapshot = graph.get_state(config)
    values = snapshot.values or {}
    question = _pending_interrupt(snapshot)
    if status is None:
        if question is not None:
            status = "waiting_for_input"
            message = (
                f"waiting for an answer for the {question.get('role', '?')} role" if isinstance(question, dict) else "waiting for input"
            )
        elif not snapshot.next:
            status, message = _end_status(job_id, snapshot, values)
        else:
            status, message = "stopped", f"stopped before {', '.join(snapshot.next)}"
    outcome = _outcome(job_id, values, status, message, question)
    _emit(
        on_event,
        {
            "type": "finished",
            "job_id": job_id,
            "round": values.get("round", 0),
            "node": "",
            "status": status,
            "message": message,
            "best_attempt_id": (outcome.best or {}).get("attempt_id"),
            "speedup": (outcome.best or {}).get("score"),
            "totals": outcome.totals,
        },
    )
    return outcome


def profile_event(job_id: str, profile: dict[str, Any], *, sent: bool) -> dict[str, Any]:
    """A `profile` event: a profile taken (`sent` False: of the round's kernel) or the one the next
    planner is sent (`sent` True: with its mode, token budget and tokens). The service stores the
    bottleneck class per attempt from it; the baseline's has `of` == "baseline" and no attempt."""
    event = {
        "type": "profile",
        "job_id": job_id,
        "of": profile.get("of"),
        "sent": sent,
        "bottleneck_class": profile.get("bottleneck", ""),
        "note": profile.get("note", ""),
        "text": profile.get("text", ""),
    }
    if profile.get("of") != "baseline":
        event["attempt_id"] = profile.get("of")
    if sent:
        event |= {
            "mode": profile.get("mode"),
            "tokens": profile.get("tokens", 0),
            "budget": profile.get("budget"),
            "lines_cut": profile.get("lines_cut", 0),
        }
    return event


def _refuse(job_id: str, message: str, on_event: EventSink | None) -> JobOutcome:
    _emit(on_event, {"type": "finished", "job_id": job_id, "round": 0, "node": "", "status": "failed", "message": message})
    return JobOutcome(job_id=job_id, status="failed", message=message, totals=totals([]))


def start_job(
    spec: JobSpec,
    *,
    job_id: str | None = None,
    checkpointer=None,
    evaluator: Evaluator | None = None,
    on_event: EventSink | None = None,
    should_stop: Callable[[], bool] | None = None,
    settings: AgentSettings | None = None,
) -> JobOutcome:
    """Run a new job until it finishes, asks a question, is stopped or fails."""
    settings = settings or _tree().agent
    job_id = job_id or new_job_id()
    try:
        task = load_task(spec.task)
        task.variant(spec.precision)
        task.size_list(spec.sizes)
    except TaskError as exc:
        return _refuse(job_id, str(exc), on_event)
    if spec.replay_file:
        path = Path(spec.replay_file).expanduser().resolve()
        try:
            load_replay_file(path)
        except (OSError, ValueError) as exc:
            return _refuse(job_id, f"cannot use replay file {spec.replay_file}: {exc}", on_event)
        spec = spec.model_copy(update={"replay_file": str(path)})
    checkpointer = checkpointer if checkpointer is not None else make_checkpointer()
    graph = _graph(job_id, settings, checkpointer, evaluator)
    if graph.get_state(_config(job_id, settings)).values:
        return _refuse(job_id, f"job {job_id} already exists; resume it instead", on_event)
    initial = {  # type: ignore[var-annotated]
        "job_id": job_id,
        "spec": spec.model_dump(mode="json"),
        "graph_version": GRAPH_VERSION,
        "choose_flags": settings.choose_flags if spec.choose_flags is None else spec.choose_flags,
        "round": 0,
        "debug_step": 0,
        "attempts": [],
        "llm_calls": [],
        "round_log": [],
        "best": None,
        "status": "running",
        "message": "",
    }
    return _run(graph, job_id, initial, settings, on_event, should_stop)


def resume_job(
    job_id: str,
    *,
    checkpointer=None,
    evaluator: Evaluator | None = None,
    on_event: EventSink | None = None,
    should_stop: Callable[[], bool] | None = None,
    answer: str | None = None,
    settings: AgentSettings | None = None,
) -> JobOutcome:
    """Continue a job from its last checkpoint; `answer` answers its pending question (manual mode)."""
    settings = settings or _tree().agent
    checkpointer = checkpointer if checkpointer is not None else make_checkpointer()
    graph = _graph(job_id, settings, checkpointer, evaluator)
    config = _config(job_id, settings)
    snapshot = graph.get_state(config)
    values = snapshot.values or {}
    if not values:
        return _refuse(job_id, f"no job {job_id} in this checkpoint database", on_event)
    if values.get("graph_version") != GRAPH_VERSION:
        return _refuse(
            job_id,
            f"job {job_id} was made by graph version {values.get('graph_version')}; this is version {GRAPH_VERSION} and cannot continue it",
            on_event,
        )
    question = _pending_interrupt(snapshot)
    if _graph_ended(snapshot):
        return _outcome(job_id, values, *_end_status(job_id, snapshot, values))
    if question is not None and answer is None:
        return _outcome(job_id, values, "waiting_for_input", "waiting for an answer; resume with answer=...", question)
    graph_input = Command(resume=answer) if question is not None else None  # type: ignore[var-annotated]
    return _run(graph, job_id, graph_input, settings, on_event, should_stop)


def job_state(job_id: str, checkpointer, settings: AgentSettings | None = None) -> dict[str, Any]:
    """The job's current state values, what runs next, its pending question and last error, if any."""
    settings = settings or _tree().agent
    graph = build_graph(Deps(settings=settings, evaluator=LocalEvaluator()), checkpointer=checkpointer)
    snapshot = graph.get_state(_config(job_id, settings))
    values = dict(snapshot.values or {})
    return {
        "job_id": job_id,
        "exists": bool(values),
        "values": values,
        "next": list(snapshot.next),
        "interrupt": _pending_interrupt(snapshot),
        "error": _pending_error(snapshot),
        "totals": totals(values.get("llm_calls", [])),
    }


def export_responses(job_id: str, checkpointer, path: str | Path, settings: AgentSettings | None = None) -> int:
    """Write the job's LLM responses, in order, as a replay file (JSON lines); returns how many."""
    import json

    calls = job_state(job_id, checkpointer, settings)["values"].get("llm_calls", [])
    with open(path, "w") as f:
        for c in calls:
            f.write(json.dumps({"role": c["role"], "model": c["model"], "response": c["response"]}) + "\n")
    return len(calls)
