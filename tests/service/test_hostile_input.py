"""Hostile input gets a clear 4xx, never a 500, and never reaches the database or the agent — against a
real server with the FAKE agent, on SQLite and PostgreSQL (whose text columns cannot hold a NUL and
whose INTEGER columns end at 2^31 - 1).

Every 422 has FastAPI's shape: `detail` is a list of {type, loc, msg} errors."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from bench_tasks.spec import TASKS_DIR

from .conftest import make_key, wait_status
from .test_api_with_fake_agent import CUSTOM

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
API = "/api/v1"


@pytest.fixture
def api(db_url, server_factory):
    key = make_key(db_url)
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client, {"X-API-Key": key}


def unprocessable(r: httpx.Response, *words: str) -> None:
    assert r.status_code == 422, (r.status_code, r.text)
    detail = r.json()["detail"]
    assert isinstance(detail, list) and detail, detail
    assert all({"type", "loc", "msg"} <= set(e) for e in detail), detail
    text = " ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in detail)
    for word in words:
        assert word in text, (word, text)


def jobs_total(client: httpx.Client, headers: dict) -> int:
    return client.get(f"{API}/jobs", headers=headers).json()["total"]


def test_huge_numbers_nul_characters_and_huge_bodies_are_refused_with_fake_agent(api):
    client, h = api
    waiting = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "manual": True}, headers=h).json()["id"]
    wait_status(client, f"{API}/jobs/{waiting}", h, {"waiting_for_input"})

    for params in ({"offset": 2**63}, {"offset": 2**31}, {"limit": 2**63}, {"offset": -1}):
        unprocessable(client.get(f"{API}/jobs", params=params, headers=h))
    for attempt in (2**31, 2**63, 0):
        unprocessable(client.get(f"{API}/jobs/{waiting}/attempts/{attempt}/source", headers=h))
    unprocessable(client.get(f"{API}/jobs/{waiting}/events", params={"after": 2**31}, headers=h))
    unprocessable(client.get(f"{API}/jobs/{waiting}/events", headers=h | {"Last-Event-ID": "9999999999"}), "Last-Event-ID")
    unprocessable(client.get(f"{API}/jobs", params={"task": "vector\x00add"}, headers=h))
    r = client.get(f"{API}/jobs/job_%00/events", headers=h)
    assert r.status_code == 404, r.text
    assert client.post(f"{API}/keys/%00%00/revoke", headers=h).status_code in (403, 404)

    unprocessable(client.post(f"{API}/jobs/{waiting}/answer", json={"answer": "tiling\x00"}, headers=h), "NUL")
    assert client.get(f"{API}/jobs/{waiting}", headers=h).json()["status"] == "waiting_for_input"  # the answer was not taken

    before = jobs_total(client, h)
    unprocessable(
        client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": CUSTOM["baseline_cu"] + "\x00"}}, headers=h),
        "custom.baseline_cu",
        "NUL",
    )
    unprocessable(client.post(f"{API}/jobs", json={"task": "vector_add", "models": {"coder": "gpt\x00-4o"}}, headers=h), "NUL")
    unprocessable(
        client.post(f"{API}/jobs", json={"task": "vector_add", "models": {"coder": "gpt-4o; DROP TABLE jobs"}}, headers=h), "model names"
    )
    unprocessable(client.post(f"{API}/jobs", json={"task": "vector_add", "models": {"coder\x00": "gpt-4o"}}, headers=h), "NUL")
    raw = {"content-type": "application/json"}
    # A lone surrogate (JSON's "\ud800": no UTF-8 for it) is refused where it is, like a NUL; echoing one was a 500.
    lone = "\ud800"
    for body, where in (
        ({"custom": CUSTOM | {"baseline_cu": CUSTOM["baseline_cu"] + lone}}, "custom.baseline_cu"),
        ({"pytorch": {"name": "relu", "reference_py": "x = 1  # " + lone}}, "pytorch.reference_py"),
        ({"task": "vector_add", "models": {lone: "gpt-4o"}}, "models"),
        ({"task": lone}, "task"),
    ):
        unprocessable(client.post(f"{API}/jobs", content=json.dumps(body).encode(), headers=h | raw), where, "surrogate")
    unprocessable(client.get(f"{API}/jobs?task=vector_%ED%A0%80", headers=h))  # a surrogate's bytes in a query
    unprocessable(client.post(f"{API}/jobs", content=b'{"task": "vector_add", "rounds": 1e309}', headers=h | raw), "rounds")
    unprocessable(client.post(f"{API}/jobs", content=b'{"task": "vector_add", "debug": -1e309}', headers=h | raw), "debug")
    unprocessable(client.post(f"{API}/jobs", content=b'{"task": "vector_add", "rounds": NaN}', headers=h | raw))
    unprocessable(client.post(f"{API}/jobs", content=b'{"task": "vector_add", "rounds": 1e308}', headers=h | raw), "rounds")

    def chunks(total: int):
        for _ in range(total // (1 << 20)):
            yield b"x" * (1 << 20)

    r = client.post(f"{API}/jobs", content=chunks(10 << 20), headers=h | raw)  # chunked: no Content-Length
    assert r.status_code == 413 and "CUDAMASTER_SERVICE__MAX_REQUEST_BYTES" in r.json()["detail"], r.text
    r = client.post(f"{API}/jobs/{waiting}/answer", content=chunks(10 << 20), headers=h | raw)
    assert r.status_code == 413, r.text
    assert jobs_total(client, h) == before  # nothing above made a job
    # A body under the limit, sent in chunks, still arrives whole.
    body = b'{"task": "vector_add", "rounds": 1, "manual": true, "models": {"coder": "' + b"m" * 100 + b'"}}'
    r = client.post(f"{API}/jobs", content=iter([body[:10], body[10:]]), headers=h | raw)
    assert r.status_code == 201 and r.json()["settings"]["models"] == {"coder": "m" * 100}, r.text


def test_a_task_is_a_name_never_a_path_with_fake_agent(api, tmp_path):
    client, h = api
    folder = tmp_path / "evil"
    shutil.copytree(TASKS_DIR / "vector_add", folder)
    marker = tmp_path / "imported"
    (folder / "reference.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    for name in (
        "../tasks/vector_add",
        "./vector_add",
        str(folder),
        str(TASKS_DIR / "vector_add"),
        "vector_add/",
        "../" * 12 + str(folder).lstrip("/"),
        "VECTOR_ADD",
        "no_such_task",
    ):
        r = client.post(f"{API}/jobs", json={"task": name}, headers=h)
        unprocessable(r, "unknown task")
        assert r.json()["detail"][0]["loc"] == ["body", "task"]
    assert jobs_total(client, h) == 0 and not marker.exists()
    r = client.get(f"{API}/jobs", params={"task": "../tasks/vector_add"}, headers=h)
    unprocessable(r)


def test_every_route_validation_error_has_the_list_shape_with_fake_agent(api):
    client, h = api
    unprocessable(client.get(f"{API}/jobs", params={"status": "bogus"}, headers=h), "finished")
    unprocessable(client.get(f"{API}/jobs", params={"limit": 10_000}, headers=h), "page size")
    unprocessable(client.post(f"{API}/jobs", json={"task": "vector_add", "precision": "fp64"}, headers=h), "fp32")
    unprocessable(client.post(f"{API}/jobs", json={"custom": CUSTOM | {"baseline_cu": "// empty"}}, headers=h), "does not define scale")
    unprocessable(client.post(f"{API}/jobs", json={}, headers=h), "exactly one of")
    unprocessable(client.post(f"{API}/jobs", content=b"{not json", headers=h | {"content-type": "application/json"}))
