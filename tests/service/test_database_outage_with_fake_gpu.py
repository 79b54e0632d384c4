"""A database outage shorter than the lease with the REAL agent (issue 40, fault 2): LangGraph's PostgreSQL
checkpointer and the service's ledger on one database reached through a loopback TCP proxy that the test cuts while
the jobs' coder calls are at the model, then restores. Real nvcc compiles, FAKE GPU results
(tests/service/graph_app.py), the scripted OpenAI-compatible server as a slow FAKE model.

The checkpoint writes and ledger writes that meet the outage are tried again until the database answers: every job
finishes, none fails, and the model is not asked again for a call it already answered (no call re-paid)."""

from __future__ import annotations

import time
from collections import Counter

import httpx
import pytest

from tests.support import kernels as k
from tests.support.openai_stub import Reply, ScriptedOpenAI
from tests.support.tcp_proxy import TcpProxy

from .conftest import make_key, wait_status
from .test_service_with_graph import MODELS, graph_env

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
API = "/api/v1"
JOBS = 2


def _until(what: str, condition, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_database_outage_during_model_calls_fails_no_job_with_fake_gpu(db_url, server_factory, tmp_path, tmp_path_factory):
    headers = {"X-API-Key": make_key(db_url)}
    proxy = TcpProxy()
    with ScriptedOpenAI({}) as llm:
        llm.add(MODELS["planner"], *[k.plan("Grid")] * JOBS)
        llm.add(MODELS["coder"], *[Reply(k.reply(k.fast_kernel(1.5)), delay_s=3.0)] * JOBS)  # answered during the outage
        env = graph_env(tmp_path, llm, tmp_path_factory) | {
            "CUDAMASTER_SERVICE__DATABASE_URL": proxy.url(db_url),
            "CUDAMASTER_SERVICE__LEASE_SECONDS": "60",  # the outage is shorter than the lease
        }
        server = server_factory(factory="tests.service.graph_app:create_fake_gpu_app", **env)
        try:
            with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
                body = {"task": "vector_add", "precision": "fp32", "rounds": 1, "debug": 0}
                ids = [client.post(f"{API}/jobs", json=body).json()["id"] for _ in range(JOBS)]
                _until("every job's coder call reached the model", lambda: Counter(r.model for r in llm.requests)[MODELS["coder"]] == JOBS)
                proxy.cut()
                _until("a job's write met the outage", lambda: "trying again for up to" in server.log.read_text())
                proxy.restore()
                jobs = [wait_status(client, f"{API}/jobs/{j}", {}, {"finished", "no_correct_kernel", "failed"}, timeout=180) for j in ids]
        finally:
            server.stop()
            proxy.close()
        requests = Counter(r.model for r in llm.requests)
    log = server.log.read_text()
    assert [j["status"] for j in jobs] == ["finished"] * JOBS, [j["message"] for j in jobs]
    assert requests == {MODELS["planner"]: JOBS, MODELS["coder"]: JOBS}  # no call sent twice
    for job in jobs:
        assert Counter(c["status"] for c in job["llm_calls"]) == {"paid": 2}
    assert "Task exception was never retrieved" not in log, log[-3000:]
