"""GET /api/v1/compare/{jobs,attempts,campaigns} against a real server with the FAKE agent: the numbers
are the jobs' and campaigns' own (read back through their API, or computed here from the fake agent's
made-up outcomes), and every key sees only what it may read (another team's run is a 404, as missing).

The fake agent's attempt in round r has P = 1 + r, a speedup of 1 + r at N=1024 and N=65536, the
source "// fake kernel, round r" and a profile with dram_pct = 80 + r (class memory_bandwidth)."""

from __future__ import annotations

import httpx
import pytest

from .conftest import make_key, wait_status
from .fake_agent import fake_variant

pytestmark = pytest.mark.timeout(300)
API = "/api/v1"
TAUS = (0, 1, 2, 4, 8, 16, 32)
PEOPLE = {"owner": ("member", "red"), "viewer": ("viewer", "red"), "outsider": ("member", "blue"), "admin": ("admin", "ops")}


def _keys(db_url: str) -> dict[str, dict[str, str]]:
    return {who: {"X-API-Key": make_key(db_url, who, role=role, team=team)} for who, (role, team) in PEOPLE.items()}


def _job(client: httpx.Client, headers: dict, task: str, rounds: int) -> str:
    r = client.post(f"{API}/jobs", json={"task": task, "rounds": rounds, "models": {"coder": "fake-model"}}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _refusal(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    if status == 422:
        (error,) = detail
        assert error["loc"] == ["query", "ids"]
        return error["msg"]
    return detail


def test_compare_jobs_and_attempts_hold_the_jobs_numbers_and_refuse_what_does_not_compare_with_fake_agent(db_url, server_factory):
    h = _keys(db_url)
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0.02")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        one, three, relu = (
            _job(client, h["owner"], "vector_add", 1),
            _job(client, h["owner"], "vector_add", 3),
            _job(client, h["owner"], "RELU", 1),
        )
        jobs = {i: wait_status(client, f"{API}/jobs/{i}", h["owner"], {"finished"}) for i in (one, three, relu)}

        r = client.get(f"{API}/compare/jobs", params={"ids": f"{one},{three}"}, headers=h["viewer"])  # a teammate's viewer reads it
        assert r.status_code == 200, r.text
        data = r.json()
        assert (data["kind"], data["task"], data["precision"]) == ("jobs", "vector_add", "fp32")
        first, second = data["runs"]
        for run, job_id in ((first, one), (second, three)):
            job = jobs[job_id]
            best = next(a for a in job["attempts"] if a["id"] == job["best_attempt_id"])
            assert run["job_id"] == job_id and run["attempt_id"] == best["id"] and run["score"] == best["score"] == job["best_score"]
            assert run["attempt_number"] == [a["id"] for a in job["attempts"]].index(best["id"]) + 1
            assert [(s["params"], s["speedup"], s["roofline_pct"]) for s in run["sizes"]] == [
                (m["params"], m["speedup"], m["candidate_roofline_pct"]) for m in best["measurements"]
            ]
            assert run["tokens"]["total"] == job["totals"]["input_tokens"] + job["totals"]["output_tokens"]
            assert run["tokens"]["cost_usd"] == pytest.approx(job["totals"]["cost_usd"])
            assert run["models"] == ["fake-model"]
        assert (first["score"], second["score"], second["attempt_number"]) == (2.0, 4.0, 3)
        assert [row["speedup"] for row in data["sizes"]] == [[2.0, 4.0], [2.0, 4.0]]
        assert data["metrics"] == [
            {"metric": "bottleneck class", "values": ["memory_bandwidth", "memory_bandwidth"]},
            {"metric": "dram_pct", "values": [81.0, 83.0]},
        ]
        assert first["diff_from_first"] == []
        diff = [(d["kind"], d["text"]) for d in second["diff_from_first"]]
        assert ("del", "-// fake kernel, round 1") in diff and ("add", "+// fake kernel, round 3") in diff
        assert diff[:2] == [("del", f"--- {one} attempt #1"), ("add", f"+++ {three} attempt #3")]  # numbers in the job, not global ids
        r = client.get(f"{API}/compare/jobs", params={"ids": f"{one},{three}"}, headers=h["admin"])
        assert r.status_code == 200 and [run["job_id"] for run in r.json()["runs"]] == [one, three], r.text  # an admin compares them too

        # The other team's side: the same ids are missing, whichever one is asked first.
        assert "no job" in _refusal(client.get(f"{API}/compare/jobs", params={"ids": f"{one},{three}"}, headers=h["outsider"]), 404)
        outsiders = _job(client, h["outsider"], "vector_add", 1)
        wait_status(client, f"{API}/jobs/{outsiders}", h["outsider"], {"finished"})
        assert outsiders in _refusal(client.get(f"{API}/compare/jobs", params={"ids": f"{one},{outsiders}"}, headers=h["owner"]), 404)

        mixed = _refusal(client.get(f"{API}/compare/jobs", params={"ids": f"{one},{relu}"}, headers=h["owner"]), 422)
        assert "RELU/fp32" in mixed and "one task and one precision" in mixed
        assert "at least 2" in _refusal(client.get(f"{API}/compare/jobs", params={"ids": f"{one},{one}"}, headers=h["owner"]), 422)
        many = ",".join(f"job_{i:016x}" for i in range(9))
        assert "at most 8" in _refusal(client.get(f"{API}/compare/jobs", params={"ids": many}, headers=h["owner"]), 422)
        assert "no job 'nonsense'" in _refusal(
            client.get(f"{API}/compare/jobs", params={"ids": f"{one},nonsense"}, headers=h["owner"]), 404
        )
        assert client.get(f"{API}/compare/jobs", params={"ids": f"{one},{three}"}).status_code == 401

        # Two attempts of one job: the first and the last round.
        attempts = [a["id"] for a in jobs[three]["attempts"]]
        r = client.get(f"{API}/compare/attempts", params={"ids": f"{attempts[0]},{attempts[-1]}"}, headers=h["owner"])
        assert r.status_code == 200, r.text
        runs = r.json()["runs"]
        assert [(x["attempt_number"], x["score"]) for x in runs] == [(1, 2.0), (3, 4.0)]
        assert ("add", "+// fake kernel, round 3") in [(d["kind"], d["text"]) for d in runs[1]["diff_from_first"]]
        assert "not a number" in _refusal(client.get(f"{API}/compare/attempts", params={"ids": "1,x"}, headers=h["owner"]), 422)
        assert "not a number" in _refusal(client.get(f"{API}/compare/attempts", params={"ids": "1,²"}, headers=h["owner"]), 422)
        their_attempt = client.get(f"{API}/jobs/{outsiders}", headers=h["outsider"]).json()["attempts"][0]["id"]
        assert f"no attempt {their_attempt}" in _refusal(
            client.get(f"{API}/compare/attempts", params={"ids": f"{attempts[0]},{their_attempt}"}, headers=h["owner"]), 404
        )
        relu_attempt = jobs[relu]["attempts"][0]["id"]
        assert "RELU" in _refusal(
            client.get(f"{API}/compare/attempts", params={"ids": f"{attempts[0]},{relu_attempt}"}, headers=h["owner"]), 422
        )


VARIANTS = ["vector_add/fp32", "RELU/fp32", "softmax/fp32", "gelu/fp32"]
ROUNDS = 2


def test_compare_campaigns_is_the_profile_mode_ablation_with_fake_agent(db_url, server_factory):
    h = _keys(db_url)
    server = server_factory(FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="4")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        ids = []
        for mode in ("none", "full", "filtered"):
            body = {
                "name": f"profile {mode}",
                "selection": {"variants": VARIANTS},
                "config": {"rounds": ROUNDS, "debug": 1, "profile_mode": mode},
            }
            r = client.post(f"{API}/campaigns", json=body, headers=h["owner"])
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        details = [wait_status(client, f"{API}/campaigns/{cid}", h["owner"], {"finished"}, timeout=120) for cid in ids]

        r = client.get(f"{API}/compare/campaigns", params={"ids": ",".join(ids)}, headers=h["viewer"])
        assert r.status_code == 200, r.text
        data = r.json()
        assert data["taus"] == list(TAUS) and data["common_variants"] == len(VARIANTS)
        outcomes = [fake_variant(*v.split("/")) for v in VARIANTS]
        best_p = [v["base_p"] * ROUNDS if v["correct"] else None for v in outcomes]  # P grows as base * round
        expected = [sum(p is not None and (t == 0 or p >= t) for p in best_p) / len(VARIANTS) for t in TAUS]
        for column, detail, mode in zip(data["campaigns"], details, ("none", "full", "filtered"), strict=True):
            assert column["id"] == detail["id"] and column["profile_tokens"]["mode"] == mode
            assert column["success"] == pytest.approx(expected)
            assert column["cost_usd"] == pytest.approx(sum(v["cost_usd"] for v in detail["variants"]))
            assert column["tokens"] == sum(v["tokens"] for v in detail["variants"])
        none, full, filtered = (c["profile_tokens"] for c in data["campaigns"])
        per_variant = [v["profile_tokens"] for v in outcomes]
        assert none["tokens_sent"] == 0 and filtered["tokens_sent"] == ROUNDS * sum(per_variant)
        assert full["tokens_sent"] == 8 * filtered["tokens_sent"]  # the fake agent's full profile is 8x the filtered one
        assert [m["mode"] for m in data["by_profile_mode"]] == ["filtered", "full", "none"]

        # Transitions: one row per (baseline, best) class pair, one count per campaign, as each campaign's report has them.
        for i, cid in enumerate(ids):
            report = client.get(f"{API}/campaigns/{cid}/report", headers=h["owner"]).json()["campaigns"][0]
            ours = {(t["baseline"], t["best"]): t["variants"][i] for t in data["transitions"] if t["variants"][i]}
            assert ours == {(t["baseline"], t["best"]): t["variants"] for t in report["bottlenecks"]["transitions"]}
        correct = [v for v in outcomes if v["correct"]]
        filtered_moves = {(t["baseline"], t["best"]): t["variants"][2] for t in data["transitions"] if t["variants"][2]}
        assert sum(filtered_moves.values()) == len(correct)
        for v in correct:
            assert filtered_moves.get((v["baseline_class"], v["best_class"]), 0) >= 1

        assert "no campaign" in _refusal(client.get(f"{API}/compare/campaigns", params={"ids": ",".join(ids)}, headers=h["outsider"]), 404)
        assert "at least 2" in _refusal(client.get(f"{API}/compare/campaigns", params={"ids": ids[0]}, headers=h["owner"]), 422)
