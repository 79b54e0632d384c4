"""Limits over time and at once (issue 40, attacks 6, 7, 9, 10): a key's submissions per minute, its open event
streams, failed authentications per key id and per address (logged, never with the secret), every 429 with
`Retry-After`; a client that leaves a live stream logs no traceback; names refuse control and bidi characters with
a 422 naming the character; every answer says `nosniff`, the HTML report has a CSP. Real servers with the FAKE
agent, bounded by counts (small limits set per server), no clock."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.bench.sandbox_support import bwrap_works, have_nvcc

from .conftest import HeldStream, make_key
from .test_api_with_fake_agent import CUSTOM

pytestmark = [pytest.mark.timeout(240), pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)]
API = "/api/v1"


def _retry_after(r: httpx.Response) -> int:
    assert r.status_code == 429, (r.status_code, r.text[:300])
    value = int(r.headers["retry-after"])
    assert 1 <= value <= 60, value
    return value


def _open_streams(server_url: str, path: str, key: str, n: int) -> list[HeldStream]:
    streams = [HeldStream(server_url, path, headers={"X-API-Key": key}) for _ in range(n)]
    assert [s.status for s in streams] == [200] * n, [(s.status, s.body[:200]) for s in streams]
    return streams


def test_submits_streams_names_and_headers_are_bounded_with_fake_agent(db_url, server_factory, tmp_path):
    member, admin, viewer = (make_key(db_url, n, role=r) for n, r in (("m", "member"), ("a", "admin"), ("v", "viewer")))
    hold = tmp_path / "hold"
    hold.write_text("")  # the FAKE model holds every request: jobs stay running, their streams open
    server = server_factory(
        FAKE_MODEL_HOLD=str(hold), CUDAMASTER_SERVICE__MAX_SUBMITS_PER_MINUTE_PER_KEY="3", CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY="2"
    )
    with httpx.Client(base_url=server.url, timeout=30) as client:
        # A key's submissions per minute: the 4th of the minute is a 429 that says when to retry; another key submits.
        ids = []
        for _ in range(3):
            r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}, headers={"X-API-Key": member})
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        r = client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}, headers={"X-API-Key": member})
        _retry_after(r)
        assert "MAX_SUBMITS_PER_MINUTE_PER_KEY" in r.json()["detail"]
        assert client.post(f"{API}/jobs", json={"task": "vector_add", "rounds": 1}, headers={"X-API-Key": admin}).status_code == 201
        assert client.get(f"{API}/jobs", headers={"X-API-Key": member}).json()["total"] == 4

        # Open event streams per key: a viewer holds 2, its 3rd is a 429; the member's own 2 still open.
        path = f"{API}/jobs/{ids[0]}/events"
        held = _open_streams(server.url, path, viewer, 2)
        third = client.get(path, headers={"X-API-Key": viewer})
        _retry_after(third)
        assert "MAX_STREAMS_PER_KEY" in third.json()["detail"]
        mine = _open_streams(server.url, path, member, 2)
        # The viewer leaves one stream (its socket closes at once): its slot comes back (checked by count of tries,
        # not by a clock).
        held[0].close()
        for _ in range(100):
            again = HeldStream(server.url, path, headers={"X-API-Key": viewer})
            if again.status == 200:
                break
            again.close()
            time.sleep(0.1)
        assert again.status == 200
        # Revoking a key ends its open streams (a leaked key's stream does not outlive it); another key's go on.
        viewer_id = viewer.split("_")[1]
        assert client.post(f"{API}/keys/{viewer_id}/revoke", headers={"X-API-Key": admin}).status_code == 200
        assert held[1].ends() and again.ends()
        for s in [*held, *mine, again]:
            s.close()

        # Names: a bidi override, CR/LF and a blank name are refused with the character named.
        bad_key = client.post(f"{API}/keys", json={"name": "alice\u202egnp.exe"}, headers={"X-API-Key": admin})
        assert bad_key.status_code == 422 and "U+202E" in bad_key.text and "RIGHT-TO-LEFT OVERRIDE" in bad_key.text, bad_key.text
        campaign = {"selection": {"variants": ["vector_add/fp32"]}, "config": {"rounds": 1}}
        crlf = client.post(f"{API}/campaigns", json=campaign | {"name": "ok\r\nadmin: approved"}, headers={"X-API-Key": admin})
        assert crlf.status_code == 422 and "U+000D" in crlf.text, crlf.text
        blank = client.post(f"{API}/campaigns", json=campaign | {"name": "   "}, headers={"X-API-Key": admin})
        assert blank.status_code == 422 and "blank" in blank.text, blank.text
        created = client.post(f"{API}/campaigns", json=campaign | {"name": "حملة\u200cتجريبية"}, headers={"X-API-Key": admin})
        assert created.status_code == 201, created.text  # a zero-width non-joiner is writing, not spoofing

        # nosniff on every answer (JSON, errors, a source, an event stream's refusal, a page); a CSP on the HTML report.
        report = client.get(f"{API}/campaigns/{created.json()['id']}/report", params={"format": "html"}, headers={"X-API-Key": admin})
        assert report.status_code == 200 and "default-src 'none'" in report.headers["content-security-policy"]
        answers = [report, third, bad_key, client.get(f"{API}/health"), client.get(f"{API}/jobs"), client.get("/login")]
        answers.append(client.get(f"{API}/openapi.json"))
        assert all(a.headers.get("x-content-type-options") == "nosniff" for a in answers), [(a.url, a.headers) for a in answers]
    hold.unlink()
    time.sleep(1)  # let the streams' ends reach the log before it is read
    log = server.log.read_text()
    assert "Traceback" not in log and "aclose()" not in log and "already running" not in log, log[-3000:]


def test_failed_authentication_is_throttled_per_key_id_and_address_and_logged_with_fake_agent(db_url, server_factory):
    key, other = make_key(db_url, "k"), make_key(db_url, "other")
    key_id = key.split("_")[1]
    server = server_factory(
        CUDAMASTER_SERVICE__MAX_AUTH_FAILURES_PER_MINUTE_PER_KEY="3", CUDAMASTER_SERVICE__MAX_AUTH_FAILURES_PER_MINUTE_PER_ADDRESS="6"
    )
    wrong = f"cm_{key_id}_not-the-secret-{'x' * 20}"
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert [client.get(f"{API}/jobs", headers={"X-API-Key": wrong}).status_code for _ in range(3)] == [403] * 3
        blocked = client.get(f"{API}/jobs", headers={"X-API-Key": wrong})
        _retry_after(blocked)
        assert key_id in blocked.json()["detail"]
        _retry_after(client.get(f"{API}/jobs", headers={"X-API-Key": key}))  # the key id is held for the minute, secret or not
        # Per address: 3 more failures with unknown ids reach the address's 6; then even another valid key is refused.
        codes = [client.get(f"{API}/jobs", headers={"X-API-Key": f"cm_{n:012x}_guess"}).status_code for n in range(3)]
        assert codes == [403] * 3
        _retry_after(client.get(f"{API}/jobs", headers={"X-API-Key": other}))
    log = server.log.read_text()
    assert f"authentication failed: key id {key_id}" in log and "not-the-secret" not in log, log[-2000:]
    assert log.count("authentication failed") == 6, log[-3000:]


@pytest.mark.skipif(not have_nvcc(), reason="nvcc not installed")
def test_a_keys_submit_time_compiles_per_minute_are_bounded_with_fake_agent(db_url, server_factory, harness_settings):
    """Attack 6 at the service: the baseline compile of a custom task takes one of the key's compiles of the minute;
    past them the submit is a 429 with Retry-After, before any compile, and nothing is stored."""
    if not bwrap_works(harness_settings)[0]:
        pytest.skip("no working bubblewrap here")
    member, other = make_key(db_url, "m"), make_key(db_url, "other")
    server = server_factory(CUDAMASTER_SERVICE__MAX_COMPILES_PER_MINUTE_PER_KEY="1")
    broken = CUSTOM | {"baseline_cu": 'extern "C" void scale(const float* X, float* Y, int N) { this is not C++ }\n'}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        first = client.post(f"{API}/jobs", json={"custom": broken}, headers={"X-API-Key": member})
        assert first.status_code == 422 and "compile_log" in first.text, first.text[:300]  # it compiled, and failed
        second = client.post(f"{API}/jobs", json={"custom": broken}, headers={"X-API-Key": member})
        _retry_after(second)
        assert "MAX_COMPILES_PER_MINUTE_PER_KEY" in second.json()["detail"] and "compile_log" not in second.text
        assert client.post(f"{API}/jobs", json={"custom": broken}, headers={"X-API-Key": other}).status_code == 422
        assert client.get(f"{API}/jobs", headers={"X-API-Key": member}).json()["total"] == 0
