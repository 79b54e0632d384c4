"""`cudamaster keys create` / `serve`, the per-key job limit, and a clean shutdown (SIGTERM) that drains
running jobs to a checkpoint and resumes them at the next start — with the FAKE agent."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from . import conftest as service_conftest
from .conftest import REPO, make_key, serve_cli, wait_status
from .conftest import free_port as _free_port

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

    proc, url = serve_cli(env | {"CUDAMASTER_SERVICE__GPUS": '["0","1"]'}, tmp_path / "serve.log", "--log-level", "warning")
    try:
        health = httpx.get(f"{url}{API}/health", timeout=30)
        assert health.json()["gpus"] == ["0", "1"]
        r = httpx.get(f"{url}{API}/jobs", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200 and r.json()["total"] == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert (tmp_path / "cli.db").exists()


class _Impostor(http.server.BaseHTTPRequestHandler):
    """Another test's server on the same port: answers every GET with 200 (so /health looks fine)."""

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}')

    def log_message(self, *args):
        pass


def test_serve_whose_port_another_server_took_is_retried_on_a_new_port(tmp_path, monkeypatch):
    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    taken = impostor.server_address[1]
    ports = iter([taken])
    monkeypatch.setattr(service_conftest, "free_port", lambda: next(ports, None) or _free_port())
    env = {**os.environ, "CUDAMASTER_SERVICE__DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"}
    try:
        proc, url = serve_cli(env, tmp_path / "serve.log", "--log-level", "warning")
        try:
            assert url != f"http://127.0.0.1:{taken}" and "was taken" in (tmp_path / "serve.log").read_text()
            assert httpx.get(f"{url}{API}/health", timeout=30).json()["database"] == "ok"  # the impostor has no database
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    finally:
        impostor.shutdown()


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
