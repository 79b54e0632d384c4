"""Ray settings: the `ray` section of the settings tree (settings/tree.py), e.g. CUDAMASTER_RAY__ADDRESS=HEAD:6379.
Without an address, nothing here is used and the local evaluator runs every compile, evaluation and profile."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RaySettings(BaseModel):
    address: str | None = Field(
        None,
        description="the Ray cluster to run GPU work on (HOST:6379, ray://HOST:10001 or 'auto'); "
        "None: the local evaluator on this machine's GPUs",
    )
    namespace: str = Field("cudamaster", description="Ray namespace of this service's workers")
    compile_workers: int = Field(2, ge=0, description="CPU-only compile workers (1 CPU each; 0: the GPU workers compile too)")
    item_timeout_s: float = Field(
        3600.0,
        gt=0,
        description="a worker that holds one item longer than this is taken for hung: it is replaced and the item retried once elsewhere",
    )
    worker_start_timeout_s: float = Field(180.0, gt=0, description="how long a new worker may take to start")
    worker_evaluator: str = Field(
        "gpu.local:LocalEvaluator",
        description="module:Class each worker runs the items with (tests: gpu.fake:FakeGpuEvaluator)",
    )
    cache_dir: str | None = Field(None, description="the workers' compile and data cache on their machines; None: their own default")
