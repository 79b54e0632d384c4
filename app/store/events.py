"""Store the agent's events idempotently: attempts, measurements, profiles, LLM calls and the event log.

Every event is validated through the contract's union (graph.contract.Event) first: an event that
does not match it is refused with a ValidationError, so drift between the agent and the service
fails loudly. A resumed job may send an event again; unique keys (job, attempt id), (job, call id),
(attempt, size) and (job, event key) make every write happen once. Totals and the best attempt are
recomputed from the stored rows, so they never double count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from graph.contract import AnyEvent, AttemptEvent, InterruptEvent, LlmCallEvent, ProfileEvent, parse_event
from graph.contract import Attempt as AttemptModel
from graph.contract import LlmCall as LlmCallModel
from graph.contract import Profile as ProfileModel
from graph.spending import call_key

from ..db.models import LLM_FAILED, LLM_LOST, LLM_PAID, LLM_SENT, Attempt, Job, JobEvent, LlmCall, Measurement, Profile
from ..db.types import utcnow
from ..reviews import ReviewRule
from .upsert import insert_ignore, upsert

# What the event log and the SSE stream leave out (fetched separately): an event with these blanked is
# still a valid contract event.
_LIGHT = {"source": "", "evaluation": None, "compile_log": "", "response": ""}


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


def event_key(event: AnyEvent) -> str | None:
    """Events that must appear once get a key; progress ("node") events are a plain log."""
    if isinstance(event, AttemptEvent):
        return f"attempt:{event.attempt_id}"
    if isinstance(event, LlmCallEvent):
        return f"llm_call:{llm_call_key(event)}"
    if event.type in ("interrupt", "finished", "profile"):
        return f"{event.type}:{_digest(event.model_dump(mode='json', exclude={'node'}))}"
    return None


def summary(event: AnyEvent) -> dict[str, Any]:
    """The event as the log and the SSE stream carry it: sources, evaluations, logs and responses blanked
    (a valid contract event still; GET /jobs/{id} and the source route serve them)."""
    light: dict[str, Any] = {k: v for k, v in _LIGHT.items() if k in type(event).model_fields}
    if isinstance(event, AttemptEvent) and event.profile is not None:
        light["profile"] = event.profile.model_copy(update={"text": ""})
    return event.model_copy(update=light).model_dump(mode="json")


def record_event(
    session: Session,
    job_id: str,
    sent: BaseModel | dict[str, Any],
    review: ReviewRule | None = None,
    fence: Callable[[Session], None] | None = None,
) -> bool:
    """Store one agent event; returns True when it was new. Commits. `review`: flag attempts that need a
    review. `fence`: called first, in the write's transaction (a runner's lease check, leases.hold: it raises
    and nothing is written once another runner holds the job). Raises pydantic.ValidationError for anything
    that is not a contract event, ValueError for another job's event."""
    event = parse_event(sent)
    if event.job_id != job_id:
        raise ValueError(f"an event of job {event.job_id} was sent to job {job_id}")
    if fence is not None:
        fence(session)
    if isinstance(event, LlmCallEvent) and event.status in (LLM_SENT, LLM_FAILED):
        store_llm_call(session, job_id, event)  # the ledger's record of a request; the stream shows paid calls
        refresh_totals(session, job_id)
        session.commit()
        return True
    if isinstance(event, AttemptEvent):
        attempt = store_attempt(session, job_id, event)
        if review is not None:
            review.flag(session, attempt)
    elif isinstance(event, LlmCallEvent):
        store_llm_call(session, job_id, event)
    elif isinstance(event, ProfileEvent):
        profiled = _attempt_by_key(session, job_id, event.attempt_id) if event.attempt_id else None
        if profiled is not None:
            _store_profile(session, profiled, event.profile(), replace=event.sent)
    elif isinstance(event, InterruptEvent):
        job = session.get(Job, job_id)
        if job is not None:
            job.question = summary(event)
    new = insert_ignore(
        session,
        JobEvent,
        {"job_id": job_id, "type": event.type, "dedupe_key": event_key(event), "payload": summary(event), "created_at": utcnow()},
        ["job_id", "dedupe_key"],
    )
    if isinstance(event, AttemptEvent | LlmCallEvent):
        refresh_totals(session, job_id)
    session.commit()
    return new


def _attempt_by_key(session: Session, job_id: str, key: str) -> Attempt | None:
    return session.scalar(select(Attempt).where(Attempt.job_id == job_id, Attempt.attempt_key == key))


def store_attempt(session: Session, job_id: str, a: AttemptModel) -> Attempt:
    gpu_model = str(((a.evaluation or {}).get("gpu") or {}).get("name") or "")[:128] or None
    insert_ignore(
        session,
        Attempt,
        {
            "job_id": job_id,
            "attempt_key": a.attempt_id,
            "round": a.round,
            "debug_step": a.debug_step,
            "role": a.role[:32],
            "strategy": a.strategy,
            "source": a.source,
            "source_sha256": hashlib.sha256(a.source.encode()).hexdigest() if a.source else "",
            "flags": list(a.flags),
            "compile_log": a.compile_log,
            "verdict": a.verdict[:32],
            "message": a.message,
            "score": a.score if a.score is not None else (a.evaluation or {}).get("score"),
            "evaluation": a.evaluation,
            "gpu_model": gpu_model,
            "sanitizer": [v.model_dump(mode="json") for v in a.sanitizer] or None,
            "sanitizer_status": a.sanitizer_status.value if a.sanitizer_status else None,
            "created_at": utcnow(),
        },
        ["job_id", "attempt_key"],
    )
    attempt = _attempt_by_key(session, job_id, a.attempt_id)
    assert attempt is not None
    for m in a.measurements():
        insert_ignore(
            session,
            Measurement,
            {"attempt_id": attempt.id, **m.model_dump(mode="json"), "gpu_model": gpu_model},
            ["attempt_id", "size_index"],
        )
    if a.profile is not None:
        _store_profile(session, attempt, a.profile)
    return attempt


def job_gpu_model(session: Session, job_id: str) -> str | None:
    """The GPU model of the job's first measurement (its later ones must be on the same model), or None."""
    return session.scalar(
        select(Attempt.gpu_model).where(Attempt.job_id == job_id, Attempt.gpu_model.is_not(None)).order_by(Attempt.id).limit(1)
    )


def _store_profile(session: Session, attempt: Attempt, p: ProfileModel, *, replace: bool = False) -> None:
    """An attempt's profile: the one taken is stored first; the one the planner is sent (`replace`: cut
    to the job's token budget) replaces it, so the row says what the planner saw."""
    values = {"attempt_id": attempt.id, **p.model_dump(mode="json", exclude={"budget", "lines_cut"}), "created_at": utcnow()}
    if replace:
        upsert(session, Profile, values, ["attempt_id"])
    else:
        insert_ignore(session, Profile, values, ["attempt_id"])


def llm_call_key(c: LlmCallModel) -> str:
    """The agent's call id, and the id of the request when it has one: a call sent again after a crash
    (the same call id) was paid again, and is a row of its own."""
    return call_key(c)


def store_llm_call(session: Session, job_id: str, c: LlmCallModel) -> None:
    """`sent` inserts the request's row (never over a later state); `paid` writes its tokens and cost
    whatever the row said (a `lost_in_flight` call whose answer the checkpoint kept is paid after all);
    `failed` replaces only a `sent` row."""
    values: dict[str, Any] = {
        "job_id": job_id,
        "call_key": llm_call_key(c),
        "status": c.status,
        "round": c.round,
        "role": c.role[:32],
        "model": c.model[:128],
        "input_tokens": c.input_tokens,
        "output_tokens": c.output_tokens,
        "reasoning_tokens": c.reasoning_tokens,
        "cached_tokens": c.cached_tokens,
        "latency_s": c.latency_s,
        "cost_usd": c.cost_usd,
        "created_at": utcnow(),
    }
    conflict = ["job_id", "call_key"]
    if c.status == LLM_SENT:
        insert_ignore(session, LlmCall, values, conflict)
    elif c.status == LLM_FAILED:
        # its tokens and cost are the estimate it is charged (graph.spending.failed_charge): none when it never
        # reached the endpoint, its prompt (and max_tokens when the endpoint may have generated) when it did
        upsert(session, LlmCall, values, conflict, where=LlmCall.status == LLM_SENT)
    else:
        upsert(session, LlmCall, values | {"status": LLM_PAID}, conflict)


def mark_lost_in_flight(session: Session, job_id: str) -> int:
    """Calls still `sent` when no process runs the job any more (its holder died, or its run ended):
    lost in flight. Their estimated cost stays counted. Returns how many; the caller commits."""
    result = session.execute(update(LlmCall).where(LlmCall.job_id == job_id, LlmCall.status == LLM_SENT).values(status=LLM_LOST))
    return result.rowcount or 0  # type: ignore[attr-defined]


def job_spending(session: Session, job_id: str) -> dict[str, tuple[int, float]]:
    """call key -> (input + output tokens, US dollars) of every call on record for the job: paid, in flight (at
    the most it may cost: its prompt and its `max_tokens`) and lost in flight (at that same estimate). The
    spending cap counts these (graph/spending.py); the job's totals are their sums."""
    rows = session.execute(
        select(LlmCall.call_key, LlmCall.input_tokens + LlmCall.output_tokens, LlmCall.cost_usd).where(LlmCall.job_id == job_id)
    ).all()
    return {key: (int(tokens), float(usd)) for key, tokens, usd in rows}


def refresh_totals(session: Session, job_id: str) -> None:
    job = session.get(Job, job_id)
    if job is None:
        return
    n, i, o, r, c, cost, lat = session.execute(
        select(
            func.count(LlmCall.id),
            func.coalesce(func.sum(LlmCall.input_tokens), 0),
            func.coalesce(func.sum(LlmCall.output_tokens), 0),
            func.coalesce(func.sum(LlmCall.reasoning_tokens), 0),
            func.coalesce(func.sum(LlmCall.cached_tokens), 0),
            func.coalesce(func.sum(LlmCall.cost_usd), 0.0),
            func.coalesce(func.sum(LlmCall.latency_s), 0.0),
        ).where(LlmCall.job_id == job_id)
    ).one()
    job.llm_calls_count, job.input_tokens, job.output_tokens, job.reasoning_tokens, job.cached_tokens = n, i, o, r, c
    job.cost_usd, job.llm_latency_s = float(cost), float(lat)
    job.attempts_count = session.scalar(select(func.count(Attempt.id)).where(Attempt.job_id == job_id)) or 0
    best = session.execute(
        select(Attempt.id, Attempt.score)
        .where(Attempt.job_id == job_id, Attempt.verdict == "ok", Attempt.score.is_not(None))
        .order_by(Attempt.score.desc(), Attempt.id)
        .limit(1)
    ).first()
    job.best_attempt_id, job.best_score = (best[0], best[1]) if best else (None, None)
    job.updated_at = utcnow()
