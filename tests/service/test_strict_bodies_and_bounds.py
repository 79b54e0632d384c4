"""Request bodies read a boolean or a number only from one (issue 30, "smaller"): `"choose_flags": 0` or
`{"max_cost_usd": true}` is a 422, not false or 1.0; and the OpenAPI document's `limit`/`offset` bounds are the
ones the routes apply (the schema said `limit` up to 2^31-1 while the routes refuse more than the page size).
Against a real server with the FAKE agent."""

from __future__ import annotations

import httpx
import pytest

from .conftest import make_key

pytestmark = pytest.mark.timeout(120)
API = "/api/v1"


@pytest.fixture
def api(db_url, server_factory):
    key = make_key(db_url, role="admin")
    server = server_factory()
    with httpx.Client(base_url=server.url, timeout=30, headers={"X-API-Key": key}) as client:
        yield client


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/jobs", {"task": "vector_add", "choose_flags": 0}, "choose_flags"),
        ("/jobs", {"task": "vector_add", "manual": "yes"}, "manual"),
        ("/campaigns", {"selection": {"variants": ["vector_add/fp32"]}, "max_cost_usd": True}, "max_cost_usd"),
        ("/campaigns", {"selection": {"variants": ["vector_add/fp32"]}, "config": {"choose_flags": 0}}, "choose_flags"),
        ("/campaigns", {"selection": {"variants": ["vector_add/fp32"]}, "max_tokens": True}, "max_tokens"),
        ("/campaigns/cmp_00000000deadbeef/resume", {"max_cost_usd": True}, "max_cost_usd"),
        ("/campaigns/cmp_00000000deadbeef/resume", {"lift_caps": 1}, "lift_caps"),
    ],
)
def test_a_bool_or_number_of_the_wrong_json_type_is_422_with_fake_agent(api, path, body, field):
    r = api.post(API + path, json=body)
    assert r.status_code == 422, r.text
    assert any(e["loc"][-1] == field for e in r.json()["detail"]), r.text


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_openapi_limit_and_offset_bounds_are_the_routes_with_fake_agent(api):
    schema = api.get(f"{API}/openapi.json").json()
    checked = []
    for path, operations in schema["paths"].items():
        get = operations.get("get")
        if get is None or "{" in path:
            continue
        for param in get.get("parameters", []):
            if param["in"] != "query" or param["name"] not in ("limit", "offset"):
                continue
            top = param["schema"]["maximum"]
            at, over = api.get(path, params={param["name"]: top}), api.get(path, params={param["name"]: top + 1})
            assert at.status_code == 200, (path, param["name"], top, at.text[:300])
            assert over.status_code == 422, (path, param["name"], top + 1, over.status_code)
            checked.append((path, param["name"]))
    assert (f"{API}/jobs", "limit") in checked and (f"{API}/jobs", "offset") in checked, checked
    limits = {p: o["get"] for p, o in schema["paths"].items() if "get" in o}
    assert next(q for q in limits[f"{API}/jobs"]["parameters"] if q["name"] == "limit")["schema"]["maximum"] == 200
