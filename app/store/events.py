"""Store the agent's events idempotently: attempts, measurements, profiles, LLM calls and the event log.

A resumed job may send an event again; unique keys (job, attempt id), (job, call id), (attempt,
size) and (job, event key) make every write happen once. Totals and the best attempt are
recomputed from the stored rows, so they never double count.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..db.models import LLM_FAILED, LLM_LOST, LLM_PAID, LLM_SENT, Attempt, Job, JobEvent, LlmCall, Measurement, Profile
from ..db.types import utcnow
from ..reviews import ReviewRule
from .upsert import insert_ignore, upsert

_SUMMARY_DROP = ("source", "evaluation", "compile_log", "response")


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


def event_key(event: dict[str, Any]) -> str | None:
    """Events that must appear once get a key; progress ("node") events are a plain log."""
    kind = event.get("type")
    if kind == "attempt":
        return f"attempt:{event.get('attempt_id')}"
    if kind == "llm_call":
        return f"llm_call:{llm_call_key(event)}"
    if kind in ("interrupt", "finished", "profile"):
        return f"{kind}:{_digest(event)}"
    return None


def _summary(event: dict[str, Any]) -> dict[str, Any]:
    """What the event log and the SSE stream carry: sources and full evaluations are fetched separately."""
    out = {k: v for k, v in event.items() if k not in _SUMMARY_DROP}
    if event.get("type") == "attempt":
        ev = event.get("evaluation") or {}
        out["source_bytes"] = len((event.get("source") or "").encode())
        out["score"] = ev.get("score")
        out["evaluation_verdict"] = ev.get("verdict")
    return json.loads(json.dumps(out, default=str))


def record_event(session: Session, job_id: str, event: dict[str, Any], review: ReviewRule | None = None) -> bool:
    """Store one agent event; returns True when it was new. Commits. `review`: flag attempts that need a review."""
    kind = event.get("type", "node")
    if kind == "llm_call" and event.get("status") in (LLM_SENT, LLM_FAILED):
        store_llm_call(session, job_id, event)  # the ledger's record of a request; the stream shows paid calls
        refresh_totals(session, job_id)
        session.commit()
        return True
    if kind == "attempt":
        attempt = store_attempt(session, job_id, event)
        if review is not None:
            review.flag(session, attempt)
    elif kind == "llm_call":
        store_llm_call(session, job_id, event)
    elif kind == "profile":
        profiled = _attempt_by_key(session, job_id, str(event.get("attempt_id")))
        if profiled is not None:
            _store_profile(session, profiled, event)
    elif kind == "interrupt":
        job = session.get(Job, job_id)
        if job is not None:
            job.question = _summary(event)
    new = insert_ignore(
        session,
        JobEvent,
        {"job_id": job_id, "type": str(kind)[:32], "dedupe_key": event_key(event), "payload": _summary(event), "created_at": utcnow()},
        ["job_id", "dedupe_key"],
    )
    if kind in ("attempt", "llm_call"):
        refresh_totals(session, job_id)
    session.commit()
    return new


def _attempt_by_key(session: Session, job_id: str, key: str) -> Attempt | None:
    return session.scalar(select(Attempt).where(Attempt.job_id == job_id, Attempt.attempt_key == key))


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def store_attempt(session: Session, job_id: str, a: dict[str, Any]) -> Attempt:
    key = str(a.get("attempt_id") or _digest({k: a.get(k) for k in ("round", "debug_step", "role", "source")}))
    evaluation = a.get("evaluation")
    if evaluation is not None and hasattr(evaluation, "model_dump"):
        evaluation = evaluation.model_dump(mode="json")
    source = a.get("source") or ""
    verdict = a.get("verdict") or (evaluation or {}).get("verdict") or ""
    gpu_model = str(((evaluation or {}).get("gpu") or {}).get("name") or "")[:128] or None
    insert_ignore(
        session,
        Attempt,
        {
            "job_id": job_id,
            "attempt_key": key[:160],
            "round": int(a.get("round") or 0),
            "debug_step": int(a.get("debug_step") or 0),
            "role": str(a.get("role") or "")[:32],
            "strategy": str(a.get("strategy") or ""),
            "source": source,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest() if source else "",
            "flags": list(a.get("flags") or []),
            "compile_log": str(a.get("compile_log") or ""),
            "verdict": str(verdict)[:32],
            "message": str(a.get("message") or ""),
            "score": _num((evaluation or {}).get("score")),
            "evaluation": evaluation,
            "gpu_model": gpu_model,
            "created_at": utcnow(),
        },
        ["job_id", "attempt_key"],
    )
    attempt = _attempt_by_key(session, job_id, key[:160])
    assert attempt is not None
    for i, row in enumerate((evaluation or {}).get("rows") or []):
        base, cand = row.get("baseline") or {}, row.get("candidate") or {}
        insert_ignore(
            session,
            Measurement,
            {
                "attempt_id": attempt.id,
                "size_index": i,
                "params": row.get("params") or {},
                "passed": bool(row.get("passed")),
                "baseline_median_us": _num(base.get("median_us")),
                "baseline_iqr_us": _num(base.get("iqr_us")),
                "candidate_median_us": _num(cand.get("median_us")),
                "candidate_iqr_us": _num(cand.get("iqr_us")),
                "speedup": _num(row.get("speedup")),
                "speedup_iqr": _num(row.get("speedup_iqr")),
                "roofline_floor_us": _num(row.get("roofline_floor_us")),
                "candidate_roofline_pct": _num(row.get("candidate_roofline_pct")),
                "gpu_model": gpu_model,
            },
            ["attempt_id", "size_index"],
        )
    if a.get("profile"):
        _store_profile(session, attempt, a["profile"])
    return attempt


def job_gpu_model(session: Session, job_id: str) -> str | None:
    """The GPU model of the job's first measurement (its later ones must be on the same model), or None."""
    return session.scalar(
        select(Attempt.gpu_model).where(Attempt.job_id == job_id, Attempt.gpu_model.is_not(None)).order_by(Attempt.id).limit(1)
    )


def _store_profile(session: Session, attempt: Attempt, p: dict[str, Any]) -> None:
    insert_ignore(
        session,
        Profile,
        {
            "attempt_id": attempt.id,
            "bottleneck_class": str(p.get("bottleneck_class") or p.get("class") or "")[:64],
            "metrics": json.loads(json.dumps(p.get("metrics") or {}, default=str)),
            "text": str(p.get("text") or p.get("filtered") or ""),
            "created_at": utcnow(),
        },
        ["attempt_id"],
    )


def llm_call_key(c: dict[str, Any]) -> str:
    """The agent's call id, and the id of the request when it has one: a call sent again after a crash
    (the same call id) was paid again, and is a row of its own."""
    key = str(c.get("call_id") or _digest({k: v for k, v in c.items() if k != "status"}))
    if c.get("send_id"):
        key = f"{key}#{c['send_id']}"
    return key[:160]


def store_llm_call(session: Session, job_id: str, c: dict[str, Any]) -> None:
    """`sent` inserts the request's row (never over a later state); `paid` writes its tokens and cost
    whatever the row said (a `lost_in_flight` call whose answer the checkpoint kept is paid after all);
    `failed` replaces only a `sent` row."""
    status = str(c.get("status") or LLM_PAID)
    values = {
        "job_id": job_id,
        "call_key": llm_call_key(c),
        "status": status,
        "round": c.get("round"),
        "role": str(c.get("role") or "")[:32],
        "model": str(c.get("model") or "")[:128],
        "input_tokens": int(c.get("input_tokens") or 0),
        "output_tokens": int(c.get("output_tokens") or 0),
        "reasoning_tokens": int(c.get("reasoning_tokens") or 0),
        "cached_tokens": int(c.get("cached_tokens") or 0),
        "latency_s": float(c.get("latency_s") or 0.0),
        "cost_usd": float(c.get("cost_usd") or 0.0),
        "created_at": utcnow(),
    }
    conflict = ["job_id", "call_key"]
    if status == LLM_SENT:
        insert_ignore(session, LlmCall, values, conflict)
    elif status == LLM_FAILED:
        values |= {"input_tokens": 0, "cost_usd": 0.0}  # the endpoint answered an error: no evidence it was paid
        upsert(session, LlmCall, values, conflict, where=LlmCall.status == LLM_SENT)
    else:
        upsert(session, LlmCall, values | {"status": LLM_PAID}, conflict)


def mark_lost_in_flight(session: Session, job_id: str) -> int:
    """Calls still `sent` when no process runs the job any more (its holder died, or its run ended):
    lost in flight. Their estimated cost stays counted. Returns how many; the caller commits."""
    result = session.execute(update(LlmCall).where(LlmCall.job_id == job_id, LlmCall.status == LLM_SENT).values(status=LLM_LOST))
    return result.rowcount or 0  # type: ignore[attr-defined]


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
