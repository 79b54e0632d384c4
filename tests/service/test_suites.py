"""Suites of PyTorch references in the service (issue 42, item 5): `cudamaster suite push PATH` sends a folder's
text to POST /api/v1/suites, which probes each reference through the job submit's own path and stores the tasks
made, answering the refused files with their reasons; a campaign's `selection.suite` runs its tasks; the leaderboard
(API and page) filters on it. A suite is private to its key (another key: 404).

The REAL app in-process (FastAPI's TestClient); FAKE jobs (an injected job function that holds until stopped: no
agent, no GPU). The probing test runs two references in the sandbox (SQLite only: the probe is the same on either
database); the bounds and 404s run nothing and cover both databases."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, insert, select
from typer.testing import CliRunner

from app.db.engine import make_engine
from app.db.models import Attempt, Job, StoredPyTorchTask, Suite
from app.main import create_app
from settings import ServiceSettings

from .conftest import make_key, sqlite_only
from .test_dashboard_round_two import _held_job, _signed_in
from .test_pytorch_submit import GOOD

pytestmark = pytest.mark.timeout(300)
API = "/api/v1"


def _as_client(client: TestClient):
    """FAKE transport for the CLI: its requests go to the in-process app instead of a URL."""

    def request(method: str, url: str, key: str | None, path: str, body: dict | None = None, *, timeout: float = 60) -> Any:
        r = client.request(method, API + path, json=body, headers={"X-API-Key": key or ""})
        assert r.status_code < 400, r.text
        return r.json()

    return request


@sqlite_only
def test_a_pushed_folder_is_a_suite_a_campaign_runs_and_the_leaderboard_filters_with_fake_jobs(db_url, tmp_path, monkeypatch):
    import app.campaign_cli as campaign_cli
    import app.suite_cli as suite_cli
    from app.cli import cli

    pytest.importorskip("torch")  # the probe's child (the optional extra; CI installs its CPU build)
    alice, bob = make_key(db_url, "alice"), make_key(db_url, "bob")  # one team, two member keys
    folder = tmp_path / "level0"
    folder.mkdir()
    (folder / "ReLU.py").write_text(GOOD)
    (folder / "relu.py").write_text(GOOD)  # the same task name as ReLU.py: refused without a run
    (folder / "1_No_Model.py").write_text(GOOD.replace("class Model(", "class Other("))
    (folder / "__init__.py").write_text("")
    (folder / "notes.txt").write_text("not a reference")
    settings = ServiceSettings(database_url=db_url, pytorch_reference_seconds=60)
    with TestClient(create_app(settings, run_job=_held_job)) as client:
        monkeypatch.setattr(suite_cli, "_request", _as_client(client))
        result = CliRunner().invoke(cli, ["suite", "push", str(folder), "--key", alice, "--json"])
        assert result.exit_code == 0, result.output
        suite = client.get(f"{API}/suites", headers={"X-API-Key": alice}).json()
        [listed] = suite
        assert (listed["name"], listed["precision"], listed["tasks"], listed["refused"]) == ("level0", "fp32", 1, 2), listed
        detail = client.get(f"{API}/suites/{listed['id']}", headers={"X-API-Key": alice}).json()
        [task] = detail["tasks"]
        assert task["name"] == "pt_relu" and f'extern "C" void {task["id"]}(float* ' in task["prototype"], task
        assert task["sizes"] == [{"batch_size": 4, "dim": 8}]
        reasons = {r["name"]: r["reason"] for r in detail["refused"]}
        assert "no `Model`" in reasons["pt_1_no_model"] and "another reference's too" in reasons["pt_relu"], reasons
        assert json.loads(result.stdout) == detail  # --json: the service's answer alone on stdout (the progress on stderr)

        # another key of the same team: the suite does not exist for it, in reads, campaigns and the leaderboard
        assert client.get(f"{API}/suites", headers={"X-API-Key": bob}).json() == []
        assert client.get(f"{API}/suites/{listed['id']}", headers={"X-API-Key": bob}).status_code == 404
        assert client.get(f"{API}/leaderboard", params={"suite": listed["id"]}, headers={"X-API-Key": bob}).status_code == 404
        r = client.post(f"{API}/campaigns", json={"selection": {"suite": listed["id"]}}, headers={"X-API-Key": bob})
        assert r.status_code == 422 and "no suite" in r.text, r.text
        r = client.post(f"{API}/campaigns", json={"selection": {"suite": listed["id"], "precision": "fp32"}}, headers={"X-API-Key": alice})
        assert r.status_code == 422 and "`suite` alone" in r.text, r.text

        monkeypatch.setattr(campaign_cli, "_request", _as_client(client))
        result = CliRunner().invoke(cli, ["campaign", "run", "--suite", listed["id"], "--key", alice, "--no-wait", "--rounds", "1"])
        assert result.exit_code == 0 and "1 variants" in result.output, result.output
        [campaign_id] = re.findall(r"campaign (cmp_[0-9a-f]{16})", result.output)
        campaign = client.get(f"{API}/campaigns/{campaign_id}", headers={"X-API-Key": alice}).json()
        assert [(v["task"], v["precision"]) for v in campaign["variants"]] == [(task["id"], "fp32")]
        assert campaign["selection"] == {"suite": listed["id"]}

        _scored(db_url, {task["id"]: 2.0, "vector_add": 3.0})
        board = client.get(f"{API}/leaderboard", params={"suite": listed["id"]}, headers={"X-API-Key": alice}).json()
        assert [e["task"] for e in board["entries"]] == [task["id"]]
        assert [(s["tasks"], s["at_least"]["2"]) for s in board["shares"]] == [(1, 1.0)]
        everything = client.get(f"{API}/leaderboard", headers={"X-API-Key": alice}).json()
        assert {e["task"] for e in everything["entries"]} == {task["id"], "vector_add"}

        page = _signed_in(client, alice).get("/leaderboard", params={"suite": listed["id"]})
        assert page.status_code == 200 and f'<option value="{listed["id"]}" selected>level0 (1 tasks, fp32)</option>' in page.text
        assert task["id"] in page.text and "<td>vector_add</td>" not in page.text


def _scored(db_url: str, scores: dict[str, float]) -> None:
    """A finished job with one correct attempt per task (FAKE: stored rows, no agent ran)."""
    now = datetime.now(UTC)
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            for i, (task, score) in enumerate(scores.items()):
                job_id = f"job_{i:016x}"
                job = {"id": job_id, "task": task, "precision": "fp32", "settings": {}, "status": "finished", "team": "default"}
                conn.execute(insert(Job), [job | {"cost_usd": 0.0, "created_at": now, "updated_at": now}])
                attempt = {"job_id": job_id, "attempt_key": "a0", "verdict": "ok", "score": score, "gpu_model": "FAKE GPU"}
                conn.execute(insert(Attempt), [attempt | {"created_at": now}])
    finally:
        engine.dispose()


def test_a_suite_over_its_bounds_or_of_loose_types_is_a_422_and_unknown_ids_are_404s_and_nothing_is_stored(db_url):
    key = {"X-API-Key": make_key(db_url)}
    ref = {"name": "relu", "reference_py": GOOD}
    settings = ServiceSettings(database_url=db_url, max_suite_references=2, max_suite_bytes=len(GOOD) * 2)
    with TestClient(create_app(settings, run_job=_held_job)) as client:

        def refused(body: dict, says: str) -> None:
            r = client.post(f"{API}/suites", json={"name": "s"} | body, headers=key)
            assert r.status_code == 422 and says in r.text, r.text

        refused({"references": [ref] * 3}, "CUDAMASTER_SERVICE__MAX_SUITE_REFERENCES")
        refused({"references": [ref, ref | {"reference_py": GOOD + "#"}]}, "CUDAMASTER_SERVICE__MAX_SUITE_BYTES")
        refused({"references": [ref | {"sizes": [{"dim": "16"}]}]}, "int_type")  # strict: no "16" read as 16
        refused({"references": [ref | {"sizes": [{"dim": True}]}]}, "int_type")
        refused({"references": [ref | {"path": "/etc/passwd"}]}, "extra_forbidden")
        refused({"references": [ref | {"name": "../x"}]}, "string_pattern_mismatch")
        refused({"references": []}, "too_short")
        refused({"references": [ref], "precision": "fp64"}, "precision")
        for suite_id in ("su_0000000000000000", "nope"):
            assert client.get(f"{API}/suites/{suite_id}", headers=key).status_code == 404
        assert client.get(f"{API}/leaderboard", params={"suite": "su_0000000000000000"}, headers=key).status_code == 404
        assert client.get(f"{API}/leaderboard", params={"suite": "../x"}, headers=key).status_code == 422
        r = client.post(f"{API}/campaigns", json={"selection": {"suite": "su_0000000000000000"}}, headers=key)
        assert r.status_code == 422 and "no suite su_0000000000000000" in r.text, r.text
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            assert [conn.scalar(select(func.count()).select_from(t)) for t in (Suite, StoredPyTorchTask)] == [0, 0]
    finally:
        engine.dispose()


def test_suite_push_refuses_a_path_that_is_not_a_folder_of_references_before_sending_anything(tmp_path: Path, monkeypatch):
    import app.suite_cli as suite_cli
    from app.cli import cli

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("FAKE service: nothing may be sent")

    monkeypatch.setattr(suite_cli, "_request", never)
    (tmp_path / "notes.txt").write_text("")
    for path, says in ((tmp_path / "missing", "is not a directory"), (tmp_path, "holds no reference file")):
        result = CliRunner().invoke(cli, ["suite", "push", str(path), "--key", "cm_x"])
        assert result.exit_code == 2 and says in result.output, result.output
