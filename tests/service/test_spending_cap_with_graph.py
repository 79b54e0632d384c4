"""The spending cap holds across a kill -9 (issue 30, defect 4): the REAL agent behind a real uvicorn process,
the scripted OpenAI-compatible server billing like a real endpoint (prompts counted with tiktoken, answers cut
at `max_tokens`), real nvcc compiles, FAKE GPU results (tests/service/graph_app.py).

A call lost in flight counts at its recorded estimate (its prompt and the `max_tokens` it was sent with): after
the restart the job ends within its cap, and the "spent X of Y" of its message is its stored totals."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.support import kernels as k
from tests.support.openai_stub import Reply, ScriptedOpenAI

from .conftest import make_key, wait_status
from .test_service_with_graph import MODELS, start

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
API = "/api/v1"
CAP = 6000  # about six calls' prompts; the job's prompts are about 1,000 tokens each


def _wait_requests(llm: ScriptedOpenAI, count: int, server, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(llm.requests) < count:
        assert server.proc.poll() is None, server.log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"the FAKE model got {len(llm.requests)} requests, expected {count}"
        time.sleep(0.05)


def test_kill_9_with_a_call_in_flight_then_restart_ends_within_the_cap_with_fake_gpu(db_url, server_factory, tmp_path, tmp_path_factory):
    with ScriptedOpenAI({}, count_prompts=True) as llm:
        llm.add(MODELS["planner"], *[k.plan(f"Plan {i}") for i in range(4)])
        # The first coder call is held at the model (the kill catches it unanswered); the spares answer at once.
        llm.add(MODELS["coder"], Reply(k.reply(k.fast_kernel(1.5)), delay_s=60), *[k.reply(k.fast_kernel(2.0))] * 4)
        headers = {"X-API-Key": make_key(db_url)}
        first = start(server_factory, tmp_path, llm, tmp_path_factory)
        with httpx.Client(base_url=first.url, timeout=30) as client:
            body = {"task": "vector_add", "rounds": 3, "debug": 0, "spending_cap": {"tokens": CAP}}
            job_id = client.post(f"{API}/jobs", json=body, headers=headers).json()["id"]
            _wait_requests(llm, 2, first)  # the planner answered; the coder's request is with the model
            in_flight = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
        first.kill()
        sent = [c for c in in_flight["llm_calls"] if c["status"] == "sent"]
        assert len(sent) == 1 and sent[0]["output_tokens"] > 0  # recorded with the answer's bound, before the request

        second = start(server_factory, tmp_path, llm, tmp_path_factory)
        with httpx.Client(base_url=second.url, timeout=30) as client:
            job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "no_correct_kernel", "failed"}, timeout=240)
    totals = job["totals"]
    stored = totals["input_tokens"] + totals["output_tokens"]
    assert job["status"] in ("finished", "no_correct_kernel") and job["stop_reason"] == "spending_cap", job["message"]
    assert stored <= CAP  # what the job's ledger holds, the lost call at its estimate
    assert f"spent {stored} of {CAP} tokens" in job["message"]  # the message and the stored totals agree
    billed = llm.usage_totals()
    assert billed["input_tokens"] + billed["output_tokens"] <= CAP  # and what the endpoint answered stays within it
    assert sorted(c["status"] for c in job["llm_calls"]).count("lost_in_flight") == 1
