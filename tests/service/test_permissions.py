"""Key permissions, tried FROM THE OTHER KEY'S SIDE, against a real server with the FAKE agent.

The owner (a member of team red) submits jobs; every other key then tries every route on them:
a teammate (member, red), a viewer of red, a member of another team (blue), and an admin (team ops).
The team reads; only the owner or an admin acts; viewers only read; another team sees nothing and
gets the same 404 as for a job that does not exist.
"""

from __future__ import annotations

from contextlib import closing

import httpx
import pytest

from .conftest import make_key, wait_status
from .test_api_with_fake_agent import CUSTOM

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
API = "/api/v1"
PEOPLE = {
    "owner": ("member", "red"),
    "mate": ("member", "red"),
    "viewer": ("viewer", "red"),
    "stranger": ("member", "blue"),
    "admin": ("admin", "ops"),
}
MISSING_JOB = "job_00000000deadbeef"


@pytest.fixture
def people(db_url, server_factory):
    keys = {who: make_key(db_url, who, role=role, team=team) for who, (role, team) in PEOPLE.items()}
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client, {who: {"X-API-Key": key} for who, key in keys.items()}


def submit(client: httpx.Client, headers: dict, **body) -> str:
    r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1} | body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def missing_like(client: httpx.Client, headers: dict, method: str, path: str, job_id: str, **kw) -> None:
    """The answer for `job_id` is exactly the answer for a job id that does not exist."""
    r = client.request(method, path, headers=headers, **kw)
    twin = client.request(method, path.replace(job_id, MISSING_JOB), headers=headers, **kw)
    assert r.status_code == twin.status_code == 404, (path, r.status_code, r.text)
    assert r.json()["detail"].replace(job_id, MISSING_JOB) == twin.json()["detail"], (r.text, twin.text)


def test_reads_of_a_members_jobs_from_every_other_keys_side_with_fake_agent(people):
    client, h = people
    done = submit(client, h["owner"])
    waiting = submit(client, h["owner"], manual=True)
    finished = wait_status(client, f"{API}/jobs/{done}", h["owner"], {"finished"})
    wait_status(client, f"{API}/jobs/{waiting}", h["owner"], {"waiting_for_input"})
    attempt = finished["attempts"][0]["id"]
    reads = [
        f"{API}/jobs/{done}",
        f"{API}/jobs/{done}/attempts/{attempt}/source",
        f"{API}/jobs/{done}/events",
        f"{API}/jobs/{waiting}",
        f"{API}/jobs/{waiting}/events",
    ]

    for who in ("owner", "mate", "viewer", "admin"):
        for path in reads:
            r = client.get(path, headers=h[who])
            assert r.status_code == 200, (who, path, r.text)
        listed = {j["id"] for j in client.get(f"{API}/jobs", headers=h[who]).json()["items"]}
        assert {done, waiting} <= listed, who

    for path in reads:
        job_id = done if done in path else waiting
        missing_like(client, h["stranger"], "GET", path, job_id)
    page = client.get(f"{API}/jobs", headers=h["stranger"]).json()
    assert page["total"] == 0 and page["items"] == []
    assert client.get(f"{API}/jobs", params={"task": "vector_add", "status": "finished"}, headers=h["stranger"]).json()["total"] == 0
    assert client.get(f"{API}/jobs/{done}", headers=h["mate"]).json()["team"] == "red"

    # And the other way round: the stranger's own job is invisible to team red, visible to the admin.
    theirs = submit(client, h["stranger"])
    for who in ("owner", "mate", "viewer"):
        missing_like(client, h[who], "GET", f"{API}/jobs/{theirs}", theirs)
        assert theirs not in {j["id"] for j in client.get(f"{API}/jobs", headers=h[who]).json()["items"]}
    r = client.get(f"{API}/jobs/{theirs}", headers=h["admin"])
    assert r.status_code == 200 and r.json()["id"] == theirs  # the admin reads that job itself
    assert client.get(f"{API}/jobs", headers=h["admin"]).json()["total"] == 3


def test_actions_on_a_members_job_from_every_other_keys_side_with_fake_agent(people):
    client, h = people
    job = submit(client, h["owner"], rounds=2, manual=True)
    url = f"{API}/jobs/{job}"
    before = wait_status(client, url, h["owner"], {"waiting_for_input"})

    def attempts(who: str, expected: int) -> None:
        for verb, body in (("cancel", None), ("resume", None), ("answer", {"answer": "tiling"})):
            if expected == 404:
                missing_like(client, h[who], "POST", f"{url}/{verb}", job, json=body)
                continue
            r = client.post(f"{url}/{verb}", json=body, headers=h[who])
            assert r.status_code == expected, (who, verb, r.text)
            assert "only the key that submitted it" in r.json()["detail"] or "viewer" in r.json()["detail"], r.text

    attempts("mate", 403)
    attempts("viewer", 403)
    attempts("stranger", 404)
    after = client.get(url, headers=h["owner"]).json()
    assert after["status"] == "waiting_for_input" and after["question"] == before["question"]  # nothing happened to it
    r = client.post(f"{API}/jobs", json={"task": "vector_add"}, headers=h["viewer"])
    assert r.status_code == 403 and "viewer" in r.json()["detail"]

    # An admin acts on another key's job; so does its owner; the others still cannot.
    r = client.post(f"{url}/answer", json={"answer": "tiling"}, headers=h["admin"])
    assert r.status_code == 200 and r.json()["id"] == url.rsplit("/", 1)[1], r.text
    wait_status(client, url, h["owner"], {"waiting_for_input"})  # round 2's question
    attempts("mate", 403)
    r = client.post(f"{url}/cancel", headers=h["owner"])
    assert r.status_code == 200 and r.json()["id"] == url.rsplit("/", 1)[1], r.text
    wait_status(client, url, h["owner"], {"cancelled"})
    for who, expected in (("mate", 403), ("viewer", 403)):
        assert client.post(f"{url}/resume", headers=h[who]).status_code == expected, who
    missing_like(client, h["stranger"], "POST", f"{url}/resume", job)
    r = client.post(f"{url}/resume", headers=h["admin"])
    assert r.status_code == 200 and r.json()["status"] == "queued"
    done = wait_status(client, url, h["owner"], {"waiting_for_input", "finished"})
    assert done["attempts"][0]["strategy"] == "tiling"  # round 1 ran on the admin's answer


def test_a_custom_task_is_private_to_the_key_that_created_it_with_fake_agent(people):
    client, h = people
    r = client.post(f"{API}/jobs", json={"custom": CUSTOM, "manual": True}, headers=h["owner"])
    assert r.status_code == 201, r.text
    task = r.json()["task"]
    assert task.startswith("ct_")
    absent = "ct_" + "f" * 16
    for who in ("mate", "stranger", "admin"):
        theirs = client.post(f"{API}/jobs", json={"task": task, "manual": True}, headers=h[who])
        twin = client.post(f"{API}/jobs", json={"task": absent, "manual": True}, headers=h[who])
        assert theirs.status_code == twin.status_code == 404, (who, theirs.text)
        assert theirs.json()["detail"].replace(task, absent) == twin.json()["detail"]  # existence does not leak
    assert client.post(f"{API}/jobs", json={"task": task}, headers=h["viewer"]).status_code == 403
    again = client.post(f"{API}/jobs", json={"task": task, "manual": True}, headers=h["owner"])
    assert again.status_code == 201 and again.json()["task"] == task
    listed = client.get(f"{API}/jobs", params={"task": task}, headers=h["admin"]).json()
    assert listed["total"] == 2 and {j["api_key_id"] for j in listed["items"]} == {h["owner"]["X-API-Key"].split("_")[1]}


def _signed_in(base_url: str, key: str) -> httpx.Client:
    """A browser-like client (its own cookie jar) signed in to the dashboard with `key`."""
    import re

    web = httpx.Client(base_url=base_url, timeout=30)
    form = web.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert form.status_code == 200 and csrf, form.text[:500]
    r = web.post("/login", data={"key": key, "csrf": csrf.group(1)})
    assert r.status_code == 303 and r.headers["location"] == "/jobs", (r.status_code, r.text[:300])
    return web


def test_dashboard_reads_of_a_members_job_from_every_other_keys_side_with_fake_agent(people):
    """The dashboard's job page and its live rows (`/jobs/{id}/rows`) follow the API's rules: the team and an
    admin read them; another team gets what a job that does not exist gets."""
    client, h = people
    job = submit(client, h["owner"])
    wait_status(client, f"{API}/jobs/{job}", h["owner"], {"finished"})
    for who in PEOPLE:
        with closing(_signed_in(str(client.base_url), h[who]["X-API-Key"])) as web:
            page, rows = web.get(f"/jobs/{job}"), web.get(f"/jobs/{job}/rows")
            if who == "stranger":
                missing_page, missing_rows = web.get(f"/jobs/{MISSING_JOB}"), web.get(f"/jobs/{MISSING_JOB}/rows")
                assert page.status_code == rows.status_code == 404, (page.status_code, rows.status_code)
                assert missing_page.status_code == missing_rows.status_code == 404
                assert page.text.replace(job, MISSING_JOB) == missing_page.text and "attempts" not in rows.text
                assert rows.json()["detail"].replace(job, MISSING_JOB) == missing_rows.json()["detail"]
                continue
            assert page.status_code == 200 and job in page.text, (who, page.status_code)
            assert rows.status_code == 200, (who, rows.text[:300])
            assert "<tr" in rows.json()["attempts"], who  # the finished job's attempt row, rendered
            odd = (web.get(f"/jobs/{job}", params={"attempt": "²"}), web.get(f"/jobs/{job}/rows", params={"chosen": "²"}))
            assert [r.status_code for r in odd] == [200, 200], who  # isdigit() but not int(): the best attempt, not a 500


MISSING_CAMPAIGN = "cmp_00000000deadbeef"


def test_dashboard_campaign_pages_from_every_other_keys_side_with_fake_agent(people):
    """The dashboard's campaign pages follow the campaigns API's rules: the team and an admin read them; another
    team gets what a missing campaign gets; only the key that created it or an admin sees and uses cancel and resume."""
    import re

    client, h = people
    r = client.post(f"{API}/campaigns", json={"selection": {"variants": ["vector_add/fp32"]}, "config": {"rounds": 1}}, headers=h["owner"])
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    wait_status(client, f"{API}/campaigns/{cid}", h["owner"], {"finished"})
    buttons = (f'action="/campaigns/{cid}/cancel"', f'action="/campaigns/{cid}/resume"')
    for who in PEOPLE:
        with closing(_signed_in(str(client.base_url), h[who]["X-API-Key"])) as web:
            page, live, listing = web.get(f"/campaigns/{cid}"), web.get(f"/campaigns/{cid}/live"), web.get("/campaigns")
            csrf = re.search(r'name="csrf" value="([^"]+)"', listing.text)
            assert listing.status_code == 200 and csrf, (who, listing.status_code)
            posts = {verb: web.post(f"/campaigns/{cid}/{verb}", data={"csrf": csrf.group(1)}) for verb in ("cancel", "resume")}
            if who == "stranger":
                missing_page, missing_live = web.get(f"/campaigns/{MISSING_CAMPAIGN}"), web.get(f"/campaigns/{MISSING_CAMPAIGN}/live")
                assert page.status_code == live.status_code == missing_page.status_code == missing_live.status_code == 404
                assert page.text.replace(cid, MISSING_CAMPAIGN) == missing_page.text
                assert live.json()["detail"].replace(cid, MISSING_CAMPAIGN) == missing_live.json()["detail"]
                assert cid not in listing.text
                for verb, answer in posts.items():
                    twin = web.post(f"/campaigns/{MISSING_CAMPAIGN}/{verb}", data={"csrf": csrf.group(1)})
                    assert answer.status_code == twin.status_code == 404, (verb, answer.status_code)
                    assert answer.text.replace(cid, MISSING_CAMPAIGN) == twin.text
                continue
            assert page.status_code == live.status_code == 200, (who, page.status_code, live.status_code)
            assert cid in listing.text and 'id="variants"' in page.text, who
            if who in ("owner", "admin"):
                assert all(b in page.text for b in buttons), who
                continue
            assert not any(b in page.text for b in buttons), who  # the mate and the viewer: no buttons
            for verb, answer in posts.items():
                assert answer.status_code == 403, (who, verb, answer.status_code)
                assert "only the key that submitted it" in answer.text, (who, verb)
    assert client.get(f"{API}/campaigns/{cid}", headers=h["owner"]).json()["status"] == "finished"  # nothing happened to it
