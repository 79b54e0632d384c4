"""Figures for issue 40's faults, measured on this machine against PostgreSQL (127.0.0.1:5432), the real service
processes (uvicorn) and the FAKE agent with its slow FAKE model (tests/service/fake_agent.py: no GPU, no LLM):

(a) stalled replica: replica A is frozen (SIGSTOP) while a transaction holds a running job's row lock (a connection
    that took the lock and does nothing more: the frozen replica's open write); a job submitted to replica B then
    waits (seconds, and poll intervals) until B reports it running.
(b) database outage: 8 jobs running, the database cut for 10 s by a loopback TCP proxy between the service and
    PostgreSQL (every connection closed, new ones refused), then restored; how the jobs end. Twice: with the FAKE
    agent, and with the REAL agent (LangGraph's PostgreSQL checkpointer, real nvcc compiles, FAKE GPU results:
    tests/service/graph_app.py) whose 8 coder calls are at the scripted slow FAKE model when the outage begins.

    python scripts/fault_figures.py -o docs/results/fault_figures_<commit>.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_tasks.provenance import provenance
from tests.service.conftest import PG_BASE, Server, make_key
from tests.support.tcp_proxy import TcpProxy
from tests.support.workers import postgres_url

API = "/api/v1"
POLL_S = 0.5
OUTAGE_S = 10.0
JOBS = 8


def _schema() -> tuple[str, str]:
    plain = postgres_url(PG_BASE).replace("+psycopg", "")
    schema = "fig_" + uuid.uuid4().hex[:10]
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return schema, f"{postgres_url(PG_BASE)}?options=-csearch_path%3D{schema}"


def _drop(schema: str) -> None:
    with psycopg.connect(postgres_url(PG_BASE).replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _until(condition, timeout: float = 120) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise RuntimeError("timed out")
        time.sleep(0.01)
    return time.monotonic() - start


def _status(client: httpx.Client, job_id: str) -> str:
    r = client.get(f"{API}/jobs/{job_id}")
    return r.json()["status"] if r.status_code == 200 else f"http {r.status_code}"


def stalled_replica(tmp: Path) -> dict[str, Any]:
    """Replica A (one job at a time) runs job R; job X waits queued behind it. A transaction takes X's row lock and
    holds it (replica A frozen mid-claim), A is frozen (SIGSTOP), replica B starts; a job Y submitted to B: how long
    until B reports it running (B's claims see X first, oldest first)."""
    schema, db = _schema()
    env = {"CUDAMASTER_SERVICE__POLL_SECONDS": str(POLL_S), "CUDAMASTER_SERVICE__LEASE_SECONDS": "30", "FAKE_AGENT_STEP_SECONDS": "5"}
    headers = {"X-API-Key": make_key(db)}
    a = Server(db, _mkdir(tmp / "a"), CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="1", **env).start()
    try:
        with httpx.Client(base_url=a.url, timeout=30, headers=headers) as client:
            running = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 4}).json()["id"]
            _until(lambda: _status(client, running) == "running")
            locked = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}).json()["id"]
        frozen = psycopg.connect(db.replace("+psycopg", ""))
        frozen.execute("UPDATE jobs SET updated_at = updated_at WHERE id = %s", (locked,))  # the row lock, held open
        os.kill(a.proc.pid, signal.SIGSTOP)
        b = Server(db, _mkdir(tmp / "b"), CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="4", **env).start()
        try:
            with httpx.Client(base_url=b.url, timeout=30, headers=headers) as client:
                submitted = time.monotonic()
                queued = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}).json()["id"]
                accepted = time.monotonic() - submitted  # the submit's answer (201)
                _until(lambda: _status(client, queued) == "running")
                waited = time.monotonic() - submitted  # from the submit to B reporting the job running
                locked_status = _status(client, locked)
                cancel = client.post(f"{API}/jobs/{locked}/cancel")
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
            frozen.close()
            b.stop()
    finally:
        a.stop()
        _drop(schema)
    return {
        "poll_seconds": POLL_S,
        "locked_job_while_held": locked_status,
        "submit_answered_after_s": round(accepted, 3),
        "queued_job_running_after_s": round(waited, 3),
        "poll_intervals": round(waited / POLL_S, 2),
        "within_2_poll_intervals": waited <= 2 * POLL_S,
        "cancel_of_the_locked_job": {"status": cancel.status_code, "retry_after": cancel.headers.get("Retry-After")},
    }


def outage(tmp: Path) -> dict[str, Any]:
    schema, db = _schema()
    headers = {"X-API-Key": make_key(db)}
    proxy = TcpProxy()
    env = {
        "CUDAMASTER_SERVICE__LEASE_SECONDS": "30",
        "CUDAMASTER_SERVICE__MAX_RUNNING_JOBS": str(JOBS),
        "FAKE_AGENT_STEP_SECONDS": "1.0",
    }
    server = Server(proxy.url(db), tmp, **env).start()
    answers: dict[str, int] = {}
    try:
        with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
            ids = [client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 6}).json()["id"] for _ in range(JOBS)]
            _until(lambda: all(_status(client, j) == "running" for j in ids))
            proxy.cut()
            cut_at = time.monotonic()
            while time.monotonic() - cut_at < OUTAGE_S:
                code = client.get(f"{API}/health").status_code
                answers[str(code)] = answers.get(str(code), 0) + 1
                time.sleep(0.5)
            proxy.restore()
            _until(lambda: all(_status(client, j) in ("finished", "failed", "cancelled") for j in ids), timeout=300)
            jobs = [client.get(f"{API}/jobs/{j}").json() for j in ids]
    finally:
        server.stop()
        proxy.close()
        _drop(schema)
    log = server.log.read_text()
    statuses = [j["status"] for j in jobs]
    return {
        "jobs": JOBS,
        "outage_s": OUTAGE_S,
        "finished": statuses.count("finished"),
        "failed": statuses.count("failed"),
        "health_answers_during_outage": answers,
        "task_exception_never_retrieved": log.count("Task exception was never retrieved"),
        "tracebacks_in_log": log.count("Traceback"),
    }


def outage_with_graph(tmp: Path) -> dict[str, Any]:
    from tests.service.test_service_with_graph import MODELS
    from tests.support import kernels as k
    from tests.support.openai_stub import Reply, ScriptedOpenAI

    schema, db = _schema()
    headers = {"X-API-Key": make_key(db)}
    proxy = TcpProxy()
    with ScriptedOpenAI({}) as llm:
        llm.add(MODELS["planner"], *[k.plan("Grid")] * JOBS)
        llm.add(MODELS["coder"], *[Reply(k.reply(k.fast_kernel(1.5)), delay_s=3.0)] * JOBS)
        env = _graph_env(tmp, llm) | {
            "CUDAMASTER_SERVICE__LEASE_SECONDS": "30",
            "CUDAMASTER_SERVICE__MAX_RUNNING_JOBS": str(JOBS),
        }
        server = Server(proxy.url(db), tmp, factory="tests.service.graph_app:create_fake_gpu_app", **env).start()
        try:
            with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
                body = {"task": "vector_add", "precision": "fp32", "rounds": 1, "debug": 0}
                ids = [client.post(f"{API}/jobs", json=body).json()["id"] for _ in range(JOBS)]
                _until(lambda: sum(r.model == MODELS["coder"] for r in llm.requests) == JOBS, timeout=300)
                proxy.cut()
                time.sleep(OUTAGE_S)
                proxy.restore()
                _until(lambda: all(_status(client, j) in ("finished", "no_correct_kernel", "failed") for j in ids), timeout=300)
                jobs = [client.get(f"{API}/jobs/{j}").json() for j in ids]
        finally:
            server.stop()
            proxy.close()
            _drop(schema)
        sent = len(llm.requests)
    log = server.log.read_text()
    statuses = [j["status"] for j in jobs]
    return {
        "jobs": JOBS,
        "outage_s": OUTAGE_S,
        "finished": statuses.count("finished"),
        "failed": statuses.count("failed"),
        "model_requests": sent,
        "llm_calls_paid": sum(c["status"] == "paid" for j in jobs for c in j["llm_calls"]),
        "checkpoint_writes_retried": log.count(": its checkpoint: the database is unreachable"),
        "task_exception_never_retrieved": log.count("Task exception was never retrieved"),
    }


def _graph_env(tmp: Path, llm: Any) -> dict[str, str]:
    from tests.service.test_service_with_graph import MODELS, PRICES

    env = {
        "CUDAMASTER_AGENT__STATE_DIR": str(tmp / "agent-state"),
        "CUDAMASTER_AGENT__PRICES": json.dumps(PRICES),
        "CUDAMASTER_AGENT__BASE_URL": llm.base_url,
        "CUDAMASTER_AGENT__API_KEY": "test-key",
        "TEST_HARNESS_CACHE": str(tmp / "harness-cache"),
    }
    return env | {f"CUDAMASTER_AGENT__ROLES__{role.upper()}__MODEL": model for role, model in MODELS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        record = {
            **provenance(sys.argv),
            "machine": {"cores": os.cpu_count()},
            "agent": "real service processes, PostgreSQL; FAKE agent and FAKE model (tests/service/fake_agent.py), and for "
            "database_outage_real_agent the REAL agent with real nvcc compiles, FAKE GPU results and a scripted slow FAKE model",
            "stalled_replica": stalled_replica(Path(tmp) / "stall"),
            "database_outage": outage(_mkdir(Path(tmp) / "outage")),
            "database_outage_real_agent": outage_with_graph(_mkdir(Path(tmp) / "outage-graph")),
        }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    main()
