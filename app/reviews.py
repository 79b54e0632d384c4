"""The review queue: attempts whose numbers look too good to publish unchecked.

An attempt is flagged when it is correct and, at any size, its speedup is over the review threshold
(CUDAMASTER_SERVICE__REVIEW_SPEEDUP), the harness found late work (work running past the end event), or its
time is within CUDAMASTER_SERVICE__REVIEW_ROOFLINE_PCT of the roofline floor. Flags are written when the
attempt is stored (a `reviews` row, status pending); a reviewer accepts or rejects it. The
leaderboard counts an attempt only when it has no review row or an accepted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session, selectinload

from .db.models import ACCEPTED, PENDING, REJECTED, Attempt, Job, Review
from .db.types import utcnow
from .settings import ServiceSettings
from .store.upsert import insert_ignore

DECISIONS = {"accept": ACCEPTED, "reject": REJECTED}


class ReviewStateError(Exception):
    """The review is not pending (or the decision is unknown); the message says what is possible."""


@dataclass(frozen=True)
class ReviewRule:
    speedup: float = 10.0
    roofline_pct: float = 90.0

    @classmethod
    def of(cls, settings: ServiceSettings) -> ReviewRule:
        return cls(settings.review_speedup, settings.review_roofline_pct)

    def reasons(self, evaluation: dict[str, Any] | None, verdict: str) -> list[str]:
        """Why an attempt with this evaluation must be reviewed (empty: it need not be)."""
        if verdict != "ok" or not evaluation:
            return []
        out: list[str] = []
        for i, row in enumerate(evaluation.get("rows") or []):
            where = f"size {i} {_params(row.get('params'))}"
            flags = row.get("flags") or []
            speedup, pct = row.get("speedup"), row.get("candidate_roofline_pct")
            if speedup is not None and float(speedup) > self.speedup:
                out.append(f"{where}: speedup {float(speedup):.2f}x is over the review threshold {self.speedup:g}x")
            elif "speedup_over_review_threshold" in flags:
                out.append(f"{where}: the harness found the speedup over its review threshold")
            if "late_work" in flags:
                out.append(f"{where}: late work: the candidate's work ran past its end event")
            if pct is not None and float(pct) >= self.roofline_pct:
                out.append(f"{where}: time is {float(pct):.1f}% of the roofline floor (threshold {self.roofline_pct:g}%)")
        return out

    def flag(self, session: Session, attempt: Attempt) -> bool:
        """Store a pending review for the attempt when it needs one (once); True when one was stored now."""
        reasons = self.reasons(attempt.evaluation, attempt.verdict)
        if not reasons:
            return False
        return insert_ignore(
            session,
            Review,
            {"attempt_id": attempt.id, "job_id": attempt.job_id, "status": PENDING, "reasons": reasons, "flagged_at": utcnow(), "note": ""},
            ["attempt_id"],
        )


def _params(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    return "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


def review_of(session: Session, attempt_id: int) -> Review | None:
    return session.scalar(select(Review).where(Review.attempt_id == attempt_id))


def decide(session: Session, review: Review, reviewer_key_id: str, decision: str, note: str) -> Review:
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
    """Reviews of the jobs `visible` (a WHERE clause on Job) selects, newest flag first, with their evidence loaded."""
    conds = [visible] + ([Review.status == status] if status else [])
    query = (
        select(Review)
        .join(Job, Job.id == Review.job_id)
        .where(*conds)
        .options(
            selectinload(Review.attempt).selectinload(Attempt.measurements),
            selectinload(Review.attempt).selectinload(Attempt.profile),
            selectinload(Review.job),
        )
        .order_by(Review.flagged_at.desc(), Review.id.desc())
        .limit(limit)
        .offset(offset)
    )
    total = session.scalar(select(func.count(Review.id)).join(Job, Job.id == Review.job_id).where(*conds)) or 0
    return list(session.scalars(query)), total
