"""Bounds on a custom task at submit (fault 9 of issue 10): how many sizes, how many elements per size
(CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES, CUDAMASTER_SERVICE__MAX_CUSTOM_ELEMENTS), and input draws that cannot be drawn or
give values the parameter's type cannot hold: refused with 422 before anything is compiled or stored.
Against a real server with the FAKE agent (never reached)."""

from __future__ import annotations

import httpx
import pytest

from .conftest import make_key
from .test_api_with_fake_agent import CUSTOM

pytestmark = pytest.mark.timeout(120)
API = "/api/v1"


def _refused(client: httpx.Client, headers: dict, custom: dict, *says: str) -> None:
    r = client.post(f"{API}/jobs", json={"custom": custom}, headers=headers)
    assert r.status_code == 422, r.text
    msg = r.json()["detail"][0]["msg"]
    assert all(s in msg for s in says), msg


def _draw(draw: str) -> dict:
    return CUSTOM | {"args": CUSTOM["args"] | {"X": {"role": "input", "length": "N", "draw": draw}}}


def test_custom_sizes_and_draws_are_bounded_at_submit_with_fake_agent(db_url, server_factory):
    headers = {"X-API-Key": make_key(db_url)}
    server = server_factory(CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES="4", CUDAMASTER_SERVICE__MAX_CUSTOM_ELEMENTS=str(1 << 24))
    with httpx.Client(base_url=server.url, timeout=60) as client:
        _refused(
            client,
            headers,
            CUSTOM | {"sizes": [{"N": 1 << k} for k in range(10, 15)]},
            "5 sizes",
            "limit is 4",
            "CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES",
        )
        # X and Y of 2^23 elements each: 2^24 together, at the limit; one more element each is over it.
        _refused(
            client,
            headers,
            CUSTOM | {"sizes": [{"N": 1024}, {"N": (1 << 23) + 1}]},
            "sizes[1]",
            f"{(1 << 24) + 2} elements",
            "CUDAMASTER_SERVICE__MAX_CUSTOM_ELEMENTS",
        )
        _refused(client, headers, _draw("uniform(0, 1e400)"), "args.X.draw")
        _refused(client, headers, _draw("const(1e39)"), "args.X.draw", "overflow")
        _refused(client, headers, _draw("uniform(nan, 1)"), "args.X.draw", "float32 cannot hold")
        _refused(client, headers, _draw("triangle(0, 1)"), "unknown draw")
        assert client.get(f"{API}/jobs", headers=headers).json()["total"] == 0
        ok = client.post(f"{API}/jobs", json={"custom": CUSTOM | {"sizes": [{"N": 1024}, {"N": 1 << 23}]}}, headers=headers)
        assert ok.status_code == 201, ok.text
