"""Runs compared side by side (the dashboard's /compare pages show the same data): jobs or attempts of
one task and precision, and campaigns. Reads like the jobs and campaigns routes: a run of another team
is answered like a missing one (404); too few or too many ids, or mixed tasks or precisions, are a 422."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..compare.schemas import CampaignComparison, RunComparison
from ..services import compare
from ..services.compare import MAX_COMPARED
from .deps import Reader, SessionDep
from .errors import as_http, responses

router = APIRouter(prefix="/compare", tags=["compare"])
_READ = responses(401, 403, 404)


def _ids(what: str, example: str) -> Any:
    return Query(
        min_length=3,
        max_length=MAX_COMPARED * 24,
        description=f"2 to {MAX_COMPARED} {what}, comma-separated",
        examples=[example],
    )


JobIds = Annotated[str, _ids("job ids", "job_0123456789abcdef,job_fedcba9876543210")]
AttemptIds = Annotated[str, _ids("attempt ids (of jobs of one task and precision)", "12,15")]
CampaignIds = Annotated[str, _ids("campaign ids", "cmp_0123456789abcdef,cmp_fedcba9876543210")]


@router.get(
    "/jobs",
    response_model=RunComparison,
    summary="Jobs of one task and precision side by side (each by its best attempt)",
    responses=_READ,
)
def jobs(ids: JobIds, session: SessionDep, caller: Reader) -> RunComparison:
    """P, the per-size speedups and roofline %, the sources' diff against the first job's, the profiles'
    metrics and bottleneck classes, tokens and cost. A job without a correct attempt shows its latest."""
    with as_http():
        return compare.jobs(session, caller, ids)


@router.get("/attempts", response_model=RunComparison, summary="Attempts of one task and precision side by side", responses=_READ)
def attempts(ids: AttemptIds, session: SessionDep, caller: Reader) -> RunComparison:
    """Attempts of one job or of several jobs of the same task and precision (ids as GET /jobs/{id} lists them)."""
    with as_http():
        return compare.attempts(session, caller, ids)


@router.get(
    "/campaigns",
    response_model=CampaignComparison,
    summary="Campaigns side by side: success at each tau, cost, token use per profile mode, bottleneck transitions",
    responses=_READ,
)
def campaigns(ids: CampaignIds, session: SessionDep, caller: Reader) -> CampaignComparison:
    with as_http():
        return compare.campaigns(session, caller, ids)
