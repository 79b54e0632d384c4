"""The HTTP API against a real uvicorn process running the service with the FAKE agent
(tests/service/fake_agent.py), on SQLite and on PostgreSQL."""

from __future__ import annotations

import time

import httpx
import pytest

from .conftest import make_key, read_sse, wait_status

pytestmark = pytest.mark.timeout(180)

API = "/api/v1"


@pytest.fixture
def api(db_url, server_factory):
    key = make_key(db_url)
    server = server_factory()
    client = httpx.Client(base_url=server.url, timeout=30)
    yield client, {"Authorization": f"Bearer {key}"}, server
    client.close()


def submit(client, headers, **body):
    payload = {"task": "vector_add", "precision": "fp32", "rounds": 2} | body
    r = client.post(f"{API}/jobs", json=payload, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def test_submit_stream_finish_with_fake_agent(api):
    client, headers, _ = api
    job = submit(client, headers, rounds=3)
    assert job["status"] == "queued" and job["task"] == "vector_add"
    events = read_sse(client, f"{API}/jobs/{job['id']}/events", headers)
    kinds = [k for k, _ in events]
    assert kinds.count("attempt") == 3 and kinds.count("llm_call") == 3 and kinds[-2:] == ["finished", "end"]
    assert events[-1][1]["status"] == "finished"
    assert all(data["source"] == "" and data["evaluation"] is None for kind, data in events if kind == "attempt")  # fetched separately

    detail = client.get(f"{API}/jobs/{job['id']}", headers=headers).json()
    assert detail["status"] == "finished" and detail["finished_at"]
    assert [a["round"] for a in detail["attempts"]] == [1, 2, 3]
    assert all(len(a["measurements"]) == 2 for a in detail["attempts"])
    m = detail["attempts"][0]["measurements"][1]
    assert m["params"] == {"N": 65536} and m["baseline_median_us"] == 20.0 and m["speedup"] == pytest.approx(2.0)
    assert detail["attempts"][2]["profile"]["bottleneck_class"] == "memory_bandwidth"
    totals = detail["totals"]
    assert totals["llm_calls_count"] == 3 and totals["input_tokens"] == 6000 and totals["cost_usd"] == pytest.approx(0.06)
    best = max(detail["attempts"], key=lambda a: a["score"])
    assert detail["best_attempt_id"] == best["id"] and detail["best_score"] == 4.0

    src = client.get(f"{API}/jobs/{job['id']}/attempts/{best['id']}/source", headers=headers)
    assert src.status_code == 200 and src.text == "// fake kernel, round 3\n" and src.headers["content-type"].startswith("text/x-cuda")
    assert client.get(f"{API}/jobs/{job['id']}/attempts/999999/source", headers=headers).status_code == 404

    # Replay from Last-Event-ID: only the later events come back.
    first_id = client.get(f"{API}/jobs/{job['id']}/events", headers=headers)  # full replay as one body (job is done)
    assert first_id.status_code == 200
    assert [line[6:].strip() for line in first_id.text.splitlines() if line.startswith("event:")] == kinds  # every event, in order
    replay = read_sse(client, f"{API}/jobs/{job['id']}/events", headers | {"Last-Event-ID": "0"})
    assert [k for k, _ in replay] == kinds


def test_list_filter_and_paginate_with_fake_agent(api):
    client, headers, _ = api
    ids = [submit(client, headers, rounds=1)["id"] for _ in range(3)]
    for job_id in ids:
        wait_status(client, f"{API}/jobs/{job_id}", headers, {"finished"})
    page = client.get(f"{API}/jobs", params={"limit": 2}, headers=headers).json()
    assert page["total"] == 3 and len(page["items"]) == 2 and page["next_offset"] == 2
    assert [j["id"] for j in page["items"]] == ids[::-1][:2]  # newest first
    rest = client.get(f"{API}/jobs", params={"limit": 2, "offset": 2}, headers=headers).json()
    assert [j["id"] for j in rest["items"]] == [ids[0]] and rest["next_offset"] is None
    assert client.get(f"{API}/jobs", params={"status": "finished", "task": "vector_add"}, headers=headers).json()["total"] == 3
    assert client.get(f"{API}/jobs", params={"status": "queued"}, headers=headers).json()["total"] == 0
    assert client.get(f"{API}/jobs", params={"task": "nope"}, headers=headers).json()["total"] == 0
    bad = client.get(f"{API}/jobs", params={"status": "bogus"}, headers=headers)
    assert bad.status_code == 422 and "finished" in bad.json()["detail"][0]["msg"]


def test_cancel_and_resume_with_fake_agent(api):
    client, headers, _ = api
    job = submit(client, headers, rounds=6)
    url = f"{API}/jobs/{job['id']}"
    deadline = time.monotonic() + 30
    while client.get(url, headers=headers).json()["totals"]["attempts_count"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    r = client.post(f"{url}/cancel", headers=headers)
    assert r.status_code == 200, r.text
    cancelled = wait_status(client, url, headers, {"cancelled"})
    assert 1 <= cancelled["totals"]["attempts_count"] < 6
    assert client.post(f"{url}/cancel", headers=headers).status_code == 409
    assert client.post(f"{url}/answer", json={"answer": "x"}, headers=headers).status_code == 409

    r = client.post(f"{url}/resume", headers=headers)
    assert r.status_code == 200 and r.json()["status"] == "queued"
    done = wait_status(client, url, headers, {"finished"})
    assert [a["round"] for a in done["attempts"]] == [1, 2, 3, 4, 5, 6]  # nothing lost, nothing twice
    assert done["totals"]["llm_calls_count"] == 6
    again = client.post(f"{url}/resume", headers=headers)
    assert again.status_code == 409 and "finished" in again.json()["detail"]


def test_manual_mode_answered_over_http_with_fake_agent(api):
    client, headers, _ = api
    job = submit(client, headers, rounds=2, manual=True)
    url = f"{API}/jobs/{job['id']}"
    for round_no, answer in ((1, "tiling"), (2, "vectorize")):
        events = read_sse(client, f"{url}/events", headers)
        assert events[-1] == ("end", {"job_id": job["id"], "status": "waiting_for_input"})
        waiting = client.get(url, headers=headers).json()
        question = waiting["question"]["question"]
        assert (
            waiting["status"] == "waiting_for_input" and question["question"] == f"round {round_no}: which strategy? (tiling or vectorize)"
        )
        assert client.post(f"{url}/resume", headers=headers).status_code == 409  # answer, not resume
        r = client.post(f"{url}/answer", json={"answer": answer}, headers=headers)
        assert r.status_code == 200 and r.json()["status"] == "queued"
    done = wait_status(client, url, headers, {"finished"})
    assert [a["strategy"] for a in done["attempts"]] == ["tiling", "vectorize"]
    assert done["question"] is None


def test_auth_missing_wrong_revoked_with_fake_agent(api, db_url):
    client, headers, _ = api
    r = client.post(f"{API}/jobs", json={"task": "vector_add"})
    assert r.status_code == 401 and "API key" in r.json()["detail"] and r.headers["www-authenticate"] == "Bearer"
    assert client.get(f"{API}/jobs").status_code == 401
    assert client.get(f"{API}/tasks").status_code == 401
    r = client.post(f"{API}/jobs", json={"task": "vector_add"}, headers={"Authorization": "Bearer nonsense"})
    assert r.status_code == 403 and "malformed" in r.json()["detail"]
    good = headers["Authorization"].split()[1]
    wrong = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    r = client.get(f"{API}/jobs", headers={"X-API-Key": wrong})
    assert r.status_code == 403 and "not recognised" in r.json()["detail"]
    r = client.get(f"{API}/jobs", headers={"X-API-Key": good})
    assert r.status_code == 200 and r.json()["total"] == 0 and r.json()["items"] == []  # this key's (none yet)
    # Revoke with the CLI's code path.
    from app.auth import revoke_key
    from app.db.engine import make_engine, make_sessionmaker

    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        assert revoke_key(session, good.split("_")[1])
    engine.dispose()
    r = client.get(f"{API}/jobs", headers=headers)
    assert r.status_code == 403 and "revoked" in r.json()["detail"]
    r = client.get(f"{API}/health")  # health needs no key
    assert r.status_code == 200 and r.json()["running_jobs"] == 0, r.text


def test_refusals_are_clear_4xx_with_fake_agent(api):
    client, headers, _ = api
    r = client.post(f"{API}/jobs", json={"task": "no_such_task"}, headers=headers)
    assert r.status_code == 422 and "unknown task" in r.json()["detail"][0]["msg"] and "GET /api/v1/tasks" in r.json()["detail"][0]["msg"]
    r = client.post(f"{API}/jobs", content=b"{not json", headers=headers | {"content-type": "application/json"})
    assert r.status_code == 422
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "precision": "fp64"}, headers=headers)
    assert r.status_code == 422 and "fp32" in r.text
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 0}, headers=headers)
    assert r.status_code == 422 and "rounds" in r.text
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "replay_file": "/etc/passwd"}, headers=headers)
    assert r.status_code == 422 and "replay_file" in r.text
    r = client.post(f"{API}/jobs", json={}, headers=headers)
    assert r.status_code == 422 and "exactly one of" in r.text
    r = client.post(f"{API}/jobs", content=b"x" * (1024 * 1024 + 10), headers=headers | {"content-type": "application/json"})
    assert r.status_code == 413 and "CUDAMASTER_SERVICE__MAX_REQUEST_BYTES" in r.json()["detail"]
    assert client.get(f"{API}/jobs/job_missing", headers=headers).status_code == 404
    assert client.get(f"{API}/jobs/job_missing/events", headers=headers).status_code == 404
    assert client.post(f"{API}/jobs/job_missing/cancel", headers=headers).status_code == 404
    r = client.get(f"{API}/jobs", params={"limit": 10_000}, headers=headers)
    assert r.status_code == 422 and "page" in r.json()["detail"][0]["msg"]


CUSTOM = {
    "name": "scale",
    "prototype": 'extern "C" void scale(const float* X, float* Y, int N)',
    "args": {
        "X": {"role": "input", "length": "N", "draw": "uniform(-1, 1)"},
        "Y": {"role": "output", "length": "N"},
        "N": {"role": "scalar", "value": "N"},
    },
    "sizes": [{"N": 1024}, {"N": 1 << 20}],
    "baseline_cu": 'extern "C" void scale(const float* X, float* Y, int N) { /* launch a kernel */ }\n',
}


def test_custom_task_validated_stored_and_queued_with_fake_agent(api):
    client, headers, _ = api
    r = client.post(f"{API}/jobs", json={"custom": CUSTOM}, headers=headers)
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["task"].startswith("ct_") and job["settings"]["task"] == job["task"]
    bad = CUSTOM | {"args": {k: v for k, v in CUSTOM["args"].items() if k != "N"}}
    r = client.post(f"{API}/jobs", json={"custom": bad}, headers=headers)
    assert r.status_code == 422 and "differ from args" in r.json()["detail"][0]["msg"]
    r = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"prototype": "void scale(float x)"}}, headers=headers)
    assert r.status_code == 422 and "prototype" in r.json()["detail"][0]["msg"]
    r = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": "// empty"}}, headers=headers)
    assert r.status_code == 422 and "does not define scale" in r.json()["detail"][0]["msg"]
    r = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": "x" * 300_000}}, headers=headers)
    assert r.status_code == 413 and "CUDAMASTER_SERVICE__MAX_SOURCE_BYTES" in r.json()["detail"]
    assert client.get(f"{API}/jobs", headers=headers).json()["total"] == 1  # only the valid one became a job


def test_tasks_health_openapi_with_fake_agent(api):
    client, headers, _ = api
    tasks = client.get(f"{API}/tasks", headers=headers).json()
    assert "vector_add" in [t["name"] for t in tasks]
    va = next(t for t in tasks if t["name"] == "vector_add")
    assert set(va["precisions"]) == {"fp32", "bf16"} and va["sizes"]["paper"][0] == {"N": 1024}
    health = client.get(f"{API}/health").json()
    assert health["status"] == "ok" and health["database"] == "ok" and health["gpus"] == ["0"]
    spec = client.get(f"{API}/openapi.json").json()
    for path in (
        "/api/v1/jobs",
        "/api/v1/jobs/{job_id}",
        "/api/v1/jobs/{job_id}/events",
        "/api/v1/jobs/{job_id}/cancel",
        "/api/v1/jobs/{job_id}/resume",
        "/api/v1/jobs/{job_id}/answer",
        "/api/v1/jobs/{job_id}/attempts/{attempt_id}/source",
        "/api/v1/tasks",
        "/api/v1/health",
    ):
        assert path in spec["paths"], path
