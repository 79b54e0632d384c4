"""The service on a machine without a GPU: /health says so, a job is refused at submit with what to do
(not accepted and failed 10 s later), reads keep working, and expected conditions (no GPU, a missing
database) print one line, not a traceback.

The servers here run the REAL app (no injected evaluator). What nvidia-smi reports is made certain
with a FAKE nvidia-smi put first on PATH, so these tests say the same on a GPU machine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from app.evaluation import plan_evaluation
from gpu.inventory import GpuInventory, detect_gpus

from .conftest import PG_BASE, REPO, _postgres_up, free_port, make_key, serve_cli
from .test_api_with_fake_agent import CUSTOM

pytestmark = pytest.mark.timeout(240)
API = "/api/v1"
NO_DEVICE = '#!/bin/sh\necho "No devices were found"\nexit 6\n'
TWO_GPUS = '#!/bin/sh\nprintf "0, GPU-11111111-aaaa, NVIDIA H200\\n1, GPU-22222222-bbbb, NVIDIA H200\\n"\n'


def fake_nvidia_smi(tmp_path: Path, script: str | None) -> str:
    """A PATH whose nvidia-smi is the FAKE `script` (None: no nvidia-smi at all), then the usual tools."""
    bin_dir = tmp_path / f"fake-bin-{uuid.uuid4().hex[:6]}"
    bin_dir.mkdir()
    if script is not None:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(script)
        smi.chmod(0o755)
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "nvidia-smi").exists()]
    return os.pathsep.join([str(bin_dir), *kept])


def test_detect_gpus_reads_a_fake_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path, TWO_GPUS))
    two = detect_gpus()
    assert two.indexes == ["0", "1"] and two.uuids == ["GPU-11111111-aaaa", "GPU-22222222-bbbb"] and "NVIDIA H200" in two.note
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path, NO_DEVICE))
    none = detect_gpus()
    assert none.indexes == [] and "No devices were found" in none.note
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path, None))
    absent = detect_gpus()
    assert absent.indexes == [] and "nvidia-smi is not installed" in absent.note


def test_plan_evaluation_decides_where_jobs_run():
    two = GpuInventory(["0", "1"], ["GPU-a", "GPU-b"], ["H200", "H200"], "found GPU 0 (H200), GPU 1 (H200)")
    none = GpuInventory(note="no GPU found: nvidia-smi is not installed")
    local = plan_evaluation(["0", "1"], 0, False, two)
    assert local.kind == "local_gpus" and local.can_run_jobs and local.healthy
    by_uuid = plan_evaluation(["GPU-b"], 0, False, two)
    assert by_uuid.kind == "local_gpus" and by_uuid.gpus_missing == []
    partly = plan_evaluation(["0", "3"], 0, False, two)
    assert partly.can_run_jobs and not partly.healthy and partly.gpus_missing == ["3"] and "CUDAMASTER_SERVICE__GPUS" in partly.note
    wrong = plan_evaluation(["5"], 0, False, two)
    assert wrong.kind == "none" and "CUDAMASTER_SERVICE__GPUS" in wrong.note
    nothing = plan_evaluation(["0"], 0, False, none)
    assert nothing.kind == "none" and not nothing.can_run_jobs and "CUDAMASTER_SERVICE__REMOTE_GPUS" in nothing.note
    remote = plan_evaluation(["0"], 2, False, none)
    assert remote.kind == "remote_gpus" and remote.can_run_jobs
    injected = plan_evaluation(["0"], 0, True, none)
    assert injected.kind == "injected" and injected.healthy


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_without_a_gpu_jobs_are_refused_at_submit_and_reads_work_with_fake_nvidia_smi(db_url, server_factory, tmp_path):
    from app.db.engine import make_engine, make_sessionmaker
    from app.store.jobs import create_job

    key = {"X-API-Key": make_key(db_url)}
    engine = make_engine(db_url)  # a job stored before (e.g. by a GPU replica): readable here
    with make_sessionmaker(engine)() as session:
        stored = create_job(
            session, task="vector_add", precision="fp32", settings={"task": "vector_add"}, api_key_id=key["X-API-Key"].split("_")[1]
        ).id
    engine.dispose()
    server = server_factory(factory="tests.service.graph_app:create_gpu_app", PATH=fake_nvidia_smi(tmp_path, NO_DEVICE))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get(f"{API}/health").json()
        assert health["status"] == "degraded" and health["database"] == "ok"
        assert health["gpus_found"] == [] and health["gpus"] == ["0"] and health["evaluation"] == "none"
        assert health["can_run_jobs"] is False and "No devices were found" in health["gpu_note"]
        for body in ({"task": "vector_add"}, {"custom": CUSTOM}):
            r = client.post(f"{API}/jobs", json=body, headers=key)
            assert r.status_code == 503, r.text
            assert "GPU machine" in r.json()["detail"] and "CUDAMASTER_SERVICE__REMOTE_GPUS" in r.json()["detail"]
        r = client.post(f"{API}/campaigns", json={"selection": {"category": "loss"}}, headers=key)
        assert r.status_code == 503 and "GPU machine" in r.json()["detail"]
        r = client.get(f"{API}/tasks", headers=key)
        assert r.status_code == 200 and "vector_add" in r.text  # the task list reads without a GPU
        page = client.get(f"{API}/jobs", headers=key).json()
        assert [j["id"] for j in page["items"]] == [stored] and page["items"][0]["status"] == "queued"  # never claimed here
        r = client.post(f"{API}/jobs/{stored}/cancel", headers=key)
        assert r.status_code == 200 and r.json()["id"] == stored and r.json()["status"] == "cancelled", r.text  # never claimed: at once
        assert client.post(f"{API}/jobs/{stored}/resume", headers=key).status_code == 503
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log and "No devices were found" in log


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_with_the_configured_gpus_found_health_is_ok_with_fake_nvidia_smi(db_url, server_factory, tmp_path):
    server = server_factory(
        factory="tests.service.graph_app:create_gpu_app", PATH=fake_nvidia_smi(tmp_path, TWO_GPUS), CUDAMASTER_SERVICE__GPUS='["0", "1"]'
    )
    health = httpx.get(f"{server.url}{API}/health", timeout=30).json()
    assert health["status"] == "ok" and health["evaluation"] == "local_gpus" and health["can_run_jobs"] is True
    assert health["gpus_found"] == ["0", "1"] and "NVIDIA H200" in health["gpu_note"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_a_missing_postgresql_database_is_one_line_not_a_traceback():
    why = _postgres_up()
    if why:
        pytest.skip(why)
    url = PG_BASE.rsplit("/", 1)[0] + f"/cm_missing_{uuid.uuid4().hex[:8]}"
    for args in (
        ("serve", "--database-url", url, "--port", str(free_port())),
        ("keys", "create", "--name", "x", "--database-url", url),
        ("keys", "list", "--database-url", url),
    ):
        out = run_cli(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in out.stderr + out.stdout, out.stderr
        assert "does not exist" in lines[0] and "createdb" in lines[0] and "--database-url" in lines[0]


@pytest.mark.slow
def test_serve_without_a_gpu_says_so_in_one_line_and_runs(tmp_path):
    env = {**os.environ, "CUDAMASTER_SERVICE__DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}", "PATH": fake_nvidia_smi(tmp_path, None)}
    log = tmp_path / "serve.log"
    proc, url = serve_cli(env, log, "--log-level", "warning", wait_s=90)
    try:
        health = httpx.get(f"{url}{API}/health", timeout=30).json()
        assert health["status"] == "degraded" and health["can_run_jobs"] is False
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    output = log.read_text()
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "nvidia-smi is not installed" in line] != []
