"""Aggregates over the jobs a key may read: the leaderboard and the costs (the API's routes and the dashboard's pages)."""

from __future__ import annotations

from dataclasses import asdict

from sqlalchemy.orm import Session

from graph.contract import Precision

from .. import permissions
from ..permissions import Caller
from ..schemas import CostPerJob, CostPerModelDay, CostsOut, LeaderboardEntry, LeaderboardOut, LeaderboardShare
from ..store import aggregates
from . import suites


def leaderboard(
    session: Session,
    caller: Caller,
    *,
    model: str | None = None,
    precision: Precision | None = None,
    sanitizer_clean: bool = False,
    suite: str | None = None,
) -> LeaderboardOut:
    """Per task, precision and GPU model, the best countable attempt (`sanitizer_clean`: among the kernels compute-sanitizer
    found clean), and the shares of tasks with P >= 1, 2, 4, 8. `suite`: only that suite's tasks (a suite of the
    caller's key; another key's is NotFound)."""
    visible = permissions.visible_jobs(caller)
    tasks = suites.task_ids(session, caller, suite) if suite is not None else None
    entries, shares = aggregates.leaderboard(session, visible, model=model, precision=precision, clean_only=sanitizer_clean, tasks=tasks)
    return LeaderboardOut(
        entries=[LeaderboardEntry.model_validate(e, from_attributes=True) for e in entries],
        shares=[LeaderboardShare.model_validate(s, from_attributes=True) for s in shares],
        models=aggregates.known_models(session, visible),
    )


def costs(session: Session, caller: Caller, *, model: str | None = None, days: int = 30, limit: int = 100) -> CostsOut:
    """Tokens and dollars per model and day, and the cost per unit of speedup of the newest `limit` jobs."""
    per_day, per_job = aggregates.costs(session, permissions.visible_jobs(caller), days=days, model=model, limit=limit)
    return CostsOut(
        days=days,
        per_model_day=[CostPerModelDay.model_validate(asdict(d)) for d in per_day],
        per_job=[CostPerJob.model_validate(asdict(j)) for j in per_job],
    )
