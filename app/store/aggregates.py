"""Aggregates the dashboard and the API share: the leaderboard, the share of tasks per P threshold, costs.

Leaderboard: per benchmark task, precision and GPU model, the correct attempt with the highest P
among those the review queue lets count (no review row, or an accepted one). Custom tasks are private
to their key and never ranked. Attempts measured on different GPU models are never compared: the GPU
model (attempts.gpu_model, the evaluation's `gpu.name` as stored) is part of the key.

Everything is aggregated in the database from plain columns (no JSON is read), in a fixed number of
statements whatever the number of jobs: the page stays fast with 10,000 attempts stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, distinct, exists, func, not_, select
from sqlalchemy.orm import Session

from ..db.models import ACCEPTED, Attempt, Job, LlmCall, Review
from ..db.types import utcnow

P_THRESHOLDS = (1.0, 2.0, 4.0, 8.0)


def _gpu_name() -> ColumnElement[Any]:
    """The GPU model an attempt was measured on ('' if none): its own column, filled from the evaluation's `gpu.name`
    when it is stored (app/store/events.py), so no attempt's evaluation JSON is parsed here."""
    return func.coalesce(Attempt.gpu_model, "")


def counted(clean_only: bool = False) -> ColumnElement[bool]:
    """Attempts the leaderboard may count: correct, scored, not held by the review queue, and without compute-sanitizer
    findings (such a kernel is never a job's result either); with `clean_only`, only those the sanitizer found clean."""
    held = exists().where(Review.attempt_id == Attempt.id, Review.status != ACCEPTED)
    sanitized = Attempt.sanitizer_status == "clean" if clean_only else func.coalesce(Attempt.sanitizer_status, "") != "findings"
    return and_(Attempt.verdict == "ok", Attempt.score.is_not(None), not_(held), sanitized)


def _benchmark_jobs(visible: ColumnElement[bool], model: str | None) -> ColumnElement[bool]:
    cond = and_(visible, not_(Job.task.like("ct\\_%", escape="\\")))
    if model:
        cond = and_(cond, exists().where(LlmCall.job_id == Job.id, LlmCall.model == model))
    return cond


@dataclass
class Entry:
    task: str
    precision: str
    gpu: str
    score: float
    attempt_id: int
    job_id: str
    job_cost_usd: float
    models: list[str]
    sanitizer: str | None = None  # the kernel's compute-sanitizer standing: clean | not_run | None (not sanitized)


@dataclass
class Share:
    precision: str
    gpu: str
    tasks: int
    at_least: dict[str, float]  # "1", "2", "4", "8" -> share of tasks whose best P is at least that


def models_of(session: Session, job_ids: list[str]) -> dict[str, list[str]]:
    """The models each job's LLM calls used (sorted)."""
    out: dict[str, list[str]] = {j: [] for j in job_ids}
    if job_ids:
        for job_id, model in session.execute(
            select(LlmCall.job_id, LlmCall.model)
            .where(LlmCall.job_id.in_(job_ids))
            .group_by(LlmCall.job_id, LlmCall.model)
            .order_by(LlmCall.job_id, LlmCall.model)
        ):
            out[job_id].append(model)
    return out


def leaderboard(
    session: Session,
    visible: ColumnElement[bool],
    *,
    model: str | None = None,
    precision: str | None = None,
    clean_only: bool = False,
    tasks: list[str] | None = None,
) -> tuple[list[Entry], list[Share]]:
    """`tasks`: only these (a suite's); its shares then count the suite's tasks tried."""
    jobs = _benchmark_jobs(visible, model)
    if precision:
        jobs = and_(jobs, Job.precision == precision)
    if tasks is not None:
        jobs = and_(jobs, Job.task.in_(tasks))
    # Two small queries instead of one window over every attempt: the best P per (task, precision, GPU model),
    # then the attempts holding exactly those scores (the first one stored wins a tie).
    gpu = _gpu_name()
    base = select().select_from(Attempt).join(Job, Job.id == Attempt.job_id).where(jobs, counted(clean_only))
    best = {
        (t, p, g): score
        for t, p, g, score in session.execute(
            base.add_columns(Job.task, Job.precision, gpu, func.max(Attempt.score)).group_by(Job.task, Job.precision, gpu)
        )
    }
    winners: dict[tuple[str, str, str], Any] = {}
    if best:
        holders = base.add_columns(
            Job.task,
            Job.precision,
            gpu.label("gpu"),
            Attempt.score,
            Attempt.id.label("attempt_id"),
            Job.id.label("job_id"),
            Job.cost_usd,
            Attempt.sanitizer_status,
        ).where(Attempt.score.in_(set(best.values())))
        for r in session.execute(holders.order_by(Attempt.id)):
            key = (r.task, r.precision, r.gpu)
            if best.get(key) == r.score and key not in winners:
                winners[key] = r
    rows = [winners[k] for k in sorted(winners)]
    models = models_of(session, sorted({r.job_id for r in rows}))
    entries = [
        Entry(r.task, r.precision, r.gpu, float(r.score), r.attempt_id, r.job_id, float(r.cost_usd), models[r.job_id], r.sanitizer_status)
        for r in rows
    ]
    # Denominator: every task tried at this precision (a task whose jobs found no countable kernel has P < 1).
    tried = session.execute(select(Job.precision, func.count(distinct(Job.task))).where(jobs).group_by(Job.precision)).all()
    shares = []
    for prec, n_tasks in sorted(tried):
        gpus = sorted({e.gpu for e in entries if e.precision == prec}) or [""]
        for g in gpus:
            scores = [e.score for e in entries if e.precision == prec and e.gpu == g]
            shares.append(Share(prec, g, n_tasks, {f"{t:g}": sum(s >= t for s in scores) / n_tasks for t in P_THRESHOLDS}))
    return entries, shares


def _day(session: Session, column: Any) -> ColumnElement[Any]:
    if session.get_bind().dialect.name == "postgresql":
        return func.date(func.timezone("UTC", column))
    return func.date(column)


@dataclass
class ModelDay:
    day: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass
class JobCost:
    job_id: str
    task: str
    precision: str
    status: str
    cost_usd: float
    tokens: int
    best_score: float | None
    usd_per_speedup: float | None  # cost / P: dollars per unit of the best speedup found


def costs(
    session: Session, visible: ColumnElement[bool], *, days: int, model: str | None = None, limit: int = 100
) -> tuple[list[ModelDay], list[JobCost]]:
    since: datetime = utcnow() - timedelta(days=days)
    day = _day(session, LlmCall.created_at).label("day")
    q = (
        select(
            day,
            LlmCall.model,
            func.count(LlmCall.id),
            func.sum(LlmCall.input_tokens),
            func.sum(LlmCall.output_tokens),
            func.sum(LlmCall.cost_usd),
        )
        .join(Job, Job.id == LlmCall.job_id)
        .where(visible, LlmCall.created_at >= since)
        .group_by(day, LlmCall.model)
        .order_by(day.desc(), LlmCall.model)
    )
    if model:
        q = q.where(LlmCall.model == model)
    per_day = [
        ModelDay(d.isoformat() if isinstance(d, date) else str(d), m, int(n), int(i or 0), int(o or 0), float(c or 0.0))
        for d, m, n, i, o, c in session.execute(q)
    ]
    jq = select(Job).where(visible, Job.llm_calls_count > 0, Job.created_at >= since)
    if model:
        jq = jq.where(exists().where(LlmCall.job_id == Job.id, LlmCall.model == model))
    per_job = [
        JobCost(
            j.id,
            j.task,
            j.precision,
            j.status,
            j.cost_usd,
            j.input_tokens + j.output_tokens,
            j.best_score,
            j.cost_usd / j.best_score if j.best_score else None,
        )
        for j in session.scalars(jq.order_by(Job.created_at.desc(), Job.id.desc()).limit(limit))
    ]
    return per_day, per_job


def known_models(session: Session, visible: ColumnElement[bool]) -> list[str]:
    return list(
        session.scalars(select(LlmCall.model).join(Job, Job.id == LlmCall.job_id).where(visible).distinct().order_by(LlmCall.model))
    )
