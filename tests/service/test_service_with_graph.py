"""End to end with the REAL agent (graph.runner, LangGraph checkpoints) behind a real uvicorn process:
the scripted OpenAI-compatible server (tests/support/openai_stub.py) answers the LLM calls, nvcc
compiles for real, the GPU results are FAKE (gpu.fake.FakeGpuEvaluator) except in the
`gpu`-marked test, which uses the real evaluator."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.support import kernels as k
from tests.support.openai_stub import ScriptedOpenAI
from tests.support.workers import compile_cache

from .conftest import make_key, read_sse, wait_status

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

API = "/api/v1"
MODELS = {"planner": "planner-model", "coder": "coder-model", "compiler": "compiler-model", "debugger": "debugger-model"}
PRICES = {m: {"input": 1.0, "output": 4.0} for m in MODELS.values()}


def graph_env(tmp_path, llm: ScriptedOpenAI | None, tmp_path_factory) -> dict[str, str]:
    env = {
        "CUDAMASTER_AGENT__STATE_DIR": str(tmp_path / "agent-state"),
        "CUDAMASTER_AGENT__PRICES": json.dumps(PRICES),
        "CUDAMASTER_AGENT__RETRY__INITIAL_INTERVAL_S": "0.01",
        "CUDAMASTER_AGENT__RETRY__JITTER": "false",
        "TEST_HARNESS_CACHE": str(compile_cache(tmp_path_factory)),  # the run's one cache, for all xdist workers
    }
    for role, model in MODELS.items():
        env[f"CUDAMASTER_AGENT__ROLES__{role.upper()}__MODEL"] = model
    if llm is not None:
        env |= {"CUDAMASTER_AGENT__BASE_URL": llm.base_url, "CUDAMASTER_AGENT__API_KEY": "test-key"}
    return env


def start(server_factory, tmp_path, llm, tmp_path_factory, factory="tests.service.graph_app:create_fake_gpu_app"):
    return server_factory(factory=factory, **graph_env(tmp_path, llm, tmp_path_factory))


def test_submit_events_finish_with_real_graph_and_fake_gpu(db_url, server_factory, tmp_path, llm, tmp_path_factory):
    llm.add(MODELS["planner"], k.plan("Grid"), k.plan("Vectorize"))
    llm.add(MODELS["coder"], k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5)))
    headers = {"X-API-Key": make_key(db_url)}
    server = start(server_factory, tmp_path, llm, tmp_path_factory)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "precision": "fp32", "rounds": 2, "debug": 1}, headers=headers)
        assert r.status_code == 201, r.text
        job_id = r.json()["id"]
        events = read_sse(client, f"{API}/jobs/{job_id}/events", headers, timeout=240)
        assert events[-1][1]["status"] == "finished", events[-3:]
        kinds = [kind for kind, _ in events]
        assert kinds.count("attempt") == 2 and kinds.count("llm_call") == 4 and "node" in kinds
        job = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
    assert job["status"] == "finished", job["message"]
    assert [a["attempt_key"] for a in job["attempts"]] == [f"{job_id}:r1:d0", f"{job_id}:r2:d0"]
    assert [a["verdict"] for a in job["attempts"]] == ["ok", "ok"]
    best = next(a for a in job["attempts"] if a["id"] == job["best_attempt_id"])
    assert best["score"] == 2.5 and job["best_score"] == 2.5
    assert len(best["measurements"]) == 5 and all(m["speedup"] == 2.5 for m in best["measurements"])
    assert best["measurements"][0]["baseline_median_us"] > 0 and best["measurements"][0]["candidate_roofline_pct"] > 0
    usage = llm.usage_totals()
    totals = job["totals"]
    assert (
        totals["llm_calls_count"] == 4
        and totals["input_tokens"] == usage["input_tokens"]
        and totals["output_tokens"] == usage["output_tokens"]
    )
    assert totals["cost_usd"] == pytest.approx((usage["input_tokens"] * 1.0 + usage["output_tokens"] * 4.0) / 1e6)
    assert {c["role"] for c in job["llm_calls"]} == {"planner", "coder"}


def test_manual_mode_answered_over_http_with_real_graph_and_fake_gpu(db_url, server_factory, tmp_path, tmp_path_factory):
    headers = {"X-API-Key": make_key(db_url)}
    server = start(server_factory, tmp_path, None, tmp_path_factory)  # no LLM endpoint: every role asks a person
    answers = {"planner": k.plan("Manual plan"), "coder": k.reply(k.fast_kernel(2.2))}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 0, "manual": True}, headers=headers)
        job_id = r.json()["id"]
        asked = []
        for _ in range(4):
            events = read_sse(client, f"{API}/jobs/{job_id}/events", headers, timeout=120)
            if events[-1][1]["status"] != "waiting_for_input":
                break
            job = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
            role = job["question"]["question"]["role"]
            asked.append(role)
            assert "prompt" in job["question"]["question"]  # the person sees what the model would have seen
            r = client.post(f"{API}/jobs/{job_id}/answer", json={"answer": answers[role]}, headers=headers)
            assert r.status_code == 200 and r.json()["status"] == "queued", r.text  # answered: back in the queue
        job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished"}, timeout=120)
    assert asked == ["planner", "coder"]
    assert job["best_score"] == 2.2 and [c["model"] for c in job["llm_calls"]] == ["manual", "manual"]


def test_cli_resume_finds_a_job_the_service_checkpointed_with_the_same_settings_with_fake_gpu(
    db_url, server_factory, tmp_path, tmp_path_factory
):
    """One checkpoint store (the settings tree's checkpoint_url) for the service and `cudamaster resume`."""
    headers = {"X-API-Key": make_key(db_url)}
    server = start(server_factory, tmp_path, None, tmp_path_factory)  # manual mode: the job stops at the planner's question
    with httpx.Client(base_url=server.url, timeout=30) as client:
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 0, "manual": True}, headers=headers)
        job_id = r.json()["id"]
        wait_status(client, f"{API}/jobs/{job_id}", headers, {"waiting_for_input"}, timeout=120)
    cli = subprocess.run(
        [sys.executable, "-m", "app.cli", "resume", job_id],
        env=server.env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "waiting_for_input" in cli.stdout and f"no job {job_id}" not in cli.stdout + cli.stderr, cli.stdout


def test_sigkill_mid_job_then_restart_finishes_without_loss_or_duplicates_with_fake_gpu(
    db_url, server_factory, tmp_path, llm, tmp_path_factory
):
    # Identical replies, with spares: a step re-run after the kill may ask the LLM again.
    llm.add(MODELS["planner"], *[k.plan("Grid")] * 8)
    llm.add(MODELS["coder"], *[k.reply(k.fast_kernel(1.5))] * 8)
    headers = {"X-API-Key": make_key(db_url)}
    first = start(server_factory, tmp_path, llm, tmp_path_factory)
    with httpx.Client(base_url=first.url, timeout=30) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 3, "debug": 0}, headers=headers).json()["id"]
        deadline = time.monotonic() + 180
        while client.get(f"{API}/jobs/{job_id}", headers=headers).json()["totals"]["attempts_count"] < 1:
            assert time.monotonic() < deadline, "no attempt before the deadline"
            time.sleep(0.1)
    first.kill()  # mid-job: round 1 stored, rounds 2-3 to go

    second = start(server_factory, tmp_path, llm, tmp_path_factory)
    with httpx.Client(base_url=second.url, timeout=30) as client:
        job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "failed"}, timeout=240)
        assert job["status"] == "finished", job["message"]
        keys = [a["attempt_key"] for a in job["attempts"]]
        assert keys == [f"{job_id}:r{r}:d0" for r in (1, 2, 3)]  # none lost, none twice
        # Every request the endpoint received is on record once: paid, or lost in flight (the kill caught it
        # unanswered; the step re-ran and paid for it again). A call is recorded `sent` before its request goes
        # out, so the kill may also leave a lost-in-flight record of a request that never left: at most those
        # records are more than the endpoint's requests.
        calls = job["llm_calls"]
        lost = sum(c["status"] == "lost_in_flight" for c in calls)
        assert len(calls) == len({c["call_key"] for c in calls}) == job["totals"]["llm_calls_count"]
        assert len(llm.requests) <= len(calls) <= len(llm.requests) + lost
        assert {c["status"] for c in calls} <= {"paid", "lost_in_flight"}
        assert sum(c["status"] == "paid" for c in calls) >= 6
        events = read_sse(client, f"{API}/jobs/{job_id}/events", headers)
        attempt_ids = [d["attempt_id"] for kind, d in events if kind == "attempt"]
        assert sorted(attempt_ids) == keys  # each attempt streamed once (order: as they were stored)


def _gpu_present() -> bool:
    from bench_tasks.harness import gpu_status

    return gpu_status()[0]


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_present(), reason="needs an NVIDIA GPU")
def test_submit_to_finish_with_real_gpu_and_fake_llm(db_url, server_factory, tmp_path, llm, tmp_path_factory):
    llm.add(MODELS["planner"], k.plan("Grid"))
    llm.add(MODELS["coder"], k.reply(k.fast_kernel()))
    headers = {"X-API-Key": make_key(db_url)}
    server = start(server_factory, tmp_path, llm, tmp_path_factory, factory="tests.service.graph_app:create_gpu_app")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        job_id = client.post(
            f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "debug": 0, "profile_mode": "none"}, headers=headers
        ).json()["id"]
        job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "no_correct_kernel", "failed"}, timeout=280)
    why = [(a["verdict"], a.get("message"), (a.get("compile_log") or "")[:800]) for a in job["attempts"]]
    assert job["status"] == "finished", (job["message"], why)
    best = next(a for a in job["attempts"] if a["id"] == job["best_attempt_id"])
    assert best["verdict"] == "ok" and best["measurements"] and all(m["candidate_median_us"] > 0 for m in best["measurements"])


SCALE_KERNEL = """// FAKE_SPEEDUP 2.0
__global__ void scale_fast(const float* X, float* Y, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) Y[i] = 2.0f * X[i];
}
extern "C" void scale_optimized(const float* X, float* Y, int N) { scale_fast<<<(N + 255) / 256, 256>>>(X, Y, N); }
"""


def test_custom_task_job_finishes_with_real_graph_and_fake_gpu(db_url, server_factory, tmp_path, llm, tmp_path_factory):
    from .test_api_with_fake_agent import CUSTOM

    llm.add(MODELS["planner"], k.plan("Grid"))
    llm.add(MODELS["coder"], k.reply(SCALE_KERNEL))
    headers = {"X-API-Key": make_key(db_url)}
    server = start(server_factory, tmp_path, llm, tmp_path_factory)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        r = client.post(f"{API}/jobs", json={"custom": CUSTOM, "precision": "fp32", "rounds": 1, "debug": 0}, headers=headers)
        assert r.status_code == 201, r.text
        job_id = r.json()["id"]
        events = read_sse(client, f"{API}/jobs/{job_id}/events", headers, timeout=240)
        assert events[-1][1]["status"] == "finished", events[-3:]
        job = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
    assert job["task"].startswith("ct_") and job["status"] == "finished", job["message"]
    assert [a["verdict"] for a in job["attempts"]] == ["ok"]
    assert job["best_score"] == 2.0
    prompt = " ".join(str(m) for req in llm.requests for m in req.body.get("messages", []))
    assert "scale_optimized" in prompt  # the coder was told the custom prototype
