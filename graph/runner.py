"""Running jobs: start, resume (after a crash, a stop or a question), inspect.

A job is one LangGraph thread (thread_id = job id) checkpointed after every step (durability
"sync"). Its ledger (attempts, LLM calls, rounds) lives in the state and only grows. Compile and
GPU results are also cached per job by source hash (CachingEvaluator), so a job killed in the middle
of a step redoes at most that step, and never a finished compile or evaluation.

What a run emits (`on_event`) and returns are graph.contract models: events of the `Event` union and
an `Outcome`. An answer (manual mode) is an `Answer` bound to the question it answers: a job that
waits on another question is not resumed with it.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl
from langgraph.types import Command

from bench_tasks import TaskError, load_task
from bench_tasks.harness.errors import NoGpuError
from gpu.cache import CachingEvaluator
from gpu.local import LocalEvaluator
from gpu.protocol import Evaluator
from settings import AgentSettings

from . import database_faults, spending
from .builder import build_graph
from .contract import (
    FINAL_STATUSES,
    Answer,
    Attempt,
    AttemptEvent,
    FinishedEvent,
    InterruptEvent,
    JobSpec,
    LlmCallEvent,
    NodeEvent,
    Outcome,
    ProfileEvent,
    Question,
    Status,
    Totals,
)
from .database_faults import LeaseTakenOver
from .deps import Deps
from .llm import LlmError, is_transient, load_replay_file
from .state import GRAPH_VERSION

log = logging.getLogger(__name__)

EventSink = Callable[[Any], None]  # called with each contract event model (see graph.contract.Event)


# -- checkpointers ---------------------------------------------------------------------------------
def _tree():
    from settings import load_settings

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
        pool = ConnectionPool(  # `check`: a connection broken by a database outage is replaced, not handed out
            url,
            min_size=1,
            max_size=4,
            open=True,
            check=ConnectionPool.check_connection,
            timeout=10,
            kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
        )
        saver = PostgresSaver(pool)  # type: ignore[arg-type, assignment]
        saver.setup()
        saver._cudamaster_pool = pool  # type: ignore[attr-defined]  # keep the pool alive with the saver
        return saver
    raise ValueError(f"unsupported database URL {url!r}: use sqlite:///path or postgresql://user@host/db")


def close_checkpointer(saver) -> None:
    """Release what make_checkpointer opened: the PostgreSQL connection pool (its worker threads) or the SQLite
    connection. A pool left to the garbage collector may be collected on one of its own threads, which cannot
    join itself ("Exception ignored in ConnectionPool.__del__")."""
    pool = getattr(saver, "_cudamaster_pool", None)
    if pool is not None:
        pool.close()
        return
    conn = getattr(saver, "conn", None)
    if conn is not None and hasattr(conn, "close"):
        conn.close()


# -- running -------------------------------------------------------------------------------------
def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def _config(job_id: str, settings: AgentSettings) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": job_id},
        "recursion_limit": settings.recursion_limit,
        "metadata": {"graph_version": GRAPH_VERSION},
    }


def _graph(job_id: str, spec: JobSpec, settings: AgentSettings, checkpointer, evaluator: Evaluator | None):
    inner = evaluator if evaluator is not None else LocalEvaluator()
    if not isinstance(inner, CachingEvaluator):
        inner = CachingEvaluator(inner, settings.jobs_dir() / job_id)
    return build_graph(Deps(settings=settings, evaluator=inner, spec=spec), checkpointer=checkpointer)


def _reader(settings: AgentSettings, checkpointer):
    """A graph to read a job's checkpoints with (its spec is in the state; nothing runs)."""
    unused = JobSpec(task="(reading checkpoints)", precision="fp32")
    return build_graph(Deps(settings=settings, evaluator=LocalEvaluator(), spec=unused), checkpointer=checkpointer)


def _emit(sink: EventSink | None, event: Any) -> None:
    if sink is None:
        return
    try:
        sink(event)
    except Exception:  # a broken consumer must not break the job
        log.exception("on_event consumer failed on %s", event.type)


def _pending_interrupt(snapshot) -> Question | None:
    for task in snapshot.tasks or ():
        for intr in task.interrupts or ():
            return Question.model_validate(intr.value)
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


def _with_profile(attempt: dict[str, Any], profiles: dict[str, Any]) -> Attempt:
    return Attempt.model_validate({**attempt, "profile": profiles.get(attempt["attempt_id"])})


def _outcome(job_id: str, values: dict[str, Any], status: Status, message: str, question: Question | None = None) -> Outcome:
    calls = list(values.get("llm_calls", []))
    profiles = {p["attempt_id"]: p["profile"] for p in values.get("profiles", [])}
    best = values.get("best")
    stop_reason = values.get("stop_reason") if status in FINAL_STATUSES else None
    return Outcome(
        job_id=job_id,
        status=status,
        stop_reason=stop_reason,
        best=_with_profile(best, profiles) if best else None,
        attempts=[_with_profile(a, profiles) for a in values.get("attempts", [])],
        llm_calls=calls,
        rounds=list(values.get("round_log", [])),
        totals=Totals.of(calls),
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


def _emit_questions(on_event: EventSink | None, job_id: str, current_round: int, interrupts: Any) -> None:
    """An `interrupt` event for each question the graph asks (manual mode)."""
    for intr in interrupts:
        asked = Question.model_validate(intr.value)
        _emit(on_event, InterruptEvent(job_id=job_id, round=current_round, node=asked.role, interrupt_id=intr.id, question=asked))


def _emit_step(on_event: EventSink | None, job_id: str, current_round: int, node: str, update: dict[str, Any] | None) -> int:
    """The events of one node's finished step: its attempts, LLM calls, profiles, then the node's own event.
    Returns the round the job is in after the step (`round_end` moves to the next one after its event)."""
    update = update or {}
    if node != "round_end" and "round" in update:
        current_round = update["round"]
    for a in update.get("attempts", []):
        _emit(on_event, AttemptEvent.model_validate({**a, "node": node}))
    for c in update.get("llm_calls", []):
        _emit(on_event, LlmCallEvent.model_validate({**c, "node": node}))
    for shown in (update.get("profile"), update.get("current_profile")):
        if shown:
            _emit(on_event, profile_event(job_id, shown, sent=shown is update.get("profile")))
    last = (update.get("attempts") or [None])[-1]
    _emit(
        on_event,
        NodeEvent(
            job_id=job_id,
            round=current_round,
            node=node,
            verdict=last["verdict"] if last else None,
            speedup=last["score"] if last else None,
        ),
    )
    if node == "round_end":
        current_round = update.get("round", current_round)
    return current_round


def _stream(
    graph,
    job_id: str,
    graph_input: Any,
    config: dict[str, Any],
    current_round: int,
    on_event: EventSink | None,
    should_stop: Callable[[], bool] | None,
) -> None:
    """Run the graph from `current_round`, checkpointing every step, and emit each step's events; asks the graph to
    drain (stop at the next step boundary, raising GraphDrained) once `should_stop` says so."""
    control = RunControl()
    for chunk in graph.stream(graph_input, config, stream_mode="updates", durability="sync", control=control):
        for node, update in chunk.items():
            if node == "__metadata__":  # e.g. {"cached": True}: a finished task's saved writes, replayed on resume
                continue
            if node == "__interrupt__":
                _emit_questions(on_event, job_id, current_round, update)
                continue
            current_round = _emit_step(on_event, job_id, current_round, node, update)
        if should_stop is not None and not control.drain_requested and should_stop():
            control.request_drain("stop requested")


def _stream_until_stopped(
    graph,
    job_id: str,
    graph_input: Any,
    config: dict[str, Any],
    settings: AgentSettings,
    on_event: EventSink | None,
    should_stop: Callable[[], bool] | None,
) -> tuple[Status | None, str]:
    """_stream, and how it ended when it did not end by itself: ("stopped", ...) when drained, ("failed", ...) when it
    raised; (None, "") when the stream ended by itself (the graph ended, asks a question, or stops before a step)."""
    current_round = (graph.get_state(config).values or {}).get("round", 0)
    try:
        _stream(graph, job_id, graph_input, config, current_round, on_event, should_stop)
    except GraphDrained:
        return "stopped", f"stopped at a step boundary; resume with `cudamaster resume {job_id}`"
    except LeaseTakenOver as exc:  # another runner continues the job: nothing failed
        log.info("job %s stops here, another runner holds it now: %s", job_id, exc)
        return "stopped", f"stopped: another runner took the job over ({exc})"
    except Exception as exc:  # the outcome reports it; the checkpoint keeps the job resumable
        if database_faults.is_transient(exc):
            raise  # the database is unreachable: the job pauses (the service resumes it from its checkpoint)
        if isinstance(exc, NoGpuError):  # the outcome says it in full; no traceback of LangGraph's task
            log.info("job %s failed: %s", job_id, exc)
        else:
            log.warning("job %s failed: %s", job_id, exc, exc_info=not isinstance(exc, LlmError))
        return "failed", _failure_message(exc, job_id, settings)
    return None, ""


def _settled_status(job_id: str, snapshot, values: dict[str, Any], question: Question | None) -> tuple[Status, str]:
    """Status and message of a run that stopped by itself: waiting on a question, ended, or stopped before a step."""
    if question is not None:
        return "waiting_for_input", f"waiting for an answer for the {question.role} role"
    if not snapshot.next:
        return _end_status(job_id, snapshot, values)
    return "stopped", f"stopped before {', '.join(snapshot.next)}"


def _emit_finished(on_event: EventSink | None, outcome: Outcome, values: dict[str, Any]) -> None:
    """The run's last event: `finished`, with its status, message, best attempt and totals."""
    best = outcome.best
    _emit(
        on_event,
        FinishedEvent(
            job_id=outcome.job_id,
            round=values.get("round", 0),
            status=outcome.status,
            stop_reason=outcome.stop_reason,
            message=outcome.message,
            best_attempt_id=best.attempt_id if best else None,
            speedup=best.score if best else None,
            totals=outcome.totals,
        ),
    )


def _run(
    graph, job_id: str, graph_input: Any, settings: AgentSettings, on_event: EventSink | None, should_stop: Callable[[], bool] | None
) -> Outcome:
    """Run the graph until it finishes, asks a question, is stopped or fails; emit its events, then `finished`."""
    config = _config(job_id, settings)
    status, message = _stream_until_stopped(graph, job_id, graph_input, config, settings, on_event, should_stop)
    snapshot = graph.get_state(config)
    values = snapshot.values or {}
    question = _pending_interrupt(snapshot)
    if status is None:
        status, message = _settled_status(job_id, snapshot, values, question)
    outcome = _outcome(job_id, values, status, message, question)
    _emit_finished(on_event, outcome, values)
    return outcome


def profile_event(job_id: str, profile: dict[str, Any], *, sent: bool) -> ProfileEvent:
    """A `profile` event: a profile taken (`sent` False: of the round's kernel, or the baseline's) or the one
    the next planner is sent (`sent` True: with its mode, token budget and tokens). The service stores the
    attempt's profile from it; the baseline's has `of` == "baseline" and no attempt."""
    of = str(profile.get("of"))
    return ProfileEvent(
        job_id=job_id,
        node="filter" if sent else "profile",
        of=of,
        sent=sent,
        attempt_id=None if of == "baseline" else of,
        bottleneck_class=profile.get("bottleneck") or "",
        metrics=profile.get("metrics") or {},
        note=profile.get("note") or "",
        text=profile.get("text") or "",
        mode=profile.get("mode") or "none",
        tokens=int(profile.get("tokens") or 0),
        budget=profile.get("budget") if sent else None,
        lines_cut=int(profile.get("lines_cut") or 0),
    )


def _refuse(job_id: str, message: str, on_event: EventSink | None) -> Outcome:
    _emit(on_event, FinishedEvent(job_id=job_id, status="failed", message=message))
    return Outcome(job_id=job_id, status="failed", message=message)


def start_job(
    spec: JobSpec,
    *,
    job_id: str | None = None,
    checkpointer=None,
    evaluator: Evaluator | None = None,
    on_event: EventSink | None = None,
    should_stop: Callable[[], bool] | None = None,
    settings: AgentSettings | None = None,
) -> Outcome:
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
    if (why := spending.unenforceable(spec, settings)) is not None:
        return _refuse(job_id, why, on_event)
    checkpointer = checkpointer if checkpointer is not None else make_checkpointer()
    graph = _graph(job_id, spec, settings, checkpointer, evaluator)
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
        "profiles": [],
        "best": None,
        "status": "running",
        "stop_reason": None,
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
    answer: Answer | str | None = None,
    settings: AgentSettings | None = None,
) -> Outcome:
    """Continue a job from its last checkpoint; `answer` answers its pending question (manual mode).

    An `Answer` names the question it answers: when the job waits on another one, it is not resumed
    and keeps waiting (a plain string answers whatever question is pending)."""
    settings = settings or _tree().agent
    checkpointer = checkpointer if checkpointer is not None else make_checkpointer()
    config = _config(job_id, settings)
    snapshot = _reader(settings, checkpointer).get_state(config)
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
    if isinstance(answer, str):
        answer = Answer(question_id=None, text=answer)
    if question is not None and answer is None:
        return _outcome(job_id, values, "waiting_for_input", "waiting for an answer; resume with answer=...", question)
    if question is not None and answer is not None and answer.question_id not in (None, question.question_id):
        return _outcome(
            job_id,
            values,
            "waiting_for_input",
            f"the answer given was for question {answer.question_id}, which is no longer pending: the job "
            f"waits on question {question.question_id} for the {question.role} role; answer that one",
            question,
        )
    graph_input: Command | None = None
    if question is not None and answer is not None:
        graph_input = Command(resume={"question_id": question.question_id, "text": answer.text})
    graph = _graph(job_id, JobSpec.model_validate(values["spec"]), settings, checkpointer, evaluator)
    return _run(graph, job_id, graph_input, settings, on_event, should_stop)


def job_state(job_id: str, checkpointer, settings: AgentSettings | None = None) -> dict[str, Any]:
    """The job's current state values, what runs next, its pending question and last error, if any."""
    settings = settings or _tree().agent
    snapshot = _reader(settings, checkpointer).get_state(_config(job_id, settings))
    values = dict(snapshot.values or {})
    question = _pending_interrupt(snapshot) if values.get("graph_version") == GRAPH_VERSION else None
    return {
        "job_id": job_id,
        "exists": bool(values),
        "values": values,
        "next": list(snapshot.next),
        "interrupt": question.model_dump(mode="json") if question else None,
        "error": _pending_error(snapshot),
        "totals": Totals.of(values.get("llm_calls", [])).model_dump(mode="json"),
    }


def export_responses(job_id: str, checkpointer, path: str | Path, settings: AgentSettings | None = None) -> int:
    """Write the job's LLM responses, in order, as a replay file (JSON lines); returns how many."""
    import json

    calls = job_state(job_id, checkpointer, settings)["values"].get("llm_calls", [])
    with open(path, "w") as f:
        for c in calls:
            f.write(json.dumps({"role": c["role"], "model": c["model"], "response": c["response"]}) + "\n")
    return len(calls)
