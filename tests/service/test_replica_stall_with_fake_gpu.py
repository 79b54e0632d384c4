"""A stalled replica after a takeover (issue 30, defect 6), for real: two service processes on one PostgreSQL
database, the REAL agent, real nvcc compiles, FAKE GPU results (tests/service/graph_app.py) and the scripted
OpenAI-compatible server as a slow FAKE model that logs every request (tests/support/openai_stub.py).

Replica A runs a job; while its coder call is held at the model, A is stopped with SIGSTOP for longer than its
lease (until replica B has taken the job over and re-sent that call), then woken with SIGCONT while B's own call
is at the model. What must hold, trial after trial (bounded by count):

- Paid calls. The request A had in flight left A before the stall: the model received it, and B, which cannot
  know whether it was answered, re-sends it (the issue allows this; B counts A's call at its recorded estimate).
  What must not happen is A's answer being *paid* too: the observable is the job's ledger, where each call
  (call id) has exactly one `paid` record and A's send stays `lost_in_flight` (B marked it so at its claim; A's
  `paid` write after waking is fenced off by its lost lease). The model sees exactly one request per call plus
  the one re-send, and none from A after it woke (A checks its lease before any call).
- The checkpoint history is linear: no two checkpoints of the job share a parent or a step.
- No event from A after the takeover: the job has one `finished` event, B's, with status `finished`, and it
  finishes once.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import httpx
import pytest
from sqlalchemy import text

from app.db.engine import make_engine
from tests.support import kernels as k
from tests.support.openai_stub import Reply, ScriptedOpenAI

from .conftest import make_key, wait_status
from .test_service_with_graph import MODELS, start

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
API = "/api/v1"
TRIALS = 2
A_CALL_S = 2.0  # A's coder call is held this long: answered while A is stopped
B_CALL_S = 3.0  # B's re-send is held this long: still at the model when A wakes


def _until(what: str, condition, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def _checkpoints(db_url: str, job_id: str) -> list[tuple[str, str | None, int]]:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT checkpoint_id, parent_checkpoint_id, (metadata->>'step')::int FROM checkpoints "
                    "WHERE thread_id LIKE :job AND checkpoint_ns = ''"
                ),
                {"job": f"%{job_id}%"},
            ).all()
        return [(r[0], r[1], r[2]) for r in rows]
    finally:
        engine.dispose()


def _events(db_url: str, job_id: str) -> list[tuple[str, dict]]:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT type, payload FROM job_events WHERE job_id = :job ORDER BY id"), {"job": job_id}).all()
        return [(r[0], r[1]) for r in rows]
    finally:
        engine.dispose()


def _one_trial(db_url, server_factory, tmp_path, tmp_path_factory, headers) -> None:
    with ScriptedOpenAI({}) as llm:
        llm.add(MODELS["planner"], k.plan("Grid"), k.plan("Vectorize"))
        llm.add(
            MODELS["coder"],
            Reply(k.reply(k.fast_kernel(1.5)), delay_s=A_CALL_S),  # A's call, in flight at the stall
            Reply(k.reply(k.fast_kernel(1.5)), delay_s=B_CALL_S),  # B's re-send of it
            k.reply(k.fast_kernel(2.0)),
        )
        a = start(server_factory, tmp_path, llm, tmp_path_factory)
        client = httpx.Client(timeout=30, headers=headers)
        body = {"task": "vector_add", "precision": "fp32", "rounds": 2, "debug": 0}
        job_id = client.post(f"{a.url}{API}/jobs", json=body).json()["id"]
        job = wait_status(client, f"{a.url}{API}/jobs/{job_id}", {}, {"running"})
        b = start(server_factory, tmp_path, llm, tmp_path_factory)  # the job is A's: B waits for its lease to end
        assert a.proc is not None and b.proc is not None
        try:
            _until("A's coder call reached the model", lambda: len(llm.requests) == 2)
            os.kill(a.proc.pid, signal.SIGSTOP)
            _until("B took the job over and re-sent the call", lambda: len(llm.requests) == 3)
            job = client.get(f"{b.url}{API}/jobs/{job_id}").json()
            assert job["lease_holder"] is not None
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
        job = wait_status(client, f"{b.url}{API}/jobs/{job_id}", {}, {"finished", "no_correct_kernel", "failed"}, timeout=120)
        _until("A ended its run", lambda: client.get(f"{a.url}{API}/health").json()["running_jobs"] == 0)
        assert a.proc.poll() is None, "replica A died"
        log_a = a.log.read_text()
        client.close()
        requests = Counter(r.model for r in llm.requests)
        checkpoints = _checkpoints(db_url, job_id)
        events = _events(db_url, job_id)
        a.stop()
        b.stop()

    assert "taken over" in log_a or "lost the lease" in log_a, log_a[-3000:]  # A woke and found the job B's
    assert job["status"] == "finished", job["message"]
    # The model: one request per call, the stalled coder call twice (A's, then B's re-send), none from A after waking.
    assert requests == {MODELS["planner"]: 2, MODELS["coder"]: 3}
    # The ledger: one paid record per call; A's send lost in flight, never paid.
    statuses = Counter((c["call_key"].rsplit("#", 1)[0], c["status"]) for c in job["llm_calls"])
    paid = {call: n for (call, status), n in statuses.items() if status == "paid"}
    lost = [call for (call, status), n in statuses.items() if status == "lost_in_flight" for _ in range(n)]
    assert sorted(paid) == [f"{job_id}:llm{i}" for i in range(4)] and set(paid.values()) == {1}
    assert lost == [f"{job_id}:llm1"]  # A's coder call
    assert set(statuses) <= {(call, s) for call in paid for s in ("paid", "lost_in_flight")}
    assert job["totals"]["llm_calls_count"] == 5
    # The checkpoint history is linear.
    assert checkpoints
    parents = Counter(parent for _, parent, _ in checkpoints)
    assert max(parents.values()) == 1, parents
    steps = Counter(step for _, _, step in checkpoints)
    assert max(steps.values()) == 1, steps
    # No event from A: one `finished`, B's.
    finished = [payload for kind, payload in events if kind == "finished"]
    assert [f["status"] for f in finished] == ["finished"], finished
    attempts = [payload["attempt_id"] for kind, payload in events if kind == "attempt"]
    assert sorted(attempts) == [f"{job_id}:r1:d0", f"{job_id}:r2:d0"]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_sigstop_past_the_lease_pays_no_call_twice_forks_nothing_and_sends_no_stray_event_with_fake_gpu(
    db_url, server_factory, tmp_path, tmp_path_factory
):
    headers = {"X-API-Key": make_key(db_url)}
    for _ in range(TRIALS):
        _one_trial(db_url, server_factory, tmp_path, tmp_path_factory, headers)
