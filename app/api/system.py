"""Health: the database answers, the runner's load, the GPUs (found, configured, and whether jobs can run);
the GPUs and their queue (GET /gpus), the Ray cluster's when Ray is on."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy import text

from ..evaluation import Evaluation
from ..schemas import ClusterOut, ClusterWorkerOut, GpuOut, GpusOut, HealthOut
from ..services.access import visible_job_ids
from .deps import Reader, SessionDep
from .errors import responses

router = APIRouter(tags=["system"])


def _ping(request: Request) -> str:
    try:
        with request.app.state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return f"error: {type(exc).__name__}: {exc}"[:300]


def _cluster(status: dict[str, Any] | None) -> ClusterOut | None:
    """The cluster without job ids (health needs no key: ids must not leak)."""
    if status is None:
        return None
    fields = ("name", "host", "gpu_model", "driver", "alive", "busy", "replaced")
    workers = {kind: [ClusterWorkerOut(**{f: w[f] for f in fields}) for w in status[kind]] for kind in ("gpus", "compile_workers")}
    queued = status["queued"]
    return ClusterOut(
        address=status["address"],
        **workers,
        queued={kind: sum(per_job.values()) for kind, per_job in queued.items()},
        jobs_waiting=len({job for per_job in queued.values() for job in per_job}),
    )


def cluster_status(request: Request) -> dict[str, Any] | None:
    cluster = getattr(request.app.state, "cluster", None)
    return cluster.status() if cluster is not None else None


@router.get("/health", response_model=HealthOut, summary="Service health (no API key needed)")
async def health(request: Request, response: Response) -> HealthOut:
    """`degraded` when the database does not answer, when no GPU can run jobs (they are refused with 503;
    `gpu_note` says why and what to do), when a configured GPU was not found, or when a Ray GPU worker is gone.
    HTTP 503 (with Retry-After) while the database does not answer: nothing can be served."""
    state = request.app.state
    database = await asyncio.to_thread(_ping, request)
    if database != "ok":
        response.status_code, response.headers["Retry-After"] = 503, "5"
    evaluation: Evaluation = state.evaluation
    cluster = _cluster(await asyncio.to_thread(cluster_status, request))
    ok = database == "ok" and evaluation.healthy and (cluster is None or all(g.alive for g in cluster.gpus))
    return HealthOut(
        status="ok" if ok else "degraded",
        database=database,
        running_jobs=len(state.runner.running()),
        max_running_jobs=state.settings.max_running_jobs,
        gpus_configured=state.gpu_pool.gpus,
        gpus_on_this_host=evaluation.gpus_found,
        remote_gpu_workers=state.settings.remote_gpus,
        busy_gpus=state.gpu_pool.busy(),
        gpus=state.gpu_pool.gpus,
        gpus_found=evaluation.gpus_found,
        evaluation=evaluation.kind,
        can_run_jobs=evaluation.can_run_jobs,
        gpu_note=evaluation.note,
        runner_id=state.runner.holder,
        draining=state.runner.draining,
        sandbox=getattr(state, "sandbox", ""),
        cluster=cluster,
    )


@router.get("/gpus", response_model=GpusOut, summary="The GPUs jobs run on and the queue in front of them", responses=responses(401, 403))
def gpus(request: Request, caller: Reader, session: SessionDep) -> GpusOut:
    """Local evaluation: this machine's configured GPUs and which are busy. Ray: every GPU worker of the cluster
    (model, host, busy, replacements) and the items waiting per job, the next job first; jobs the caller may not
    read are counted under `other`."""
    state = request.app.state
    evaluation: Evaluation = state.evaluation
    status = cluster_status(request)
    busy = set(state.gpu_pool.busy())
    local = [] if status is not None else [GpuOut(id=g, busy=g in busy) for g in state.gpu_pool.gpus]
    queue: dict[str, int] = {}
    if status is not None:
        waiting: dict[str, int] = {}
        for per_job in status["queued"].values():
            for job_id, n in per_job.items():
                waiting[job_id] = waiting.get(job_id, 0) + n
        visible = visible_job_ids(session, caller, [j for j in waiting if j])
        for job_id, n in waiting.items():
            key = job_id if job_id in visible else "other"
            queue[key] = queue.get(key, 0) + n
    return GpusOut(evaluation=evaluation.kind, gpus=local, cluster=_cluster(status), queue=queue)
