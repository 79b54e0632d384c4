"""Stored jobs for the export tests (issue 41) and the device script (scripts/device_export.py): six variants,
an elementwise op, a reduction, a GEMM, a sparse op, a stencil and a custom task, FP32 and BF16 both present.

Each job's best attempt is a real kernel (from the honest corpus, a BF16 twin, or for the custom task a
grid-stride rewrite of its baseline), stored the way the runner stores the agent's events (app/store/events.py).
Its evaluation is what the caller gives: the real harness's on the device, a FAKE one in CI."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from app.db.models import FINISHED, CustomTask, Job
from app.db.types import utcnow
from app.store import jobs as store
from app.store.events import record_event
from graph.contract import AttemptEvent, LlmCallEvent

TESTS = Path(__file__).resolve().parents[1]

CUSTOM_NAME = "scale_add"
CUSTOM_SPEC = {
    "prototype": 'extern "C" void scale_add(const float* X, float* Y, float a, int N)',
    "args": {
        "X": {"role": "input", "length": "N", "draw": "uniform(-1, 1)"},
        "Y": {"role": "output", "length": "N"},
        "a": {"role": "scalar", "value": "1.5"},
        "N": {"role": "scalar", "value": "N"},
    },
    "sizes": [{"N": 4096}, {"N": 1 << 20}, {"N": 1 << 24}],
}
CUSTOM_BASELINE = """#include <cuda_runtime.h>
// The team's own kernel: one block of 256 threads, block-stride loop.
__global__ void scale_add_kernel(const float* X, float* Y, float a, int N) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) Y[i] = a * X[i] + 1.0f;
}
extern "C" void scale_add(const float* X, float* Y, float a, int N) {
  scale_add_kernel<<<1, 256>>>(X, Y, a, N);
  cudaDeviceSynchronize();
}
"""
CUSTOM_KERNEL = """#include <cuda_runtime.h>
// Grid-stride rewrite: enough blocks to fill the GPU; a helper kernel with the baseline's own name (kept local).
__global__ void scale_add_kernel(const float* __restrict__ X, float* __restrict__ Y, float a, int N) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) Y[i] = a * X[i] + 1.0f;
}
extern "C" void scale_add_optimized(const float* X, float* Y, float a, int N) {
  int blocks = (N + 255) / 256;
  scale_add_kernel<<<blocks < 4096 ? blocks : 4096, 256>>>(X, Y, a, N);
}
"""


@dataclass(frozen=True)
class Case:
    name: str  # what the variant stands for
    task: str  # a benchmark task, or CUSTOM_NAME
    precision: str
    kernel: str  # path under tests/, or "" for the custom kernel

    def source(self) -> str:
        return CUSTOM_KERNEL if not self.kernel else (TESTS / self.kernel).read_text()


CASES = (
    Case("elementwise", "vector_add", "fp32", "bench/honest/vector_add/fp32_float4.cu"),
    Case("reduction", "dot_product", "bf16", "bench/honest/dot_product/bf16_bf162_loads.cu"),
    Case("gemm", "matrix_mul", "fp32", "bench/honest/matrix_mul/fp32_tiled_template.cu"),
    Case("sparse", "spmv_coo", "bf16", "bench/honest/spmv_coo/bf16_launch_baseline_kernel.cu"),
    Case("stencil", "stencil_2d", "bf16", "bench/bf16_twins/stencil_2d.cu"),
    Case("custom", CUSTOM_NAME, "fp32", ""),
)


def store_custom_task(session: Session, api_key_id: str | None) -> str:
    """The custom task's row (as app/custom_tasks.store writes it, without building its baseline here)."""
    row = CustomTask(
        id="ct_" + secrets.token_hex(8),
        api_key_id=api_key_id,
        name=CUSTOM_NAME,
        precision="fp32",
        spec=CUSTOM_SPEC,
        baseline_source=CUSTOM_BASELINE,
        created_at=utcnow(),
    )
    session.add(row)
    session.commit()
    return row.id


def fake_evaluation(task: str, precision: str, sizes: list[dict[str, int]]) -> dict[str, Any]:
    """A FAKE EvaluationResult-shaped document: made-up times on a made-up H100, the task's sizes."""
    rows = [
        {
            "params": p,
            "complexity": 1,
            "passed": True,
            "baseline": {"median_us": 20.0 + i, "iqr_us": 0.1, "min_us": 20.0, "samples": 20, "wall_median_us": 21.0},
            "candidate": {"median_us": 10.0 + i, "iqr_us": 0.1, "min_us": 10.0, "samples": 20, "wall_median_us": 11.0},
            "speedup": (20.0 + i) / (10.0 + i),
            "roofline_floor_us": 5.0,
            "candidate_roofline_pct": 50.0,
        }
        for i, p in enumerate(sizes)
    ]
    gpu = {"name": "FAKE NVIDIA H100 80GB HBM3", "driver_version": "999.99", "runtime_version": "13.0", "compute_capability": "9.0"}
    return {"task": task, "precision": precision, "verdict": "ok", "rows": rows, "score": 1.5, "gpu": gpu, "nvcc_version": "FAKE 13.0"}


def store_job(
    session: Session, *, task: str, precision: str, source: str, evaluation: dict[str, Any], api_key_id: str | None, team: str
) -> Job:
    """A finished job with one LLM call, one wrong attempt and one correct attempt (its best), stored through the events."""
    job = store.create_job(session, task=task, precision=precision, settings={"task": task, "rounds": 1}, api_key_id=api_key_id, team=team)
    record_event(
        session,
        job.id,
        LlmCallEvent(
            job_id=job.id,
            call_id=f"{job.id}-c1",
            round=1,
            role="coder",
            model="export-model",
            status="paid",
            input_tokens=1200,
            output_tokens=340,
            cost_usd=0.02,
        ),
    )
    record_event(
        session,
        job.id,
        AttemptEvent(
            job_id=job.id,
            round=1,
            attempt_id=f"{job.id}-r1-d0",
            debug_step=0,
            role="coder",
            strategy="first try",
            source="// wrong\n",
            verdict="wrong_answer",
            message="y[3] differs",
            evaluation=None,
        ),
    )
    record_event(
        session,
        job.id,
        AttemptEvent(
            job_id=job.id,
            round=1,
            attempt_id=f"{job.id}-r1-d1",
            debug_step=1,
            role="debugger",
            strategy="fixed",
            source=source,
            verdict="ok",
            score=evaluation.get("score"),
            evaluation=evaluation,
        ),
    )
    job = session.get(Job, job.id)
    assert job is not None and job.best_attempt_id is not None, "the correct attempt became the job's best"
    job.status = FINISHED
    session.commit()
    return job
