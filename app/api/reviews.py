"""The review queue: flagged attempts with their evidence; a reviewer (or an admin) accepts or rejects them.

Reads follow the jobs' rules (a key sees the reviews of its team's jobs; an admin every team's). A
decision needs app/permissions.can_review: an admin, or a reviewer of the job's team who did not
submit the job. The leaderboard counts only attempts without a review or with an accepted one.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from .. import permissions, reviews
from ..bounds import INT32_MAX, MAX_OFFSET
from ..db.models import Review
from ..permissions import Caller
from ..schemas import ReviewDecision, ReviewOut, ReviewPage, ReviewStatus
from .deps import KeyHolder, Reader, SessionDep, SettingsDep
from .errors import responses, unprocessable

router = APIRouter(prefix="/reviews", tags=["reviews"])


def review_out(review: Review) -> ReviewOut:
    attempt, job = review.attempt, review.job
    return ReviewOut.model_validate(
        {
            "attempt_id": review.attempt_id,
            "job_id": review.job_id,
            "task": job.task,
            "precision": job.precision,
            "status": review.status,
            "reasons": review.reasons,
            "flagged_at": review.flagged_at,
            "reviewer_key_id": review.reviewer_key_id,
            "decided_at": review.decided_at,
            "note": review.note,
            "score": attempt.score,
            "measurements": attempt.measurements,
            "profile": attempt.profile,
            "source_url": f"/api/v1/jobs/{job.id}/attempts/{attempt.id}/source",
        }
    )


@router.get("", response_model=ReviewPage, summary="Flagged attempts and their evidence, newest first", responses=responses(401, 403))
def list_reviews(
    session: SessionDep,
    caller: Reader,
    settings: SettingsDep,
    status: Annotated[ReviewStatus | None, Query(description="pending, accepted or rejected; default all")] = None,
    limit: Annotated[int, Query(ge=1, le=INT32_MAX, description="page size (at most CUDAMASTER_SERVICE__MAX_PAGE_SIZE)")] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> ReviewPage:
    if limit > settings.max_page_size:
        raise unprocessable(
            ("query", "limit"),
            f"limit {limit} is over the page size limit {settings.max_page_size} (CUDAMASTER_SERVICE__MAX_PAGE_SIZE); page with offset",
            limit,
        )
    rows, total = reviews.list_reviews(session, permissions.visible_jobs(caller), status=status, limit=limit, offset=offset)
    return ReviewPage(items=[review_out(r) for r in rows], total=total, limit=limit, offset=offset)


def decide(session: SessionDep, caller: Caller, attempt_id: int, body: ReviewDecision) -> ReviewOut:
    """Accept or reject: the API route and the dashboard's form both come here."""
    review = reviews.review_of(session, attempt_id)
    if review is None or not permissions.can_read(caller, review.job):
        raise HTTPException(404, f"no flagged attempt {attempt_id} visible to this key; GET /api/v1/reviews lists them")
    if not permissions.can_review(caller, review.job):
        why = (
            "it submitted this job: another reviewer of the team or an admin must review it"
            if review.job.api_key_id == caller.key_id and caller.key_id
            else "reviews need a reviewer or admin key (`cudamaster keys create --role reviewer`)"
        )
        raise HTTPException(403, f"{caller.label} cannot review attempt {attempt_id}: {why}")
    try:
        reviews.decide(session, review, caller.key_id or "", body.decision, body.note)
    except reviews.ReviewStateError as exc:
        raise HTTPException(409, str(exc)) from None
    return review_out(review)


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
    return decide(session, caller, attempt_id, body)
