"""Aggregates for the dashboard and anyone else: the leaderboard and costs, over the jobs a key may read."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Query

from .. import permissions
from ..bounds import MODEL_PATTERN
from ..schemas import CostPerJob, CostPerModelDay, CostsOut, LeaderboardEntry, LeaderboardOut, LeaderboardShare, Precision
from ..store import aggregates
from .deps import Reader, SessionDep
from .errors import responses

router = APIRouter(tags=["insights"])

Model = Annotated[str | None, Query(max_length=128, pattern=MODEL_PATTERN, description="only jobs that called this model")]


@router.get(
    "/leaderboard",
    response_model=LeaderboardOut,
    summary="Best countable kernel per task, precision and GPU model",
    responses=responses(401, 403),
)
def leaderboard(
    session: SessionDep, caller: Reader, model: Model = None, precision: Annotated[Precision | None, Query()] = None
) -> LeaderboardOut:
    """Per benchmark task and precision (and GPU model: never compared across GPU models), the correct attempt with
    the highest P among the jobs this key may read, counting only attempts the review queue has not flagged or has
    accepted; and the share of tasks tried whose best P is at least 1, 2, 4 and 8."""
    visible = permissions.visible_jobs(caller)
    entries, shares = aggregates.leaderboard(session, visible, model=model, precision=precision)
    return LeaderboardOut(
        entries=[LeaderboardEntry.model_validate(e, from_attributes=True) for e in entries],
        shares=[LeaderboardShare.model_validate(s, from_attributes=True) for s in shares],
        models=aggregates.known_models(session, visible),
    )


@router.get(
    "/costs",
    response_model=CostsOut,
    summary="Tokens and dollars per model and day; cost per unit of speedup per job",
    responses=responses(401, 403),
)
def costs(
    session: SessionDep,
    caller: Reader,
    model: Model = None,
    days: Annotated[int, Query(ge=1, le=3660, description="the last this many days (UTC)")] = 30,
    limit: Annotated[int, Query(ge=1, le=500, description="jobs listed in per_job, newest first")] = 100,
) -> CostsOut:
    per_day, per_job = aggregates.costs(session, permissions.visible_jobs(caller), days=days, model=model, limit=limit)
    return CostsOut(
        days=days,
        per_model_day=[CostPerModelDay.model_validate(asdict(d)) for d in per_day],
        per_job=[CostPerJob.model_validate(asdict(j)) for j in per_job],
    )
