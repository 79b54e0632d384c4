"""The service on a Ray cluster (CUDAMASTER_RAY__ADDRESS; local cluster with two GPUs declared, FAKE GPU results,
real nvcc compiles, the real agent with a scripted LLM): two jobs at once run end to end through the cluster's
workers, their attempts record the GPU model, and /health and /gpus show the cluster."""

from __future__ import annotations

import httpx
import pytest

from gpu.fake import FAKE_GPU
from tests.support import kernels as k
from tests.support.workers import compile_cache

from .conftest import make_key, wait_status
from .test_service_with_graph import MODELS, graph_env  # the scripted LLM fixture `llm` is in conftest.py

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

API = "/api/v1"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_jobs_run_end_to_end_on_the_ray_cluster_with_fake_gpu(
    ray_address,
    db_url,
    server_factory,
    tmp_path,
    llm,
    tmp_path_factory,
):
    llm.add(MODELS["planner"], *[k.plan("Grid")] * 4)
    llm.add(
        MODELS["coder"], k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5)), k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5))
    )
    headers = {"X-API-Key": make_key(db_url)}
    env = graph_env(tmp_path, llm, tmp_path_factory) | {
        "CUDAMASTER_RAY__ADDRESS": ray_address,
        "CUDAMASTER_RAY__WORKER_EVALUATOR": "gpu.fake:FakeGpuEvaluator",
        "CUDAMASTER_RAY__COMPILE_WORKERS": "1",
        "CUDAMASTER_RAY__CACHE_DIR": str(compile_cache(tmp_path_factory)),  # the run's one cache: the runtime and baseline built once
    }
    server = server_factory(factory="app.main:create_app", **env)  # the service's own start-up: Ray from the settings
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get(f"{API}/health").json()
        assert health["evaluation"] == "ray" and health["can_run_jobs"]
        assert [g["gpu_model"] for g in health["cluster"]["gpus"]] == [FAKE_GPU.name] * 2
        assert len(health["cluster"]["compile_workers"]) == 1 and "job_id" not in health["cluster"]["gpus"][0]
        ids = [
            client.post(f"{API}/jobs", json={"task": "vector_add", "precision": "fp32", "rounds": 2, "debug": 0}, headers=headers).json()[
                "id"
            ]
            for _ in range(2)
        ]
        jobs = [wait_status(client, f"{API}/jobs/{i}", headers, {"finished", "failed", "no_correct_kernel"}, timeout=400) for i in ids]
        gpus = client.get(f"{API}/gpus", headers=headers)
        assert client.get(f"{API}/gpus").status_code == 401
    for job in jobs:
        assert job["status"] == "finished", job["message"]
        assert [a["verdict"] for a in job["attempts"]] == ["ok", "ok"]
        assert {a["gpu_model"] for a in job["attempts"]} == {FAKE_GPU.name}
        assert all(m["gpu_model"] == FAKE_GPU.name for a in job["attempts"] for m in a["measurements"])
    # The two jobs share the scripted replies in whatever order they ask: every reply became one attempt.
    assert sorted(a["score"] for job in jobs for a in job["attempts"]) == [1.5, 1.5, 2.5, 2.5]
    assert gpus.status_code == 200 and gpus.json()["evaluation"] == "ray" and gpus.json()["queue"] == {}
    assert len(gpus.json()["cluster"]["gpus"]) == 2
