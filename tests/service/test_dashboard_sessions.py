"""Dashboard sessions end at logout (defect 3 of issue 30), against a real server with the FAKE agent.

After `POST /logout` the old cookie, replayed, gets the sign-in page on the dashboard and 401 on the API, and
its CSRF token no longer cancels a job. Logout ends only that session: the same key signed in from another
browser stays signed in; revoking the key ends every session of it."""

from __future__ import annotations

import re
from contextlib import closing

import httpx
import pytest

from app.auth import revoke_key
from app.db.engine import make_engine, make_sessionmaker

from .conftest import make_key, wait_status
from .test_permissions import _signed_in

pytestmark = pytest.mark.timeout(120)
API = "/api/v1"


def _csrf(web: httpx.Client) -> str:
    page = web.get("/jobs")
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert page.status_code == 200 and found, page.text[:300]
    return found.group(1)


def _replay(base_url: str, cookies: httpx.Cookies) -> httpx.Client:
    """A client that sends a copy of the cookies another client had (an attacker's replay)."""
    return httpx.Client(base_url=base_url, timeout=30, cookies=httpx.Cookies(cookies))


def test_old_cookie_is_signed_out_after_logout_and_another_browser_stays_signed_in_with_fake_agent(db_url, server_factory):
    key = make_key(db_url)
    headers = {"X-API-Key": key}
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=30) as api:
        job_id = api.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1, "manual": True}, headers=headers).json()["id"]
        wait_status(api, f"{API}/jobs/{job_id}", headers, {"waiting_for_input"})
        with closing(_signed_in(server.url, key)) as web, closing(_signed_in(server.url, key)) as other:
            csrf, stolen = _csrf(web), httpx.Cookies(web.cookies)
            r = web.get(f"{API}/jobs")
            assert r.status_code == 200 and [j["id"] for j in r.json()["items"]] == [job_id]  # the session reads the API like its key
            assert web.post("/logout", data={"csrf": csrf}).status_code == 303

            with closing(_replay(server.url, stolen)) as replay:
                page = replay.get("/jobs")
                assert page.status_code == 303 and page.headers["location"].startswith("/login"), page.status_code
                assert replay.get(f"{API}/jobs").status_code == 401
                assert replay.get(f"{API}/jobs/{job_id}").status_code == 401
                cancel = replay.post(f"/jobs/{job_id}/cancel", data={"csrf": csrf})
                assert cancel.status_code == 303 and cancel.headers["location"].startswith("/login"), cancel.status_code
            assert api.get(f"{API}/jobs/{job_id}", headers=headers).json()["status"] == "waiting_for_input"  # not cancelled

            page = other.get("/jobs")  # the same key's other session: still signed in
            assert page.status_code == 200 and job_id in page.text, page.status_code
            r = other.get(f"{API}/jobs")
            assert r.status_code == 200 and [j["id"] for j in r.json()["items"]] == [job_id]


def test_revoking_the_key_ends_all_its_sessions_with_fake_agent(db_url, server_factory):
    key = make_key(db_url)
    server = server_factory()
    with closing(_signed_in(server.url, key)) as first, closing(_signed_in(server.url, key)) as second:
        assert first.get("/jobs").status_code == second.get("/jobs").status_code == 200
        engine = make_engine(db_url)
        try:
            with make_sessionmaker(engine)() as session:
                assert revoke_key(session, key.split("_")[1])
        finally:
            engine.dispose()
        for web in (first, second):
            assert web.get("/jobs").status_code == 303
            assert web.get(f"{API}/jobs").status_code == 401
