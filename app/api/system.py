"""Health: the database answers, the runner's load, the GPUs."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from sqlalchemy import text

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
    state = request.app.state
    database = await asyncio.to_thread(_ping, request)
    return HealthOut(status="ok" if database == "ok" else "degraded", database=database, running_jobs=len(state.runner.running()),
                     max_running_jobs=state.settings.max_running_jobs, gpus=state.gpu_pool.gpus, busy_gpus=state.gpu_pool.busy(),
                     runner_id=state.runner.holder, draining=state.runner.draining, sandbox=getattr(state, "sandbox", ""))
