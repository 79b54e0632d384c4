"""Benchmark tasks a job can run."""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter

from bench_tasks import all_tasks

from ..schemas import TaskOut
from .deps import Reader
from .errors import responses

router = APIRouter(tags=["tasks"])


@cache
def _tasks() -> list[TaskOut]:
    return [
        TaskOut(
            name=t.name,
            category=t.category,
            summary=t.summary,
            precisions=list(t.prototypes),
            prototypes={p: proto.text for p, proto in t.prototypes.items()},
            sizes={k: [dict(s) for s in v] for k, v in t.sizes.items()},
        )
        for t in all_tasks()
    ]


@router.get("/tasks", response_model=list[TaskOut], summary="List the benchmark tasks (works without a GPU)", responses=responses(401, 403))
def list_tasks(_caller: Reader) -> list[TaskOut]:
    return _tasks()
