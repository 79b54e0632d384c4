"""The commands with `--ray ADDRESS` (FAKE GPU results, real nvcc compiles on the compile workers): `bench run` spreads
the suite over every GPU worker of the cluster; `optimize` runs its job's GPU work there."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from app.cli import cli
from gpu.fake import FAKE_GPU
from tests.support import kernels as k
from tests.support.openai_stub import ScriptedOpenAI

pytestmark = [pytest.mark.timeout(600)]

REVERSE = """#include <cuda_runtime.h>
// FAKE_SPEEDUP 1.25
// RAY_TEST_BARRIER {barrier} 2
__global__ void rev(float* out, const float* in, int N) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = in[N - 1 - i];
}}
extern "C" void reverse_array_optimized(float* output, float* input, int N) {{
  if (N > 0) rev<<<(N + 255) / 256, 256>>>(output, input, N);
}}
"""


def test_bench_run_spreads_the_suite_over_all_gpus_of_the_cluster_with_fake_gpu(ray_address, tmp_path, monkeypatch):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    candidates = tmp_path / "candidates"
    candidates.mkdir()
    # Each evaluation waits until two run at once: on one GPU worker the suite could not pass this point.
    (candidates / "vector_add.cu").write_text(k.fast_kernel(2.0) + f"\n// RAY_TEST_BARRIER {barrier} 2\n")
    (candidates / "reverse_array.cu").write_text(REVERSE.format(barrier=barrier))
    monkeypatch.setenv("CUDAMASTER_RAY__WORKER_EVALUATOR", "tests.cluster.fakes:DyingFakeGpuEvaluator")
    monkeypatch.setenv("CUDAMASTER_RAY__COMPILE_WORKERS", "1")
    out = tmp_path / "suite.json"
    result = CliRunner().invoke(
        cli,
        [
            "bench",
            "run",
            "--ray",
            ray_address,
            "-t",
            "vector_add",
            "-t",
            "reverse_array",
            "-p",
            "fp32",
            "--candidates",
            str(candidates),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["ray"] == {"address": ray_address, "gpu_model": FAKE_GPU.name, "gpu_workers": 2}
    scores = {r["task"]: r["score"] for r in doc["results"]}
    assert scores == {"vector_add": 2.0, "reverse_array": 1.25}  # each variant once, nothing lost or repeated
    assert all(r["gpu"]["name"] == FAKE_GPU.name and r["gpu"]["host"] for r in doc["results"])
    assert len({p.name.split("-")[1] for p in barrier.glob("at-*")}) == 2  # two worker processes at once


def test_optimize_runs_its_job_on_the_cluster_with_fake_gpu(ray_address, tmp_path, monkeypatch):
    llm = ScriptedOpenAI({})
    llm.start()
    try:
        llm.add("planner-model", k.plan("Grid stride"))
        llm.add("coder-model", k.reply(k.fast_kernel(1.7)))
        for key, value in {
            "AGENT__BASE_URL": llm.base_url,
            "AGENT__API_KEY": "k",
            "AGENT__STATE_DIR": str(tmp_path / "state"),
            "RAY__WORKER_EVALUATOR": "gpu.fake:FakeGpuEvaluator",
            "RAY__COMPILE_WORKERS": "1",
        }.items():
            monkeypatch.setenv(f"CUDAMASTER_{key}", value)
        result = CliRunner().invoke(
            cli,
            [
                "optimize",
                "vector_add",
                "--precision",
                "fp32",
                "--rounds",
                "1",
                "--debug",
                "0",
                "--model",
                "planner=planner-model",
                "--model",
                "coder=coder-model",
                "--job-id",
                "rayjob",
                "--checkpoint-url",
                f"sqlite:///{tmp_path / 'c.db'}",
                "--ray",
                ray_address,
            ],
        )
    finally:
        llm.stop()
    assert result.exit_code == 0, result.output
    assert "2 GPU worker(s)" in result.output and "1.700" in result.output and "finished" in result.output
