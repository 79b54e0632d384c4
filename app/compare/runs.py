"""Jobs or attempts of one task and precision, side by side: P, per-size speedup and roofline %, the
sources' diff against the first run, the profiles' metrics and bottleneck classes, tokens and cost."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from graph.contract import DEFAULT_PROFILE_MODE

from .. import permissions
from ..bounds import INT32_MAX
from ..db.models import Attempt, Job
from ..permissions import Caller
from ..store import aggregates
from . import CompareInvalid, CompareNotFound
from .schemas import ComparedRun, DiffKind, DiffLine, MetricRow, RunComparison, RunProfile, SizePoint, SizeRow, TokenUse

DIFF_LINES = 600  # of each diff: the page stays small whatever the kernels' length
BOTTLENECK = "bottleneck class"


def compare_jobs(session: Session, jobs: Sequence[Job]) -> RunComparison:
    """Each job (read by the caller: app/services/compare.py checks it) by its best attempt (else its latest)."""
    _same_variant(jobs, [j.id for j in jobs])
    chosen = _chosen_attempts(session, list(jobs))
    attempts = _load_attempts(session, [a for a in chosen.values() if a is not None])
    pairs = [(job, attempts.get(a) if (a := chosen[job.id]) is not None else None) for job in jobs]
    return _comparison(session, "jobs", pairs)


def compare_attempts(session: Session, caller: Caller, wanted: list[str]) -> RunComparison:
    """Attempts (their ids as given, split_ids) of one or several jobs of the same task and precision."""
    numbers = []
    for raw in wanted:
        if not raw.isdecimal() or len(raw) > 10 or not 1 <= int(raw) <= INT32_MAX:  # isdigit() holds for "²"
            raise CompareInvalid(f"attempt id {raw[:40]!r} is not a number: give attempt ids as the job page lists them")
        numbers.append(int(raw))
    attempts = _load_attempts(session, numbers)
    jobs = {j.id: j for j in session.scalars(select(Job).where(Job.id.in_({a.job_id for a in attempts.values()})))}
    for n in numbers:
        if n not in attempts or not permissions.can_read(caller, jobs[attempts[n].job_id]):
            raise CompareNotFound(f"no attempt {n} visible to this key; GET /api/v1/jobs/JOB_ID lists a job's attempts")
    pairs = [(jobs[attempts[n].job_id], attempts[n]) for n in numbers]
    _same_variant([job for job, _ in pairs], [f"attempt {n}" for n in numbers])
    return _comparison(session, "attempts", pairs)


def _same_variant(jobs: Sequence[Job], names: list[str]) -> None:
    variants = {(j.task, j.precision) for j in jobs}
    if len(variants) > 1:
        each = ", ".join(f"{name}: {j.task}/{j.precision}" for name, j in zip(names, jobs, strict=True))
        raise CompareInvalid(f"runs of different tasks or precisions do not compare ({each}): pick runs of one task and one precision")


def _chosen_attempts(session: Session, jobs: list[Job]) -> dict[str, int | None]:
    chosen: dict[str, int | None] = {j.id: j.best_attempt_id for j in jobs}
    without = [j.id for j in jobs if j.best_attempt_id is None]
    if without:
        latest = session.execute(select(Attempt.job_id, func.max(Attempt.id)).where(Attempt.job_id.in_(without)).group_by(Attempt.job_id))
        chosen.update(dict(latest.tuples().all()))
    return chosen


def _load_attempts(session: Session, ids: list[int]) -> dict[int, Attempt]:
    if not ids:
        return {}
    query = select(Attempt).where(Attempt.id.in_(ids)).options(selectinload(Attempt.measurements), selectinload(Attempt.profile))
    return {a.id: a for a in session.scalars(query)}


def _attempt_numbers(session: Session, attempts: list[Attempt]) -> dict[int, int]:
    """Each attempt's place in its own job (1 for its first), whatever its global id."""
    out = {}
    for a in attempts:
        out[a.id] = session.scalar(select(func.count(Attempt.id)).where(Attempt.job_id == a.job_id, Attempt.id <= a.id)) or 0
    return out


def _comparison(session: Session, kind: Any, pairs: Sequence[tuple[Job, Attempt | None]]) -> RunComparison:
    models = aggregates.models_of(session, list(dict.fromkeys(job.id for job, _ in pairs)))
    numbers = _attempt_numbers(session, [a for _, a in pairs if a is not None])
    first = pairs[0][1]
    runs = [_run(job, a, models[job.id], numbers, first if i else None) for i, (job, a) in enumerate(pairs)]
    return RunComparison(
        kind=kind, task=pairs[0][0].task, precision=pairs[0][0].precision, runs=runs, sizes=_size_rows(runs), metrics=_metric_rows(runs)
    )


def _run(job: Job, attempt: Attempt | None, models: list[str], numbers: dict[int, int], first: Attempt | None) -> ComparedRun:
    settings = job.settings or {}
    diff, cut = _diff(first, attempt, numbers) if first is not None and attempt is not None else ([], False)
    return ComparedRun(
        job_id=job.id,
        status=job.status,
        models=models or sorted(set((settings.get("models") or {}).values())),
        rounds=settings.get("rounds"),
        debug=settings.get("debug"),
        profile_mode=settings.get("profile_mode") or DEFAULT_PROFILE_MODE,
        best_score=job.best_score,
        attempt_id=attempt.id if attempt else None,
        attempt_number=numbers.get(attempt.id) if attempt else None,
        round=attempt.round if attempt else None,
        debug_step=attempt.debug_step if attempt else None,
        verdict=attempt.verdict if attempt else "",
        score=attempt.score if attempt else None,
        gpu_model=attempt.gpu_model if attempt else None,
        source_sha256=attempt.source_sha256 if attempt else "",
        source_bytes=len(attempt.source.encode()) if attempt else 0,
        source_url=f"/api/v1/jobs/{job.id}/attempts/{attempt.id}/source" if attempt else None,
        sizes=[_size(m) for m in sorted(attempt.measurements, key=lambda m: m.size_index)] if attempt else [],
        profile=_profile(attempt, settings) if attempt else None,
        tokens=TokenUse(
            input=job.input_tokens,
            output=job.output_tokens,
            reasoning=job.reasoning_tokens,
            cached=job.cached_tokens,
            total=job.input_tokens + job.output_tokens,
            llm_calls=job.llm_calls_count,
            cost_usd=job.cost_usd,
        ),
        diff_from_first=diff,
        diff_truncated=cut,
    )


def _size(m: Any) -> SizePoint:
    params = dict(m.params or {})
    size = math.prod(v for v in params.values() if isinstance(v, int | float) and not isinstance(v, bool))
    return SizePoint(
        params=params,
        size=float(size),
        label=" ".join(f"{k}={v}" for k, v in params.items()),
        passed=bool(m.passed),
        speedup=m.speedup,
        roofline_pct=m.candidate_roofline_pct,
        baseline_us=m.baseline_median_us,
        candidate_us=m.candidate_median_us,
    )


def _profile(attempt: Attempt, settings: dict[str, Any]) -> RunProfile | None:
    p = attempt.profile
    if p is None:
        return None
    return RunProfile(
        bottleneck_class=p.bottleneck_class or "",
        mode=p.mode or settings.get("profile_mode") or "",
        tokens=p.tokens,
        metrics=p.metrics or {},
    )


def source_diff(old: str, new: str, before: str, after: str, limit: int | None = None) -> tuple[list[tuple[DiffKind, str]], bool]:
    """A unified diff (3 lines of context) as (kind, line) pairs, at most `limit` of them, and whether it was cut:
    the job page's diff of an attempt from the previous one and the comparison's diff from the first run."""
    out: list[tuple[DiffKind, str]] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), before, after, lineterm="", n=3):
        if len(out) == limit:
            return out, True
        kind: DiffKind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        out.append((kind, line))
    return out, False


def _diff(old: Attempt, new: Attempt, numbers: dict[int, int]) -> tuple[list[DiffLine], bool]:
    """The diff's file names say each attempt's job and place in it (#1 for the job's first), not its global id."""
    before, after = (f"{a.job_id} attempt #{numbers.get(a.id, '?')}" for a in (old, new))
    lines, cut = source_diff(old.source, new.source, before, after, DIFF_LINES)
    return [DiffLine(kind=kind, text=text) for kind, text in lines], cut


def _size_rows(runs: list[ComparedRun]) -> list[SizeRow]:
    labels: dict[float, str] = {}
    for r in runs:
        for s in r.sizes:
            labels.setdefault(s.size, s.label)
    rows = []
    for size in sorted(labels):
        at = [next((s for s in r.sizes if s.size == size), None) for r in runs]
        rows.append(
            SizeRow(
                label=labels[size],
                size=size,
                speedup=[s.speedup if s else None for s in at],
                roofline_pct=[s.roofline_pct if s else None for s in at],
            )
        )
    return rows


def _metric_rows(runs: list[ComparedRun]) -> list[MetricRow]:
    """The bottleneck class first, then every metric any run's profile has (in first-seen order)."""
    if not any(r.profile for r in runs):
        return []
    names = list(dict.fromkeys(k for r in runs if r.profile for k in r.profile.metrics))
    rows = [MetricRow(metric=BOTTLENECK, values=[(r.profile.bottleneck_class or "unclassified") if r.profile else None for r in runs])]
    rows += [MetricRow(metric=k, values=[r.profile.metrics.get(k) if r.profile else None for r in runs]) for k in names]
    return rows
