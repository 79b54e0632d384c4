"""Aggregates for the dashboard and anyone else: the leaderboard and costs, over the jobs a key may read."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..bounds import MODEL_PATTERN, SUITE_ID_PATTERN
from ..schemas import CostsOut, LeaderboardOut, Precision
from ..services import insights
from .deps import Reader, SessionDep
from .errors import as_http, responses

router = APIRouter(tags=["insights"])

Model = Annotated[str | None, Query(max_length=128, pattern=MODEL_PATTERN, description="only jobs that called this model")]


@router.get(
    "/leaderboard",
    response_model=LeaderboardOut,
    summary="Best countable kernel per task, precision and GPU model",
    responses=responses(401, 403, 404),
)
def leaderboard(
    session: SessionDep,
    caller: Reader,
    model: Model = None,
    precision: Annotated[Precision | None, Query()] = None,
    sanitizer_clean: Annotated[bool, Query(description="only kernels compute-sanitizer found clean (all four tools)")] = False,
    suite: Annotated[str | None, Query(pattern=SUITE_ID_PATTERN, description="only this suite's tasks (a suite of this key)")] = None,
) -> LeaderboardOut:
    """Per benchmark task and precision (and GPU model: never compared across GPU models), the correct attempt with
    the highest P among the jobs this key may read, counting only attempts the review queue has not flagged or has
    accepted; and the share of tasks tried whose best P is at least 1, 2, 4 and 8. With `suite`, only that suite's
    tasks (its shares count the suite's tasks tried); another key's suite is a 404."""
    with as_http():
        return insights.leaderboard(session, caller, model=model, precision=precision, sanitizer_clean=sanitizer_clean, suite=suite)


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
    return insights.costs(session, caller, model=model, days=days, limit=limit)
