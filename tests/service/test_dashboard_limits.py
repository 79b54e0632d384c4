"""The dashboard keeps the API's limits (issue 40, attack 7): its sign-in form goes through the one authentication
rule (app/services/keys.authenticate: failures throttled per key id and per address, and logged), and its live
stream (`/jobs/live`) holds one of the signed-in key's stream slots (CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY), as
the API's job event stream does. Real servers with the FAKE agent, bounded by counts (small limits), no clock."""

from __future__ import annotations

import re
import time
from contextlib import closing
from datetime import UTC, datetime
from urllib.parse import urlencode

import httpx
import pytest

from .conftest import HeldStream, make_key
from .test_permissions import _signed_in

pytestmark = [pytest.mark.timeout(180), pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)]


def _sign_in_attempt(base_url: str, key: str) -> httpx.Response:
    """One sign-in with `key` from a fresh browser (its own sign-in form and cookie)."""
    with httpx.Client(base_url=base_url, timeout=30) as web:
        form = web.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert form.status_code == 200 and csrf, form.text[:300]
        return web.post("/login", data={"key": key, "csrf": csrf.group(1)})


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:300]
    return found.group(1)


def test_wrong_secrets_on_the_sign_in_form_are_throttled_and_logged_with_fake_agent(db_url, server_factory):
    key, other = make_key(db_url, "k"), make_key(db_url, "other")
    key_id = key.split("_")[1]
    server = server_factory(
        CUDAMASTER_SERVICE__MAX_AUTH_FAILURES_PER_MINUTE_PER_KEY="3", CUDAMASTER_SERVICE__MAX_AUTH_FAILURES_PER_MINUTE_PER_ADDRESS="50"
    )
    wrong = f"cm_{key_id}_not-the-secret-{'x' * 20}"
    assert [_sign_in_attempt(server.url, wrong).status_code for _ in range(3)] == [403] * 3
    blocked = _sign_in_attempt(server.url, wrong)
    assert blocked.status_code == 429, (blocked.status_code, blocked.text[:300])
    assert 1 <= int(blocked.headers["retry-after"]) <= 60
    assert "too many failed authentications" in blocked.text and key_id in blocked.text and 'name="key"' in blocked.text
    right = _sign_in_attempt(server.url, key)  # the key id is held for the minute, secret or not (as the API does)
    assert right.status_code == 429 and "retry-after" in right.headers and "cm_session" not in right.cookies, right.status_code
    assert _sign_in_attempt(server.url, other).status_code == 303  # another key id signs in
    log = server.log.read_text()
    assert log.count(f"authentication failed: key id {key_id}") == 3 and "not-the-secret" not in log, log[-3000:]


def test_dashboard_live_streams_are_capped_per_signed_in_key_with_fake_agent(db_url, server_factory):
    key, other = make_key(db_url, "k"), make_key(db_url, "other")
    server = server_factory(CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY="2")
    live = "/jobs/live?" + urlencode({"ids": "", "since": datetime.now(UTC).isoformat()})
    with closing(_signed_in(server.url, key)) as web, closing(_signed_in(server.url, other)) as web_other:
        held = [HeldStream(server.url, live, cookies=web.cookies) for _ in range(2)]
        assert [s.status for s in held] == [200, 200]
        third = HeldStream(server.url, live, cookies=web.cookies)
        assert third.status == 429 and 1 <= int(third.headers["retry-after"]) <= 60, (third.status, third.headers)
        assert "MAX_STREAMS_PER_KEY" in third.body, third.body
        others = [HeldStream(server.url, live, cookies=web_other.cookies) for _ in range(2)]  # another key's slots are its own
        assert [s.status for s in others] == [200, 200]
        held[0].close()  # one page closes: its slot comes back (checked by count of tries, not by a clock)
        for _ in range(100):
            again = HeldStream(server.url, live, cookies=web.cookies)
            if again.status == 200:
                break
            again.close()
            time.sleep(0.1)
        assert again.status == 200
        # Signing out ends the session's open streams (as revoking its key does): no rows after the session is over.
        logout = web_other.post("/logout", data={"csrf": _csrf(web_other.get("/jobs").text)})
        assert logout.status_code == 303, logout.status_code
        assert all(s.ends() for s in others)
        for s in [*held, third, *others, again]:
            s.close()
    time.sleep(1)  # let the streams' ends reach the log before it is read
    log = server.log.read_text()
    assert "Traceback" not in log and "already running" not in log, log[-3000:]
