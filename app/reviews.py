"""The review rule: which attempts' numbers look too good to publish unchecked (the queue itself, its reads and
decisions, is app/services/reviews.py).

An attempt is flagged on evidence of a measurement problem, not for a large speedup over a naive baseline: when it
is correct and, at any size,
- the harness found late work (work running past the end event) or a wall-clock gap (work outside the timed region);
- its time is within CUDAMASTER_SERVICE__REVIEW_ROOFLINE_PCT of the roofline floor;
- its timed calls spread widely (IQR over `spread` of the median);
- the timed calls cannot be trusted: the inputs were not redrawn between them (the harness's `inputs_not_refreshed`:
  a kernel that replays its last result would time as fast), none of them was checked (no `timed_call` check of the
  candidate although it was timed), or a checked one was wrong while the verdict says ok;
- it is faster than the vendor library by more than CUDAMASTER_SERVICE__REVIEW_VENDOR_MARGIN (default 25 %) at a
  size where the vendor reference (app/vendor_reference.csv: cuBLAS, cuDNN, cuSPARSE, cuFFT, CUB as measured on the
  H200, docs/results/vendor_run_*.json) reaches CUDAMASTER_SERVICE__REVIEW_VENDOR_MIN_PCT (default 40 %) of the
  roofline floor. On the reference's GPU model the times are compared; on another model the % of the roofline
  floor (time against the harness's floor for that size: GPU-normalised as far as the harness's peak settings are
  that GPU's; with the H200 defaults on a slower GPU the comparison flags less, on a faster one more). Below the
  minimum the library is launch-bound or a poor fit (cuSPARSE at small sizes) and beating it is ordinary;
- or its speedup grows between two sizes that differ in one parameter faster than the task's cost model allows
  (along one dimension a baseline's time grows at most with the work; sizes of different shapes are not compared,
  a naive baseline's time depends on the shape).
A speedup threshold (CUDAMASTER_HARNESS__REVIEW_SPEEDUP) is opt-in, off by default. Flags are written when the
attempt is stored (a `reviews` row, status pending); a reviewer accepts or rejects it. The leaderboard counts an
attempt only when it has no review row or an accepted one. `scripts/review_flagged_share.py` measures the share of
correct evaluations these rules flag on the evaluations committed under docs/results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from settings import ServiceSettings, get_harness_settings

from .db.models import PENDING, Attempt, Review
from .db.types import utcnow
from .store.upsert import insert_ignore
from .vendor_reference import VendorReference, shipped


@dataclass(frozen=True)
class ReviewRule:
    speedup: float | None = None  # opt-in threshold
    roofline_pct: float = 90.0
    spread: float = 0.5  # candidate IQR / median above this: the timed calls disagree
    jump_slack: float = 1.5  # speedup ratio between sizes over this times the work ratio: against the cost model
    vendor_margin: float | None = 0.25  # faster than the vendor reference by more than this fraction; None: off
    vendor_min_pct: float = 40.0  # ... where the vendor reference reaches this % of the roofline floor
    vendor: VendorReference | None = None  # None: the shipped reference (app/vendor_reference.csv)

    @classmethod
    def of(cls, settings: ServiceSettings) -> ReviewRule:
        return cls(
            get_harness_settings().review_speedup,  # the one threshold, also the harness's row flag
            settings.review_roofline_pct,
            vendor_margin=settings.review_vendor_margin,
            vendor_min_pct=settings.review_vendor_min_pct,
        )

    def reasons(self, evaluation: dict[str, Any] | None, verdict: str) -> list[str]:
        """Why an attempt with this evaluation must be reviewed (empty: it need not be)."""
        if verdict != "ok" or not evaluation:
            return []
        rows = evaluation.get("rows") or []
        out: list[str] = []
        for i, row in enumerate(rows):
            where = f"size {i + 1} {_params(row.get('params'))}"  # counted from 1, as the pages number sizes
            found = [*self._timing(row), *_timed_calls(row), *self._vendor(evaluation, row)]
            out.extend(f"{where}: {why}" for why in found)
        out.extend(self._jumps(rows))
        return out

    def _timing(self, row: dict[str, Any]) -> list[str]:
        """What the candidate's times say: the opt-in threshold, late work, a wall gap, the roofline, the spread."""
        out = []
        flags = row.get("flags") or []
        speedup, pct = row.get("speedup"), row.get("candidate_roofline_pct")
        if self.speedup is not None and speedup is not None and float(speedup) > self.speedup:
            out.append(f"speedup {float(speedup):.2f}x is over the review threshold {self.speedup:g}x")
        if "late_work" in flags:
            out.append("late work: the candidate's work ran past its end event")
        if "wall_gap" in flags:
            out.append("wall-clock time far above the event time: work outside the timed region")
        if pct is not None and float(pct) >= self.roofline_pct:
            out.append(f"time is {float(pct):.1f}% of the roofline floor (threshold {self.roofline_pct:g}%)")
        cand = row.get("candidate") or {}
        median, iqr = cand.get("median_us"), cand.get("iqr_us")
        if median and iqr is not None and float(iqr) > self.spread * float(median):
            out.append(f"timed calls spread widely (IQR {float(iqr):.2f} µs of median {float(median):.2f} µs)")
        return out

    def _vendor(self, evaluation: dict[str, Any], row: dict[str, Any]) -> list[str]:
        """Faster than the vendor library at this size by more than the margin, where the library is near the
        hardware: by time on the reference's GPU model, by % of the roofline floor on another."""
        cand, pct = row.get("candidate") or {}, row.get("candidate_roofline_pct")
        if self.vendor_margin is None or evaluation.get("implementation") == "vendor" or not cand.get("median_us") or not pct:
            return []
        ref = (self.vendor or shipped()).at(evaluation.get("task"), evaluation.get("precision"), row.get("params"))
        if ref is None or ref.roofline_pct < self.vendor_min_pct:
            return []
        gpu = str((evaluation.get("gpu") or {}).get("name") or "")
        same = gpu == ref.gpu
        ratio = ref.median_us / float(cand["median_us"]) if same else float(pct) / ref.roofline_pct
        if ratio <= 1.0 + self.vendor_margin:
            return []
        libs = ref.libraries or "vendor library"
        basis = (
            f"{float(cand['median_us']):.2f} µs against {ref.median_us:.2f} µs on the same GPU model ({gpu})"
            if same
            else f"{float(pct):.1f}% of the roofline floor against its {ref.roofline_pct:.1f}% on {ref.gpu} (this GPU: {gpu or 'unknown'})"
        )
        return [f"{ratio:.2f}x faster than the vendor library ({libs}): {basis}; margin {self.vendor_margin:g}"]

    def _jumps(self, rows: list[dict[str, Any]]) -> list[str]:
        """Speedups that grow between two sizes faster than the work does (the task's cost model), where the sizes
        differ in one parameter only: along one dimension the baseline's time grows at most with the work and the
        candidate's does not shrink, so more is a measurement problem. Sizes of other shapes are not compared (a
        naive baseline's time depends on the shape as much as on the work: softmax at 16 x 4096 against 128 x 256)."""
        sized = [
            (float(r["complexity"]), float(r["speedup"]), i, r.get("params") or {})
            for i, r in enumerate(rows, start=1)
            if r.get("speedup") and r.get("complexity")
        ]
        out = []
        for w0, s0, i0, p0 in sized:
            for w1, s1, i1, p1 in sized:
                if w1 > w0 > 0 and s0 > 0 and _one_apart(p0, p1) and s1 / s0 > self.jump_slack * w1 / w0:
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


def _timed_calls(row: dict[str, Any]) -> list[str]:
    """What the harness reports about the timed calls: inputs not redrawn between them, none checked, or a checked
    one wrong (in an evaluation whose verdict is ok)."""
    out = []
    if "inputs_not_refreshed" in (row.get("flags") or []):
        out.append(
            "inputs were not redrawn between timed calls (inputs_not_refreshed): a kernel that replays its last result would time as fast"
        )
    timed = [c for c in row.get("checks") or [] if c.get("stage") == "timed_call" and c.get("impl") == "candidate"]
    if row.get("candidate") and not timed:
        out.append("0 checked timed pairs: the outputs of the timed calls were never checked")
    wrong = sorted({c.get("call") for c in timed if not c.get("passed", True)}, key=str)
    if wrong:
        out.append(f"timed call {', '.join(map(str, wrong))} checked wrong although the verdict is ok: the timed-call checks disagree")
    return out


def _one_apart(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two sizes differ in exactly one parameter."""
    return a.keys() == b.keys() and sum(a[k] != b[k] for k in a) == 1


def _params(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    return "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
