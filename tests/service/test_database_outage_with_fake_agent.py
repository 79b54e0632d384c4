"""A database outage shorter than the lease (issue 40, fault 2), for real: a service process whose PostgreSQL is
reached through a loopback TCP proxy that the test cuts (every connection closed, new ones refused) and then
restores, with the FAKE agent and its slow FAKE model (tests/service/fake_agent.py) running several jobs.

While the database is away, the API answers 503 JSON with Retry-After (no traceback, no 500) and /health answers
503. Once it is back, every job finishes: none failed, none left running, no model call paid twice (each
request the model received is one paid call), and no "Task exception was never retrieved" in the log."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.support.tcp_proxy import TcpProxy

from .conftest import Server, make_key, wait_status
from .fake_agent import model_log

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
API = "/api/v1"
JOBS, ROUNDS = 4, 3


def _until(what: str, condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_database_outage_shorter_than_the_lease_fails_no_job_with_fake_agent(db_url, tmp_path):
    headers = {"X-API-Key": make_key(db_url)}
    proxy = TcpProxy()
    env = {
        "FAKE_AGENT_STEP_SECONDS": "0.3",
        "CUDAMASTER_SERVICE__LEASE_SECONDS": "60",  # the outage is shorter than the lease
        "CUDAMASTER_SERVICE__MAX_RUNNING_JOBS": str(JOBS),
    }
    server = Server(proxy.url(db_url), tmp_path, **env).start()
    state_dir = tmp_path / "fake-agent"
    try:
        with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
            ids = [client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": ROUNDS}).json()["id"] for _ in range(JOBS)]
            _until("every job made a model call", lambda: {r["job_id"] for r in model_log(state_dir)} == set(ids))
            proxy.cut()
            _until("health saw the outage", lambda: client.get(f"{API}/health").status_code == 503)
            answer = client.get(f"{API}/jobs/{ids[0]}")
            _until("a job waited on the database", lambda: ": storing its" in server.log.read_text())
            proxy.restore()
            jobs = [wait_status(client, f"{API}/jobs/{job_id}", {}, {"finished", "failed", "cancelled"}, timeout=120) for job_id in ids]
            health = client.get(f"{API}/health")
    finally:
        server.stop()
        proxy.close()
    log = server.log.read_text()
    assert answer.status_code == 503 and answer.headers["content-type"] == "application/json", answer.text
    assert int(answer.headers["Retry-After"]) > 0 and "database" in answer.json()["detail"]
    assert health.status_code == 200
    assert [j["status"] for j in jobs] == ["finished"] * JOBS, [j["message"] for j in jobs]
    assert "Task exception was never retrieved" not in log and "Traceback" not in log, log[-3000:]
    requests = model_log(state_dir)
    for job in jobs:
        paid = [c for c in job["llm_calls"] if c["status"] == "paid"]
        sent = [r for r in requests if r["job_id"] == job["id"]]
        assert len(paid) == ROUNDS and len(sent) == ROUNDS  # each call sent once and paid once: none re-paid
