"""The review queue: attempts whose numbers look too good to publish unchecked.

An attempt is flagged on evidence of a measurement problem, not for a large speedup over a naive baseline: when it
is correct and, at any size, the harness found late work (work running past the end event) or a wall-clock gap,
its time is within CUDAMASTER_SERVICE__REVIEW_ROOFLINE_PCT of the roofline floor, its timed calls spread widely,
or its speedup grows between two sizes faster than the task's cost model allows (a baseline's time grows at
most with the work). A speedup threshold (CUDAMASTER_SERVICE__REVIEW_SPEEDUP) is opt-in, off by default. Flags are written when the
attempt is stored (a `reviews` row, status pending); a reviewer accepts or rejects it. The
leaderboard counts an attempt only when it has no review row or an accepted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session, selectinload

from settings import ServiceSettings

from .db.models import ACCEPTED, PENDING, REJECTED, Attempt, Job, Review
from .db.types import utcnow
from .store.upsert import insert_ignore

DECISIONS = {"accept": ACCEPTED, "reject": REJECTED}


class ReviewStateError(Exception):
    """The review is not pending (or the decision is unknown); the message says what is possible."""


@dataclass(frozen=True)
class ReviewRule:
    speedup: float | None = None  # opt-in threshold
    roofline_pct: float = 90.0
    spread: float = 0.5  # candidate IQR / median above this: the timed calls disagree
    jump_slack: float = 1.5  # speedup ratio between sizes over this times the work ratio: against the cost model

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
            if self.speedup is not None and speedup is not None and float(speedup) > self.speedup:
                out.append(f"{where}: speedup {float(speedup):.2f}x is over the review threshold {self.speedup:g}x")
            if "late_work" in flags:
                out.append(f"{where}: late work: the candidate's work ran past its end event")
            if "wall_gap" in flags:
                out.append(f"{where}: wall-clock time far above the event time: work outside the timed region")
            if pct is not None and float(pct) >= self.roofline_pct:
                out.append(f"{where}: time is {float(pct):.1f}% of the roofline floor (threshold {self.roofline_pct:g}%)")
            cand = row.get("candidate") or {}
            median, iqr = cand.get("median_us"), cand.get("iqr_us")
            if median and iqr is not None and float(iqr) > self.spread * float(median):
                out.append(f"{where}: timed calls spread widely (IQR {float(iqr):.2f} µs of median {float(median):.2f} µs)")
        out.extend(self._jumps(evaluation.get("rows") or []))
        return out

    def _jumps(self, rows: list[dict[str, Any]]) -> list[str]:
        """Speedups that grow between consecutive sizes faster than the work does (the task's cost model): the
        baseline's time grows at most with the work and the candidate's does not shrink, so more is a measurement
        problem."""
        sized = sorted(
            ((float(r["complexity"]), float(r["speedup"]), i) for i, r in enumerate(rows) if r.get("speedup") and r.get("complexity")),
        )
        out = []
        for (w0, s0, i0), (w1, s1, i1) in zip(sized, sized[1:], strict=False):
            if s0 > 0 and w0 > 0 and s1 / s0 > self.jump_slack * max(w1 / w0, 1.0):
                out.append(
                    f"sizes {i0} -> {i1}: speedup jumps {s0:.2f}x -> {s1:.2f}x ({s1 / s0:.1f}x) while the work grows "
                    f"{w1 / w0:.1f}x (cost model)"
                )
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


def flagged_share(session: Session, visible: ColumnElement[bool]) -> tuple[int, int]:
    """(correct attempts flagged, correct attempts) over the jobs `visible` selects: the review page shows the share."""
    correct = select(Attempt.id).join(Job, Job.id == Attempt.job_id).where(visible, Attempt.verdict == "ok")
    flagged = session.scalar(select(func.count(Review.id)).where(Review.attempt_id.in_(correct))) or 0
    return flagged, session.scalar(select(func.count()).select_from(correct.subquery())) or 0
