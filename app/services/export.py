"""Export an attempt's kernel as a bundle (issue 41): the same for the API's route, the dashboard's button and
`cudamaster export`. The bundle is generated from the task's data by bench_tasks/export; this module supplies
what the service holds: the attempt's source, its measurements, the GPU it ran on, the job's models, tokens
and cost, and the sanitizer verdicts where the attempt has them.

Who may export: whoever may read the job's sources (app/permissions.py, through access.readable_job); the
command line reads the database directly, as `cudamaster campaign report` does."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bench_tasks import TaskError, load_task
from bench_tasks.export import ExportInput, MeasuredRow, bundle_files, zip_bytes
from bench_tasks.expr import ExpressionError
from bench_tasks.harness.result import Verdict
from bench_tasks.provenance import git_commit
from bench_tasks.spec import Task

from .. import stored_tasks
from ..bounds import is_stored_task_id
from ..db.models import Attempt, Job, LlmCall
from ..permissions import Caller
from ..store import jobs as store
from .access import no_job, readable_job
from .errors import Conflict, NotFound


@dataclass(frozen=True)
class Bundle:
    name: str  # the folder (and zip) name: <task>_<precision>_<job>_a<attempt>
    files: dict[str, bytes]

    def zip(self) -> bytes:
        return zip_bytes(self.files, self.name)


def export_for(session: Session, caller: Caller, job_id: str, attempt_id: int | None = None) -> Bundle:
    """The bundle of `attempt_id` (default: the job's best) for a caller who may read the job."""
    return export_job(session, readable_job(session, caller, job_id, detail=True), attempt_id)


def export_stored(session: Session, job_id: str, attempt_id: int | None = None) -> Bundle:
    """The bundle for the command line (the operator reads the database; no key)."""
    job = store.get_job(session, job_id, detail=True)
    if job is None:
        raise no_job(job_id)
    return export_job(session, job, attempt_id)


def export_job(session: Session, job: Job, attempt_id: int | None) -> Bundle:
    attempt = _chosen_attempt(session, job, attempt_id)
    variant = _task(session, job).variant(job.precision)
    evaluation = attempt.evaluation or {}
    rows = [
        MeasuredRow(dict(m.params), m.baseline_median_us, m.candidate_median_us, m.speedup, m.candidate_roofline_pct)
        for m in sorted(attempt.measurements, key=lambda m: m.size_index)
    ]
    sanitizer = sanitizer_verdicts(attempt)
    data = ExportInput(
        variant=variant,
        kernel_source=attempt.source,
        rows=rows,
        score=attempt.score,
        environment=_environment(evaluation),
        provenance=_provenance(session, job, attempt, evaluation),
        sanitizer=sanitizer,
    )
    try:
        files = bundle_files(data)
    except ExpressionError as exc:  # stored sizes whose parameters are not the task's (e.g. N for M, K, N)
        raise Conflict(
            f"attempt {attempt.id} of job {job.id} was measured at sizes that do not fit task {job.task} ({exc}); "
            "export an attempt the harness measured at this task's sizes"
        ) from None
    return Bundle(f"{job.task}_{job.precision}_{job.id}_a{attempt.id}", files)


def _chosen_attempt(session: Session, job: Job, attempt_id: int | None) -> Attempt:
    if attempt_id is None:
        if job.best_attempt_id is None:
            raise Conflict(
                f"job {job.id} has no correct kernel to export yet (status {job.status}); export one of its attempts "
                "with a correct kernel (?attempt=ID, --attempt ID) or wait for the job to find one"
            )
        attempt_id = job.best_attempt_id
    attempt = store.get_attempt(session, job.id, attempt_id)
    if attempt is None:
        raise NotFound(f"job {job.id} has no attempt {attempt_id}; GET /api/v1/jobs/{job.id} lists its attempts")
    if attempt.verdict != Verdict.ok or attempt.score is None or not attempt.source.strip():
        raise Conflict(
            f"attempt {attempt.id} of job {job.id} has no correct kernel (verdict {attempt.verdict or 'none'}"
            f"{': ' + attempt.message[:200] if attempt.message else ''}); only an attempt the harness passed can be exported"
            + (f"; the job's best is attempt {job.best_attempt_id}" if job.best_attempt_id else "")
        )
    return attempt


def _task(session: Session, job: Job) -> Task:
    try:
        if is_stored_task_id(job.task):
            row = stored_tasks.row_of(session, job.task)
            if row is None:
                raise Conflict(f"job {job.id}'s stored task {job.task} is no longer stored: its bundle cannot be generated")
            return stored_tasks.register(row)
        return load_task(job.task)
    except (TaskError, stored_tasks.StoredTaskInvalid) as exc:
        raise Conflict(f"job {job.id}'s task {job.task} cannot be loaded here: {exc}") from None


@cache
def _service_commit() -> str:
    """This service's commit, read once (git runs two subprocesses)."""
    return git_commit()


def _environment(evaluation: dict[str, Any]) -> dict[str, str]:
    gpu = evaluation.get("gpu") or {}
    return {
        "gpu": str(gpu.get("name") or "unknown GPU"),
        "driver": str(gpu.get("driver_version") or "unknown"),
        "cuda": str(gpu.get("runtime_version") or gpu.get("cuda_driver_api") or "unknown"),
        "nvcc": str(evaluation.get("nvcc_version") or "unknown").splitlines()[-1][:120] if evaluation.get("nvcc_version") else "unknown",
        "harness": str(evaluation.get("harness_version") or "unknown"),
        "commit": _service_commit(),  # the exporting service's: the measurement itself records no commit
    }


def _provenance(session: Session, job: Job, attempt: Attempt, evaluation: dict[str, Any]) -> dict[str, Any]:
    models = session.scalars(select(LlmCall.model).where(LlmCall.job_id == job.id).distinct()).all()
    return {
        "job": job.id,
        "attempt": attempt.id,
        "task": job.task,
        "precision": job.precision,
        "date": attempt.created_at.isoformat(timespec="seconds") if attempt.created_at else "",
        "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "score": attempt.score,
        "round": attempt.round,
        "debug_step": attempt.debug_step,
        "source_sha256": attempt.source_sha256 or hashlib.sha256(attempt.source.encode()).hexdigest(),
        "models": sorted(m for m in models if m) or sorted(set((job.settings or {}).get("models", {}).values())),
        "tokens": {
            "input": job.input_tokens,
            "output": job.output_tokens,
            "reasoning": job.reasoning_tokens,
            "cached": job.cached_tokens,
        },
        "cost_usd": job.cost_usd,
        "seeds": evaluation.get("seeds", []),
        "size_set": evaluation.get("size_set", ""),
    }


def sanitizer_verdicts(attempt: Attempt) -> list[dict[str, str]] | None:
    """The attempt's compute-sanitizer verdicts as rows (tool, verdict, detail), read defensively from wherever the
    attempt holds them (a `sanitizer` attribute or the evaluation document's `sanitizer`); None: not run."""
    raw = getattr(attempt, "sanitizer", None) or (attempt.evaluation or {}).get("sanitizer")
    if not raw:
        return None
    items = raw.get("verdicts", raw) if isinstance(raw, dict) else raw
    if isinstance(items, dict):
        items = [{"tool": tool, **(v if isinstance(v, dict) else {"verdict": v})} for tool, v in items.items()]
    rows = []
    for v in items if isinstance(items, list) else []:
        if not isinstance(v, dict):
            continue
        detail = (
            v.get("reason")
            or v.get("detail")
            or "; ".join(str(x) for x in (v.get("report") or v.get("findings") or v.get("lines") or [])[:3])
        )
        rows.append({"tool": str(v.get("tool", "?")), "verdict": str(v.get("verdict", v.get("status", "?"))), "detail": str(detail)[:300]})
    return rows or None
