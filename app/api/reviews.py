"""The review queue: flagged attempts with their evidence; a reviewer (or an admin) accepts or rejects them.

Reads follow the jobs' rules (a key sees the reviews of its team's jobs; an admin every team's). A
decision needs app/permissions.can_review: an admin, or a reviewer of the job's team who did not
submit the job. The leaderboard counts only attempts without a review or with an accepted one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from ..bounds import INT32_MAX, MAX_OFFSET
from ..schemas import ReviewDecision, ReviewOut, ReviewPage, ReviewStatus
from ..services import access
from ..services.reviews import decide, page_of_reviews
from .deps import KeyHolder, Reader, SessionDep, SettingsDep
from .errors import as_http, responses

router = APIRouter(prefix="/reviews", tags=["reviews"])


@router.get("", response_model=ReviewPage, summary="Flagged attempts and their evidence, newest first", responses=responses(401, 403))
def list_reviews(
    session: SessionDep,
    caller: Reader,
    settings: SettingsDep,
    status: Annotated[ReviewStatus | None, Query(description="pending, accepted or rejected; default all")] = None,
    limit: Annotated[int, Query(ge=1, le=INT32_MAX, description="page size (at most CUDAMASTER_SERVICE__MAX_PAGE_SIZE)")] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> ReviewPage:
    with as_http():
        access.check_page_size(limit, settings.max_page_size)
    return page_of_reviews(session, caller, status=status, limit=limit, offset=offset)


@router.post(
    "/{attempt_id}",
    response_model=ReviewOut,
    summary="Accept or reject a flagged attempt",
    responses=responses(400, 401, 403, 404, 409, 413),
)
def decide_review(
    attempt_id: Annotated[int, Path(ge=1, le=INT32_MAX)], body: ReviewDecision, session: SessionDep, caller: KeyHolder
) -> ReviewOut:
    """An admin, or a reviewer of the job's team that did not submit the job. An accepted attempt counts on the
    leaderboard; a rejected one never does. A decision is final (409 on a second one)."""
    with as_http():
        return decide(session, caller, attempt_id, body)
