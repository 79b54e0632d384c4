"""`cudamaster keys create` / `serve`, the per-key job limit, and a clean shutdown (SIGTERM) that drains
running jobs to a checkpoint and resumes them at the next start — with the FAKE agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from .conftest import REPO, free_port, make_key, wait_status

pytestmark = pytest.mark.timeout(180)
API = "/api/v1"


def test_keys_create_and_serve_cli(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = {**os.environ, "CUDAMASTER_SERVICE__DATABASE_URL": db_url}
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "keys", "create", "--name", "team-a"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    key = out.stdout.strip().splitlines()[-1]
    assert key.startswith("cm_")
    listed = subprocess.run(
        [sys.executable, "-m", "app.cli", "keys", "list"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert "team-a" in listed.stdout and "active" in listed.stdout

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=REPO,
        env=env | {"CUDAMASTER_SERVICE__GPUS": '["0","1"]'},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}{API}/health", timeout=2)
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.poll() is not None else "timeout"
                time.sleep(0.3)
        assert health.json()["gpus"] == ["0", "1"]
        r = httpx.get(f"http://127.0.0.1:{port}{API}/jobs", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200 and r.json()["total"] == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert (tmp_path / "cli.db").exists()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_jobs_in_flight_per_key_limit_with_fake_agent(db_url, server_factory):
    key, other = make_key(db_url, "a"), make_key(db_url, "b")
    server = server_factory(CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY="2", FAKE_AGENT_STEP_SECONDS="2")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        body = {"task": "vector_add", "rounds": 3}
        ids = [client.post(f"{API}/jobs", json=body, headers={"X-API-Key": key}).json()["id"] for _ in range(2)]
        r = client.post(f"{API}/jobs", json=body, headers={"X-API-Key": key})
        assert r.status_code == 429 and "MAX_JOBS_IN_FLIGHT_PER_KEY" in r.json()["detail"]
        r = client.post(f"{API}/jobs", json=body, headers={"X-API-Key": other})
        assert r.status_code == 201 and r.json()["id"] not in ids, r.text  # limits are per key
        client.post(f"{API}/jobs/{ids[0]}/cancel", headers={"X-API-Key": key})
        wait_status(client, f"{API}/jobs/{ids[0]}", {"X-API-Key": key}, {"cancelled"})
        r = client.post(f"{API}/jobs", json=body, headers={"X-API-Key": key})
        assert r.status_code == 201 and r.json()["id"] not in ids and r.json()["status"] == "queued", r.text


def test_sigterm_drains_to_checkpoint_and_next_start_resumes_with_fake_agent(db_url, server_factory):
    key = make_key(db_url)
    headers = {"X-API-Key": key}
    first = server_factory(FAKE_AGENT_STEP_SECONDS="0.5", CUDAMASTER_SERVICE__LEASE_SECONDS="600")  # a crash would block for 10 min
    with httpx.Client(base_url=first.url, timeout=30) as client:
        job_id = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 5}, headers=headers).json()["id"]
        deadline = time.monotonic() + 60
        while client.get(f"{API}/jobs/{job_id}", headers=headers).json()["totals"]["attempts_count"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    first.stop()  # SIGTERM: drain
    assert first.proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM after its clean shutdown
    second = server_factory(FAKE_AGENT_STEP_SECONDS="0.1", CUDAMASTER_SERVICE__LEASE_SECONDS="600")
    with httpx.Client(base_url=second.url, timeout=30) as client:
        mid = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
        assert mid["status"] in ("running", "finished")  # lease released at shutdown: taken at once, not after 600 s
        job = wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished"}, timeout=60)
    assert [a["round"] for a in job["attempts"]] == [1, 2, 3, 4, 5]
