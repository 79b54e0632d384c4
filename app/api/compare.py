"""Runs compared side by side (the dashboard's /compare pages show the same data): jobs or attempts of
one task and precision, and campaigns. Reads like the jobs and campaigns routes: a run of another team
is answered like a missing one (404); too few or too many ids, or mixed tasks or precisions, are a 422."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, HTTPException, Query

from ..compare import MAX_COMPARED, CompareInvalid, CompareNotFound
from ..compare.campaigns import compare_campaigns
from ..compare.runs import compare_attempts, compare_jobs
from ..compare.schemas import CampaignComparison, RunComparison
from .deps import Reader, SessionDep
from .errors import responses, unprocessable

router = APIRouter(prefix="/compare", tags=["compare"])
_READ = responses(401, 403, 404)
T = TypeVar("T")


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


def answer(compare: Callable[[], T], ids: str) -> T:
    """The comparison, or the service's refusal as the API's 404 or 422."""
    try:
        return compare()
    except CompareNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except CompareInvalid as exc:
        raise unprocessable(("query", "ids"), str(exc), ids) from None


@router.get(
    "/jobs",
    response_model=RunComparison,
    summary="Jobs of one task and precision side by side (each by its best attempt)",
    responses=_READ,
)
def jobs(ids: JobIds, session: SessionDep, caller: Reader) -> RunComparison:
    """P, the per-size speedups and roofline %, the sources' diff against the first job's, the profiles'
    metrics and bottleneck classes, tokens and cost. A job without a correct attempt shows its latest."""
    return answer(lambda: compare_jobs(session, caller, ids), ids)


@router.get("/attempts", response_model=RunComparison, summary="Attempts of one task and precision side by side", responses=_READ)
def attempts(ids: AttemptIds, session: SessionDep, caller: Reader) -> RunComparison:
    """Attempts of one job or of several jobs of the same task and precision (ids as GET /jobs/{id} lists them)."""
    return answer(lambda: compare_attempts(session, caller, ids), ids)


@router.get(
    "/campaigns",
    response_model=CampaignComparison,
    summary="Campaigns side by side: success at each tau, cost, token use per profile mode, bottleneck transitions",
    responses=_READ,
)
def campaigns(ids: CampaignIds, session: SessionDep, caller: Reader) -> CampaignComparison:
    return answer(lambda: compare_campaigns(session, caller, ids), ids)
