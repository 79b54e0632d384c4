"""Crash trials (issue 10): the real service process killed with SIGKILL at random points, again and again,
on PostgreSQL, with the FAKE agent and its slow FAKE model (tests/service/fake_agent.py). After a last
start: no job stuck, no attempt lost or stored twice, every request the model received recorded once
(paid, or lost in flight) and none left `sent`, and each job's spend at least what its answered calls
cost. The kill times come from a seeded generator (CRASH_TRIALS_SEED to replay a run; printed)."""

from __future__ import annotations

import os
import random
import time

import httpx
import pytest

from .conftest import make_key, read_sse, wait_status
from .fake_agent import model_log

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]
API = "/api/v1"
JOBS, ROUNDS, TRIALS = 3, 4, 8
STEP_S = "0.25"  # each FAKE model call takes this long, then the attempt another step


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_kill_9_at_random_points_loses_and_duplicates_nothing_with_fake_agent(db_url, server_factory, tmp_path):
    seed = int(os.environ.get("CRASH_TRIALS_SEED") or random.SystemRandom().randrange(1 << 30))
    print(f"CRASH_TRIALS_SEED={seed}")
    rng = random.Random(seed)
    headers = {"X-API-Key": make_key(db_url)}
    state_dir = tmp_path / "fake-agent"
    env = {"FAKE_AGENT_STEP_SECONDS": STEP_S, "CUDAMASTER_SERVICE__MAX_RUNNING_JOBS": "2"}

    server = server_factory(**env)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        ids = [client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": ROUNDS}, headers=headers).json()["id"] for _ in range(JOBS)]
    kills = 0
    for trial in range(TRIALS):
        if trial:
            server = server_factory(**env)
        time.sleep(rng.uniform(0.1, 2.5))  # somewhere in a claim, a call, an attempt or a checkpoint
        server.kill()
        kills += 1
    assert kills == TRIALS
    sent_before_last_start = len(model_log(state_dir))

    final = server_factory(**env)
    with httpx.Client(base_url=final.url, timeout=30) as client:
        jobs = [wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished", "failed", "cancelled"}, timeout=180) for job_id in ids]
        streams = {job_id: read_sse(client, f"{API}/jobs/{job_id}/events", headers) for job_id in ids}
        stuck = client.get(f"{API}/jobs", params={"status": "running"}, headers=headers).json()["total"]
    requests = model_log(state_dir)
    lost = sum(c["status"] == "lost_in_flight" for job in jobs for c in job["llm_calls"])
    print(f"{TRIALS} kills, {len(requests)} model requests ({sent_before_last_start} before the last start), {lost} lost in flight")
    assert sent_before_last_start > 0, "no LLM call was made before the last start: the trials killed nothing mid-job"
    assert stuck == 0
    for job in jobs:
        job_id = job["id"]
        assert job["status"] == "finished", (job_id, job["message"])
        assert job["lease_holder"] is None and not job["cancel_requested"]
        # Attempts: each round once, none lost, none twice; each streamed once.
        assert [a["attempt_key"] for a in job["attempts"]] == [f"{job_id}-r{r}-d0" for r in range(1, ROUNDS + 1)]
        streamed = [d["attempt_id"] for kind, d in streams[job_id] if kind == "attempt"]
        assert sorted(streamed) == sorted(a["attempt_key"] for a in job["attempts"])
        # LLM calls: every request the model received is on record, once, paid or lost in flight.
        sends = [r["send_id"] for r in requests if r["job_id"] == job_id]
        calls = job["llm_calls"]
        recorded = {c["call_key"].rsplit("#", 1)[1]: c["status"] for c in calls}
        assert len(recorded) == len(calls) and set(sends) <= set(recorded)  # each request on record, once
        # A call is recorded `sent` just before its request: a kill in between leaves a record (lost in flight)
        # of a request the model never received.
        assert all(status == "lost_in_flight" for send, status in recorded.items() if send not in sends)
        assert {c["status"] for c in calls} <= {"paid", "lost_in_flight"}
        paid_rounds = {c["round"] for c in calls if c["status"] == "paid"}
        assert paid_rounds == set(range(1, ROUNDS + 1))
        # Spend: never less than the answered calls (each round's FAKE call costs 0.01 * round) nor what the rows say.
        assert job["totals"]["llm_calls_count"] == len(calls)
        assert job["totals"]["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))
        assert job["totals"]["cost_usd"] >= sum(0.01 * r for r in range(1, ROUNDS + 1)) - 1e-9
