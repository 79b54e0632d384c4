"""A job's `pytorch` field (issue 42): the reference runs only in the sandbox at submit; what cannot be a task is a
422 naming the field and the reason (no Model, a syntax error, too slow, too much memory, sizes that name no
constant), and nothing is stored; a good one makes a job on a task `pt_<16 hex>`. The agent is the FAKE one (tests/service/fake_agent.py); no GPU is used. One
server and SQLite: each refusal is a sandboxed torch run (the same code on either database: nothing is stored)."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from sqlalchemy import func, select

from app.db.engine import make_engine, make_sessionmaker
from app.db.models import CustomTask, Job, StoredPyTorchTask

from .conftest import make_key, sqlite_only

pytest.importorskip("torch")  # the optional extra (CI installs its CPU build)
pytestmark = [pytest.mark.timeout(400), sqlite_only]
API = "/api/v1"

GOOD = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


batch_size = 4
dim = 8


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""

SLOW = "import time\n" + GOOD.replace("return torch.relu(x)", "time.sleep(3600)\n        return x")
BAD = {
    "no_model": (GOOD.replace("class Model(", "class Other("), "reference_py", "(format)", "no `Model`"),
    "syntax": (GOOD + "def broken(:\n", "reference_py", "(syntax)", "syntax error at line"),
    # Slow by waiting, not spinning: the limit is wall-clock time either way, and a spin would keep a core busy for
    # the 15 s (tests/bench/test_pytorch_refs.py stops a spinning file, at a 3 s limit).
    "too_slow": (SLOW, "reference_py", "(time)", "longer than 15 s"),
    "too_much_memory": (
        GOOD.replace("torch.randn(batch_size, dim)", "torch.empty(100 * 2**30, dtype=torch.uint8)"),
        "reference_py",
        "(memory)",
        "memory",
    ),
}


def _stored(db_url: str) -> tuple[int, int, int]:
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            return tuple(session.scalar(select(func.count(c))) for c in (Job.id, CustomTask.id, StoredPyTorchTask.id))  # type: ignore[return-value]
    finally:
        engine.dispose()


def test_a_reference_that_cannot_be_a_task_is_a_422_with_the_reason_and_nothing_is_stored_with_fake_agent(db_url, server_factory):
    headers = {"X-API-Key": make_key(db_url)}
    server = server_factory(CUDAMASTER_SERVICE__PYTORCH_REFERENCE_SECONDS="15")
    with httpx.Client(base_url=server.url, timeout=300) as client:

        def refused(pytorch: dict, field: str) -> str:
            r = client.post(f"{API}/jobs", json={"pytorch": {"name": "relu"} | pytorch}, headers=headers)
            assert r.status_code == 422, r.text
            [error] = r.json()["detail"]
            assert error["loc"] == ["body", "pytorch", field], error
            return error["msg"]

        for case, (text, field, kind, says) in BAD.items():
            msg = refused({"reference_py": text}, field)
            assert kind in msg and says in msg, (case, msg)
        msg = refused({"reference_py": GOOD, "sizes": [{"batch_size": 2}, {"width": 4}]}, "sizes")
        assert "sizes[1] names width" in msg and "batch_size, dim" in msg
        r = client.post(f"{API}/jobs", json={"pytorch": {"name": "relu", "reference_py": GOOD}, "task": "vector_add"}, headers=headers)
        assert r.status_code == 422 and "exactly one of" in r.text
        r = client.post(
            f"{API}/jobs",
            json={"pytorch": {"name": "relu", "reference_py": GOOD, "precision": "bf16"}, "precision": "fp32"},
            headers=headers,
        )
        assert r.status_code == 422 and "differ" in r.text
        assert client.get(f"{API}/jobs", headers=headers).json()["total"] == 0
        assert _stored(db_url) == (0, 0, 0)  # nothing stored but the refusals
        r = client.post(f"{API}/jobs", json={"pytorch": {"name": "relu", "reference_py": GOOD, "sizes": [{"dim": 16}]}}, headers=headers)
        assert r.status_code == 201, r.text
        assert re.fullmatch(r"pt_[0-9a-f]{16}", r.json()["task"]), r.json()
    assert _stored(db_url) == (1, 0, 1)


def _wait_for(client: httpx.Client, job_id: str, headers: dict, statuses: set[str], within: float = 60) -> dict:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        job = client.get(f"{API}/jobs/{job_id}", headers=headers).json()
        if job["status"] in statuses:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} is still {job['status']} after {within} s, not one of {statuses}")


def test_a_pytorch_job_resumes_after_a_restart_and_its_task_is_rebuilt_from_the_database_with_fake_agent(db_url, server_factory, tmp_path):
    """The FAKE agent fails a job whose task its process does not know (as the graph does): the job killed mid-run
    finishes on a new server process, which never saw the reference run; a new job names the stored task by id."""
    headers = {"X-API-Key": make_key(db_url)}
    other = {"X-API-Key": make_key(db_url, "another-key")}
    hold = tmp_path / "hold"
    hold.write_text("")
    first = server_factory(FAKE_MODEL_HOLD=str(hold), FAKE_AGENT_STEP_SECONDS="0.05")
    with httpx.Client(base_url=first.url, timeout=300) as client:
        r = client.post(f"{API}/jobs", json={"pytorch": {"name": "relu", "reference_py": GOOD}, "rounds": 1}, headers=headers)
        assert r.status_code == 201, r.text
        job_id, task = r.json()["id"], r.json()["task"]
        _wait_for(client, job_id, headers, {"running"})
    first.kill()  # mid-job, holding the FAKE model's answer
    second = server_factory(FAKE_AGENT_STEP_SECONDS="0.05")
    with httpx.Client(base_url=second.url, timeout=300) as client:
        job = _wait_for(client, job_id, headers, {"finished", "failed", "no_correct_kernel"})
        assert job["status"] == "finished", job
        r = client.post(f"{API}/jobs", json={"task": task, "rounds": 1}, headers=headers)
        assert r.status_code == 201 and r.json()["task"] == task, r.text
        assert _wait_for(client, r.json()["id"], headers, {"finished", "failed"})["status"] == "finished"
        r = client.post(f"{API}/jobs", json={"task": task}, headers=other)
        assert r.status_code == 404 and "private to the key" in r.text, r.text
    assert _stored(db_url) == (2, 0, 1)


def test_a_campaign_lists_a_stored_pytorch_task_as_a_variant_with_fake_agent(db_url, server_factory):
    """The smallest suite campaign: a stored reference's id (`pt_…/fp32`) is a variant beside a benchmark task; the
    campaign's job on it runs (the FAKE agent fails a job whose task it does not know). Another key's campaign
    cannot name it, nor can a variant at a precision the task was not made for."""
    headers = {"X-API-Key": make_key(db_url)}
    other = {"X-API-Key": make_key(db_url, "another-key")}
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0")
    with httpx.Client(base_url=server.url, timeout=300) as client:
        r = client.post(f"{API}/jobs", json={"pytorch": {"name": "relu", "reference_py": GOOD}, "rounds": 1}, headers=headers)
        assert r.status_code == 201, r.text
        task = r.json()["task"]
        body = {"selection": {"variants": [f"{task}/fp32", "vector_add/fp32"]}, "config": {"rounds": 1}}
        r = client.post(f"{API}/campaigns", json=body, headers=other)
        assert r.status_code == 422 and f"no stored task {task}" in r.text, r.text
        r = client.post(f"{API}/campaigns", json={"selection": {"variants": [f"{task}/bf16"]}}, headers=headers)
        assert r.status_code == 422 and "unknown precision 'bf16'" in r.text, r.text
        r = client.post(f"{API}/campaigns", json=body, headers=headers)
        assert r.status_code == 201, r.text
        cid = r.json()["id"]
        deadline = time.monotonic() + 120
        while (c := client.get(f"{API}/campaigns/{cid}", headers=headers).json())["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert c["status"] == "finished", c
        by_task = {v["task"]: v for v in c["variants"]}
        assert set(by_task) == {task, "vector_add"} and by_task[task]["precision"] == "fp32"
        job = client.get(f"{API}/jobs/{by_task[task]['job_id']}", headers=headers).json()
        assert job["task"] == task and job["status"] == "finished", job
