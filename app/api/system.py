"""Health: the database answers, the runner's load, the GPUs (found, configured, and whether jobs can run)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from sqlalchemy import text

from ..gpu import Evaluation
from ..schemas import HealthOut

router = APIRouter(tags=["system"])


def _ping(request: Request) -> str:
    try:
        with request.app.state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return f"error: {type(exc).__name__}: {exc}"[:300]


@router.get("/health", response_model=HealthOut, summary="Service health (no API key needed)")
async def health(request: Request) -> HealthOut:
    """`degraded` when the database does not answer, when no GPU can run jobs (they are refused with 503;
    `gpu_note` says why and what to do), or when a configured GPU was not found."""
    state = request.app.state
    database = await asyncio.to_thread(_ping, request)
    evaluation: Evaluation = state.evaluation
    ok = database == "ok" and evaluation.healthy
    return HealthOut(
        status="ok" if ok else "degraded",
        database=database,
        running_jobs=len(state.runner.running()),
        max_running_jobs=state.settings.max_running_jobs,
        gpus=state.gpu_pool.gpus,
        busy_gpus=state.gpu_pool.busy(),
        gpus_found=evaluation.gpus_found,
        evaluation=evaluation.kind,
        can_run_jobs=evaluation.can_run_jobs,
        gpu_note=evaluation.note,
        runner_id=state.runner.holder,
        draining=state.runner.draining,
        sandbox=getattr(state, "sandbox", ""),
    )
