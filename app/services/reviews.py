"""The review queue, for the API's routes and the dashboard's pages: its reads (a page of reviews with their
evidence, the share of correct attempts flagged), its decisions, and its rows in the API's shape.

What gets flagged is app/reviews.py's rule (applied when an attempt is stored). A decision needs
app/permissions.can_review: an admin, or a reviewer of the job's team who did not submit the job; it is final."""

from __future__ import annotations

import time

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session, contains_eager, load_only, selectinload

from .. import permissions
from ..db.models import ACCEPTED, PENDING, REJECTED, Attempt, Job, Review
from ..db.types import utcnow
from ..permissions import Caller
from ..schemas import ReviewDecision, ReviewOut, ReviewPage
from .errors import Conflict, Forbidden, NotFound

DECISIONS = {"accept": ACCEPTED, "reject": REJECTED}


class ReviewStateError(Exception):
    """The review is not pending (or the decision is unknown); the message says what is possible."""


def review_of(session: Session, attempt_id: int) -> Review | None:
    return session.scalar(select(Review).where(Review.attempt_id == attempt_id))


def record_decision(session: Session, review: Review, reviewer_key_id: str, decision: str, note: str) -> Review:
    """Accept or reject a pending review. A decided review stays decided (a second decision is a conflict)."""
    if decision not in DECISIONS:
        raise ReviewStateError(f"decision {decision[:20]!r}: choose accept or reject")
    if review.status != PENDING:
        raise ReviewStateError(
            f"attempt {review.attempt_id} was already {review.status} by key {review.reviewer_key_id} "
            f"at {review.decided_at:%Y-%m-%d %H:%M} UTC"
        )
    review.status, review.reviewer_key_id, review.decided_at, review.note = DECISIONS[decision], reviewer_key_id, utcnow(), note
    session.commit()
    return review


def list_reviews(
    session: Session, visible: ColumnElement[bool], *, status: str | None, limit: int, offset: int
) -> tuple[list[Review], int]:
    """Reviews of the jobs `visible` (a WHERE clause on Job) selects, newest flag first, with their evidence loaded.
    Of each attempt only its id, job and score are read (its source and evaluation, tens of KB of JSON each, are not
    needed: the source has its own route); of each job what the queue shows and the permissions read."""
    conds = [visible] + ([Review.status == status] if status else [])
    attempt = selectinload(Review.attempt).options(load_only(Attempt.id, Attempt.job_id, Attempt.score))
    query = (
        select(Review)
        .join(Job, Job.id == Review.job_id)
        .where(*conds)
        .options(
            attempt.selectinload(Attempt.measurements),
            attempt.selectinload(Attempt.profile),
            contains_eager(Review.job).load_only(Job.id, Job.task, Job.precision, Job.team, Job.api_key_id),
        )
        .order_by(Review.flagged_at.desc(), Review.id.desc())
        .limit(limit)
        .offset(offset)
    )
    total = session.scalar(select(func.count(Review.id)).join(Job, Job.id == Review.job_id).where(*conds)) or 0
    return list(session.scalars(query)), total


SHARE_TTL_S = 10.0
_shares: dict[str, tuple[float, tuple[int, ...], tuple[int, int]]] = {}  # scope -> (when, revision, share)


def flagged_share(session: Session, visible: ColumnElement[bool]) -> tuple[int, int]:
    """(correct attempts flagged, correct attempts) over the jobs `visible` selects: the review page shows the share.

    Counting passes over every correct attempt; attempts and reviews are only ever inserted, so the count is kept
    per database and scope while the newest attempt and review ids stay the same, and for SHARE_TTL_S at most (an
    attempt committed after a later-numbered one, possible on PostgreSQL, shows within that time)."""
    newest = select(select(func.max(Attempt.id)).scalar_subquery(), select(func.max(Review.id)).scalar_subquery())
    revision = tuple(int(n or 0) for n in session.execute(newest).one())
    scope = f"{session.get_bind().engine.url}|{visible.compile(compile_kwargs={'literal_binds': True})}"
    now = time.monotonic()
    kept = _shares.get(scope)
    if kept is not None and kept[1] == revision and now - kept[0] < SHARE_TTL_S:
        return kept[2]
    row = session.execute(
        select(func.count(Review.id), func.count(Attempt.id))
        .select_from(Attempt)
        .join(Job, Job.id == Attempt.job_id)
        .outerjoin(Review, Review.attempt_id == Attempt.id)
        .where(visible, Attempt.verdict == "ok")
    ).one()
    share = (int(row[0] or 0), int(row[1] or 0))
    if len(_shares) > 256:
        _shares.clear()
    _shares[scope] = (now, revision, share)
    return share


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
    review = review_of(session, attempt_id)
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
        record_decision(session, review, caller.key_id or "", body.decision, body.note)
    except ReviewStateError as exc:
        raise Conflict(str(exc)) from None
    return review_out(review)


def page_of_reviews(session: Session, caller: Caller, *, status: str | None, limit: int, offset: int) -> ReviewPage:
    """The flagged attempts of the jobs the caller may read, newest flag first, one page."""
    rows, total = list_reviews(session, permissions.visible_jobs(caller), status=status, limit=limit, offset=offset)
    return ReviewPage(items=[review_out(r) for r in rows], total=total, limit=limit, offset=offset)
