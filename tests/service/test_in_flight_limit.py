"""The per-key in-flight limit holds under concurrency: 200 submissions at once with one key against
a limit of 8 make exactly 8 jobs, on SQLite and on PostgreSQL — with the FAKE agent (manual-mode
jobs stop at their first question, so every job stays in flight for the whole test)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from .conftest import make_key

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]
API = "/api/v1"
LIMIT, SUBMISSIONS = 8, 200


def test_200_concurrent_submissions_make_exactly_the_limit_with_fake_agent(db_url, server_factory):
    key = {"X-API-Key": make_key(db_url)}
    other = {"X-API-Key": make_key(db_url, "other")}
    server = server_factory(
        CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY=str(LIMIT), CUDAMASTER_SERVICE__MAX_SUBMITS_PER_MINUTE_PER_KEY=str(SUBMISSIONS + 10)
    )  # the per-minute limit (issue 40) out of the way: this counts the in-flight one
    limits = httpx.Limits(max_connections=SUBMISSIONS, max_keepalive_connections=SUBMISSIONS)
    with httpx.Client(base_url=server.url, timeout=120, limits=limits) as client:

        def submit(_: int) -> int:
            return client.post(f"{API}/jobs", json={"task": "vector_add", "manual": True}, headers=key).status_code

        with ThreadPoolExecutor(max_workers=64) as pool:
            codes = Counter(pool.map(submit, range(SUBMISSIONS)))
        assert codes == {201: LIMIT, 429: SUBMISSIONS - LIMIT}, codes
        page = client.get(f"{API}/jobs", params={"limit": 200}, headers=key).json()
        assert page["total"] == LIMIT
        assert {j["status"] for j in page["items"]} <= {"queued", "running", "waiting_for_input"}
        # The limit is per key, and a cancelled job frees its place.
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "manual": True}, headers=other)
        assert r.status_code == 201 and r.json()["status"] == "queued", r.text
        r = client.post(f"{API}/jobs/{page['items'][0]['id']}/cancel", headers=key)
        assert r.status_code == 200 and r.json()["id"] == page["items"][0]["id"], r.text
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "manual": True}, headers=key)
        assert r.status_code == 201 and r.json()["id"] not in {j["id"] for j in page["items"]}, r.text  # a new job in the freed place
        assert client.post(f"{API}/jobs", json={"task": "vector_add", "manual": True}, headers=key).status_code == 429
        # Resuming the cancelled job would make 9: refused the same way.
        r = client.post(f"{API}/jobs/{page['items'][0]['id']}/resume", headers=key)
        assert r.status_code == 429 and "CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY" in r.json()["detail"]
