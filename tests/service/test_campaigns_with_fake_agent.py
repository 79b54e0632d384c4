"""Campaigns through a real uvicorn process running the service with the FAKE agent
(tests/service/fake_agent.py, FAKE_AGENT_VARIED=1: each variant has its own made-up outcome).

The report's numbers are checked against numbers computed here, by hand, from the stored jobs."""

from __future__ import annotations

import time
from collections import Counter, defaultdict

import httpx
import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from app import fmt
from app.cli import cli
from app.db.engine import make_engine
from bench_tasks import all_tasks, load_task

from .conftest import make_key
from .fake_agent import fake_variant

pytestmark = pytest.mark.timeout(600)

API = "/api/v1"
TAUS = (0, 1, 2, 4, 8, 16, 32)
ENDED = {"finished", "no_correct_kernel", "cancelled", "failed"}
ALL_VARIANTS = sorted((t.name, p) for t in all_tasks() for p in t.prototypes)


@pytest.fixture
def api(db_url, server_factory):
    key = make_key(db_url)
    server = server_factory(FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="4")
    client = httpx.Client(base_url=server.url, timeout=30)
    yield client, {"Authorization": f"Bearer {key}"}, server, db_url
    client.close()


def create(client, headers, **body) -> dict:
    r = client.post(f"{API}/campaigns", json=body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def wait_campaign(client, headers, cid: str, statuses: set[str], timeout: float = 400) -> dict:
    deadline = time.monotonic() + timeout
    c: dict = {}
    while time.monotonic() < deadline:
        c = client.get(f"{API}/campaigns/{cid}", headers=headers).json()
        if c["status"] in statuses and not (c["progress"]["running"] or c["progress"]["queued"]):
            return c
        time.sleep(0.3)
    raise AssertionError(f"campaign never reached {statuses}: {c.get('status')} {c.get('progress')}")


def wait_until(client, headers, cid: str, ended: int, timeout: float = 200) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        c = client.get(f"{API}/campaigns/{cid}", headers=headers).json()
        p = c["progress"]
        if p["finished"] + p["no_correct_kernel"] >= ended:
            return c
        time.sleep(0.1)
    raise AssertionError(f"fewer than {ended} jobs ended")


def stored(db_url: str, cid: str) -> dict:
    """The campaign's jobs, attempts and LLM calls, read straight from the database."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            jobs = [
                dict(r._mapping)
                for r in conn.execute(
                    text(
                        "SELECT v.task, v.precision, j.id, j.status, j.best_score, j.cost_usd, j.input_tokens, j.output_tokens, "
                        "j.created_at, j.finished_at FROM campaign_variants v LEFT JOIN jobs j ON j.id = v.job_id "
                        "WHERE v.campaign_id = :c ORDER BY v.position"
                    ),
                    {"c": cid},
                )
            ]
            ids = [j["id"] for j in jobs if j["id"]]
            attempts = [
                dict(r._mapping) for r in conn.execute(text("SELECT job_id, round, debug_step, verdict FROM attempts")) if r.job_id in ids
            ]
            calls = [
                dict(r._mapping)
                for r in conn.execute(text("SELECT job_id, role, input_tokens, output_tokens, cost_usd FROM llm_calls"))
                if r.job_id in ids
            ]
            all_jobs = conn.execute(text("SELECT count(*) FROM jobs")).scalar()
    finally:
        engine.dispose()
    return {"jobs": jobs, "attempts": attempts, "calls": calls, "all_jobs": all_jobs}


def hand_success(jobs: list[dict]) -> dict[int, float]:
    return {t: sum(1 for j in jobs if j["best_score"] is not None and (t == 0 or j["best_score"] >= t)) / len(jobs) for t in TAUS}


def check_report_against_store(report: dict, data: dict, rounds: int, tokens_per_call: int = 1) -> None:
    jobs = data["jobs"]
    assert report["variants"] == len(jobs)
    assert report["success"]["overall"] == {str(t): pytest.approx(v) for t, v in hand_success(jobs).items()}
    for key, of in (("precision", lambda j: j["precision"]), ("category", lambda j: load_task(j["task"]).category)):
        groups = defaultdict(list)
        for j in jobs:
            groups[of(j)].append(j)
        assert set(report["success"][key]) == set(groups)
        for name, group in groups.items():
            assert report["success"][key][name] == {str(t): pytest.approx(v) for t, v in hand_success(group).items()}, (key, name)
    assert report["totals"]["cost_usd"] == pytest.approx(sum(j["cost_usd"] for j in jobs))
    assert report["totals"]["tokens"] == sum(j["input_tokens"] + j["output_tokens"] for j in jobs)
    assert report["totals"]["avg_cost_usd"] == pytest.approx(sum(j["cost_usd"] for j in jobs) / len(jobs))
    roles = defaultdict(lambda: [0, 0.0])
    for c in data["calls"]:
        roles[c["role"]][0] += c["input_tokens"] + c["output_tokens"]
        roles[c["role"]][1] += c["cost_usd"]
    got = {r: (v["tokens"], pytest.approx(v["cost_usd"])) for r, v in report["per_role"].items()}
    assert got == {r: tuple(v) for r, v in roles.items()}
    lines = {(ln["task"], ln["precision"]): ln for ln in report["lines"]}
    by_job = defaultdict(list)
    for a in data["attempts"]:
        by_job[a["job_id"]].append(a)
    transitions = Counter()
    for j in jobs:
        ln, v = lines[(j["task"], j["precision"])], fake_variant(j["task"], j["precision"])
        mine = by_job[j["id"]]
        assert ln["best_p"] == j["best_score"] and ln["status"] == j["status"] and ln["cost_usd"] == pytest.approx(j["cost_usd"])
        assert ln["rounds_used"] == max(a["round"] for a in mine) == rounds
        assert ln["debug_steps"] == sum(a["debug_step"] > 0 for a in mine) == (rounds if v["debug"] else 0)
        assert ln["baseline_class"] == v["baseline_class"]
        if j["best_score"] is not None:
            assert j["best_score"] == pytest.approx(v["base_p"] * rounds)
            assert ln["best_class"] == v["best_class"] and ln["flags"] == v["flags"]
            transitions[(v["baseline_class"], v["best_class"])] += 1
        else:
            assert not v["correct"] and ln["best_class"] == "unknown"
    assert {(t["baseline"], t["best"]): t["variants"] for t in report["bottlenecks"]["transitions"]} == dict(transitions)
    planner_calls = sum(1 for c in data["calls"] if c["role"] == "planner")
    sent = sum(fake_variant(j["task"], j["precision"])["profile_tokens"] * rounds * tokens_per_call for j in jobs)
    assert report["profile_tokens"]["tokens_sent"] == sent and report["profile_tokens"]["planner_calls"] == planner_calls


def max_overlap(jobs: list[dict]) -> int:
    """The most jobs that were in flight (created, not yet ended) at one time."""
    points = sorted([(j["created_at"], 1) for j in jobs] + [(j["finished_at"], -1) for j in jobs], key=lambda p: (p[0], p[1]))
    best = cur = 0
    for _, d in points:
        cur += d
        best = max(best, cur)
    return best


def test_campaign_over_every_variant_with_fake_agent(api, tmp_path):
    client, headers, _, db_url = api
    c = create(client, headers, name="all", config={"rounds": 2, "debug": 1, "profile_mode": "filtered"}, max_in_flight=6)
    assert c["status"] == "running" and c["progress"]["variants"] == len(ALL_VARIANTS) == 100
    done = wait_campaign(client, headers, c["id"], {"finished"})
    assert done["progress"]["finished"] + done["progress"]["no_correct_kernel"] == 100
    assert "every variant's job has ended" in done["message"]
    data = stored(db_url, c["id"])
    assert sorted((j["task"], j["precision"]) for j in data["jobs"]) == ALL_VARIANTS
    assert data["all_jobs"] == 100 and len({j["id"] for j in data["jobs"]}) == 100  # one job per variant, none twice
    assert max_overlap(data["jobs"]) <= 6
    report = client.get(f"{API}/campaigns/{c['id']}/report", headers=headers).json()["campaigns"][0]
    check_report_against_store(report, data, rounds=2)
    expected_correct = sum(fake_variant(t, p)["correct"] for t, p in ALL_VARIANTS)
    assert done["progress"]["correct"] == expected_correct == round(report["success"]["overall"]["0"] * 100)

    # The CLI writes the same numbers as Markdown and HTML, from the database alone.
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["campaign", "report", c["id"], "--out", str(out), "--database-url", db_url])
    assert result.exit_code == 0, result.output
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    overall = "| overall | 100 | " + " | ".join(f"{100 * x:.0f}%" for x in hand_success(data["jobs"]).values()) + " |"
    assert overall in md
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "http" not in page.split("<body>")[1]
    first = data["jobs"][0]
    assert f"{first['task']}/{first['precision']}" in md and f"<td>{first['task']}/{first['precision']}</td>" in page


def test_kill_9_mid_campaign_and_restart_with_fake_agent(db_url, server_factory):
    key = make_key(db_url)
    headers = {"Authorization": f"Bearer {key}"}
    env = dict(FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0.2", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="3")
    server = server_factory(**env)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        c = create(client, headers, selection={"category": "activation"}, config={"rounds": 3, "debug": 0}, max_in_flight=3)
        before = wait_until(client, headers, c["id"], 4)["progress"]
    server.kill()
    assert before["running"] + before["queued"] > 0 and before["not_started"] > 0  # killed mid-campaign
    server = server_factory(**env)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        done = wait_campaign(client, headers, c["id"], {"finished"})
        report = client.get(f"{API}/campaigns/{c['id']}/report", headers=headers).json()["campaigns"][0]
    data = stored(db_url, c["id"])
    assert done["progress"]["variants"] == len(data["jobs"]) == data["all_jobs"] == 16
    assert all(j["status"] in ("finished", "no_correct_kernel") for j in data["jobs"])
    per_job = Counter(a["job_id"] for a in data["attempts"])
    calls = Counter(c["job_id"] for c in data["calls"])
    for j in data["jobs"]:  # every job's three rounds stored once: nothing lost, nothing twice
        rounds_attempts = 3 * (2 if fake_variant(j["task"], j["precision"])["debug"] else 1)
        assert per_job[j["id"]] == rounds_attempts and calls[j["id"]] == 6
    check_report_against_store(report, data, rounds=3)


def test_cancel_and_resume_the_whole_campaign_with_fake_agent(db_url, server_factory):
    headers = {"Authorization": f"Bearer {make_key(db_url)}"}
    server = server_factory(FAKE_AGENT_VARIED="1", FAKE_AGENT_STEP_SECONDS="0.3")
    client = httpx.Client(base_url=server.url, timeout=30)
    c = create(
        client, headers, selection={"precision": "bf16", "category": "activation"}, config={"rounds": 3, "debug": 0}, max_in_flight=2
    )
    deadline = time.monotonic() + 60
    while client.get(f"{API}/campaigns/{c['id']}", headers=headers).json()["progress"]["running"] < 2:
        assert time.monotonic() < deadline, "the campaign never had two jobs running"
        time.sleep(0.05)
    r = client.post(f"{API}/campaigns/{c['id']}/cancel", headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "cancelled" and "resume with" in r.json()["message"]
    cancelled = wait_campaign(client, headers, c["id"], {"cancelled"})
    at_cancel = stored(db_url, c["id"])
    started = [j for j in at_cancel["jobs"] if j["id"]]
    assert len(started) >= 2 and cancelled["progress"]["not_started"] == 8 - len(started)
    assert sum(j["status"] == "cancelled" for j in started) >= 1  # stopped mid-job (the fake's rounds take 0.3 s)
    assert client.post(f"{API}/campaigns/{c['id']}/cancel", headers=headers).status_code == 409
    # Every job of the cancelled campaign has ended (wait_campaign), each end waking the scheduler. A campaign created
    # now gets its first job from a later pass of the scheduler over the running campaigns: by then any pass that
    # would have started a job of the cancelled one has run.
    probe = create(client, headers, selection={"variants": ["vector_add/fp32"]}, config={"rounds": 1, "debug": 0}, max_in_flight=1)
    deadline = time.monotonic() + 60
    while not [j for j in stored(db_url, probe["id"])["jobs"] if j["id"]]:
        assert time.monotonic() < deadline, "the scheduler never started the probe campaign's job"
        time.sleep(0.05)
    assert stored(db_url, c["id"])["all_jobs"] == len(started) + 1  # the probe's job the only new one
    wait_campaign(client, headers, probe["id"], {"finished"})

    r = client.post(f"{API}/campaigns/{c['id']}/resume", headers=headers)
    assert r.status_code == 200 and r.json()["status"] == "running", r.text
    done = wait_campaign(client, headers, c["id"], {"finished"})
    data = stored(db_url, c["id"])
    assert data["all_jobs"] == 8 + 1  # the campaign's 8 variants and the probe's job
    assert [j["id"] for j in data["jobs"] if j["id"] in {s["id"] for s in started}] == [s["id"] for s in started]
    assert all(j["status"] in ("finished", "no_correct_kernel") for j in data["jobs"])  # cancelled ones resumed to the end
    assert done["progress"]["cancelled"] == 0
    assert client.post(f"{API}/campaigns/{c['id']}/resume", headers=headers).status_code == 409  # nothing left to resume
    per_job = Counter(a["job_id"] for a in data["attempts"])
    for j in data["jobs"]:  # the cancelled jobs continued from their checkpoints: every round stored once
        assert per_job[j["id"]] == 3 * (2 if fake_variant(j["task"], j["precision"])["debug"] else 1)
    client.close()


def test_spending_cap_stops_the_campaign_with_fake_agent(api):
    client, headers, _, db_url = api
    # each job (2 rounds) costs $0.006 (planner) + $0.03 (coder) = $0.036
    c = create(
        client, headers, selection={"category": "dense/algebra"}, config={"rounds": 2, "debug": 0}, max_in_flight=2, max_cost_usd=0.1
    )
    capped = wait_campaign(client, headers, c["id"], {"capped"})
    assert capped["message"].startswith("capped: spent $") and "of its $0.1000 cap" in capped["message"]
    assert "max_cost_usd" in capped["message"]
    p = capped["progress"]
    assert p["cost_usd"] >= 0.1 and p["not_started"] > 0 and p["running"] == p["queued"] == 0
    data = stored(db_url, c["id"])
    ended_before_cap = [j for j in data["jobs"] if j["status"] in ("finished", "no_correct_kernel")]
    # no job starts once the spend reaches the cap: the jobs that ran, less the last, spent under it
    assert sum(j["cost_usd"] for j in data["jobs"] if j["id"]) - max(j["cost_usd"] for j in ended_before_cap) < 0.1 + 0.036
    r = client.post(f"{API}/campaigns/{c['id']}/resume", headers=headers)
    assert r.status_code == 409 and "higher max_cost_usd" in r.json()["detail"]
    r = client.post(f"{API}/campaigns/{c['id']}/resume", json={"lift_caps": True}, headers=headers)
    assert r.status_code == 200, r.text
    done = wait_campaign(client, headers, c["id"], {"finished"})
    assert done["progress"]["not_started"] == 0 and done["max_cost_usd"] is None
    assert stored(db_url, c["id"])["all_jobs"] == done["progress"]["variants"] == 34


def test_campaign_permissions_and_bad_input_with_fake_agent(api):
    client, headers, _, db_url = api
    other_team = {"Authorization": f"Bearer {make_key(db_url, 'other', team='other')}"}
    viewer = {"Authorization": f"Bearer {make_key(db_url, 'viewer', role='viewer')}"}
    teammate = {"Authorization": f"Bearer {make_key(db_url, 'mate')}"}
    c = create(client, headers, selection={"variants": ["vector_add/fp32"]}, config={"rounds": 1})
    assert client.get(f"{API}/campaigns/{c['id']}", headers=other_team).status_code == 404
    assert client.get(f"{API}/campaigns", headers=other_team).json()["total"] == 0
    r = client.get(f"{API}/campaigns/{c['id']}", headers=viewer)
    assert r.status_code == 200 and r.json()["id"] == c["id"], r.text  # a viewer of the team reads it
    assert client.post(f"{API}/campaigns", json={}, headers=viewer).status_code == 403
    r = client.post(f"{API}/campaigns/{c['id']}/cancel", headers=teammate)
    assert r.status_code == 403 and "only the key that submitted it" in r.json()["detail"]  # checked before the state
    bad = client.post(f"{API}/campaigns", json={"selection": {"variants": ["vector_add/fp64"]}}, headers=headers)
    assert bad.status_code == 422 and "vector_add/fp64" in str(bad.json()["detail"])
    bad = client.post(f"{API}/campaigns", json={"selection": {"category": "nope"}}, headers=headers)
    assert bad.status_code == 422 and "choose one of" in str(bad.json()["detail"])
    bad = client.post(f"{API}/campaigns", json={"selection": {"variants": ["relu/fp32"], "precision": "fp32"}}, headers=headers)
    assert bad.status_code == 422
    wait_campaign(client, headers, c["id"], {"finished"})


def test_two_campaigns_side_by_side_with_fake_agent(api, tmp_path):
    client, headers, _, db_url = api
    a = create(
        client,
        headers,
        name="filtered R2",
        selection={"category": "loss"},
        config={"rounds": 2, "profile_mode": "filtered"},
        max_in_flight=3,
    )
    b = create(
        client, headers, name="full R1", selection={"category": "loss"}, config={"rounds": 1, "profile_mode": "full"}, max_in_flight=3
    )
    for c in (a, b):
        wait_campaign(client, headers, c["id"], {"finished"})
    both = client.get(f"{API}/campaigns/{a['id']}/report", params={"compare": b["id"]}, headers=headers).json()["campaigns"]
    ra, rb = both
    assert (ra["id"], rb["id"]) == (a["id"], b["id"]) and ra["variants"] == rb["variants"] == 6
    # tokens sent per profile mode: the FAKE agent sends 8x the filtered profile's tokens in full mode
    tokens = {
        f"{j['task']}/{j['precision']}": fake_variant(j["task"], j["precision"])["profile_tokens"] for j in stored(db_url, a["id"])["jobs"]
    }
    assert ra["profile_tokens"]["mode"] == "filtered" and ra["profile_tokens"]["tokens_sent"] == 2 * sum(tokens.values())
    assert rb["profile_tokens"]["mode"] == "full" and rb["profile_tokens"]["tokens_sent"] == 8 * sum(tokens.values())
    assert rb["profile_tokens"]["per_call"] == pytest.approx(8 * ra["profile_tokens"]["per_call"])
    for report, cid, rounds in ((ra, a["id"], 2), (rb, b["id"], 1)):
        check_report_against_store(report, stored(db_url, cid), rounds=rounds, tokens_per_call=8 if rounds == 1 else 1)
    md = client.get(f"{API}/campaigns/{a['id']}/report", params={"compare": b["id"], "format": "markdown"}, headers=headers)
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    diff = [line for line in md.text.splitlines() if line.startswith(f"|   difference from {a['id']} |")]
    assert len(diff) == 1
    cells = [c.strip() for c in diff[0].strip("|").split("|")]
    expected = [f"{100 * (rb['success']['overall'][str(t)] - ra['success']['overall'][str(t)]):+.0f} pt" for t in TAUS]
    assert cells[3 : 3 + len(TAUS)] == expected
    assert cells[-1] == fmt.num(rb["profile_tokens"]["per_call"] - ra["profile_tokens"]["per_call"], 1, signed=True)
    page = client.get(f"{API}/campaigns/{a['id']}/report", params={"compare": b["id"], "format": "html"}, headers=headers)
    assert page.headers["content-type"].startswith("text/html") and "Campaigns side by side (ablation)" in page.text
