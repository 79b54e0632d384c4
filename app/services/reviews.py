"""The review queue's decisions and its rows in the API's shape, for the API's routes and the dashboard's pages.

A decision needs app/permissions.can_review: an admin, or a reviewer of the job's team who did not submit
the job (app/reviews.py keeps the queue itself)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from .. import permissions, reviews
from ..db.models import Review
from ..permissions import Caller
from ..schemas import ReviewDecision, ReviewOut, ReviewPage
from .errors import Conflict, Forbidden, NotFound


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


def decide(session: Session, caller: Caller, attempt_id: int, body: ReviewDecision) -> ReviewOut:
    """Accept or reject a flagged attempt (a decision is final: Conflict on a second one)."""
    review = reviews.review_of(session, attempt_id)
    if review is None or not permissions.can_read(caller, review.job):
        raise NotFound(f"no flagged attempt {attempt_id} visible to this key; GET /api/v1/reviews lists them")
    if not permissions.can_review(caller, review.job):
        why = (
            "it submitted this job: another reviewer of the team or an admin must review it"
            if review.job.api_key_id == caller.key_id and caller.key_id
            else "reviews need a reviewer or admin key (`cudamaster keys create --role reviewer`)"
        )
        raise Forbidden(f"{caller.label} cannot review attempt {attempt_id}: {why}")
    try:
        reviews.decide(session, review, caller.key_id or "", body.decision, body.note)
    except reviews.ReviewStateError as exc:
        raise Conflict(str(exc)) from None
    return review_out(review)


def page_of_reviews(session: Session, caller: Caller, *, status: str | None, limit: int, offset: int) -> ReviewPage:
    """The flagged attempts of the jobs the caller may read, newest flag first, one page."""
    rows, total = reviews.list_reviews(session, permissions.visible_jobs(caller), status=status, limit=limit, offset=offset)
    return ReviewPage(items=[review_out(r) for r in rows], total=total, limit=limit, offset=offset)
