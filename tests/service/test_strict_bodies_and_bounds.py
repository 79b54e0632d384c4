"""Request bodies read a boolean or a number only from one (issue 30, "smaller"): `"choose_flags": 0` or
`{"max_cost_usd": true}` is a 422, not false or 1.0; and the OpenAPI document's `limit`/`offset` bounds are the
ones the routes apply (the schema said `limit` up to 2^31-1 while the routes refuse more than the page size).
Against a real server with the FAKE agent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .conftest import make_key

pytestmark = pytest.mark.timeout(120)
API = "/api/v1"
PAGED = {f"{API}/jobs", f"{API}/reviews", f"{API}/campaigns"}  # lists bounded by CUDAMASTER_SERVICE__MAX_PAGE_SIZE


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
            if param["name"] == "limit" and path in PAGED:  # one message, naming the setting the operator would raise
                assert "CUDAMASTER_SERVICE__MAX_PAGE_SIZE" in over.text, (path, over.text)
            checked.append((path, param["name"]))
    assert (f"{API}/jobs", "limit") in checked and (f"{API}/jobs", "offset") in checked, checked
    limits = {p: o["get"] for p, o in schema["paths"].items() if "get" in o}
    assert next(q for q in limits[f"{API}/jobs"]["parameters"] if q["name"] == "limit")["schema"]["maximum"] == 200


# Issue 40, attack 11: counts are integers, never a JSON true, "3" or 3.0.
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/jobs", {"task": "vector_add", "rounds": True}, "rounds"),
        ("/jobs", {"task": "vector_add", "rounds": "3"}, "rounds"),
        ("/jobs", {"task": "vector_add", "rounds": 3.0}, "rounds"),
        ("/jobs", {"task": "vector_add", "debug": False}, "debug"),
        ("/jobs", {"task": "vector_add", "profile_token_budget": 100.0}, "profile_token_budget"),
        ("/jobs", {"task": "vector_add", "spending_cap": {"tokens": True}}, "tokens"),
        ("/jobs", {"task": "vector_add", "spending_cap": {"usd": True}}, "usd"),
        ("/jobs", {"custom": {"name": "s", "prototype": "p", "args": {}, "sizes": [{"N": True}], "baseline_cu": "x"}}, "N"),
        ("/jobs", {"pytorch": {"name": "d", "reference_py": "x = 1", "sizes": [{"N": True}]}}, "N"),
        ("/jobs", {"pytorch": {"name": "d", "reference_py": "x = 1", "sizes": [{"N": "4"}]}}, "N"),
        ("/campaigns", {"selection": {"variants": ["vector_add/fp32"]}, "config": {"rounds": True}}, "rounds"),
        ("/campaigns", {"selection": {"variants": ["vector_add/fp32"]}, "max_in_flight": 2.0}, "max_in_flight"),
    ],
)
def test_a_count_that_is_not_a_json_integer_is_422_with_fake_agent(api, path, body, field):
    r = api.post(API + path, json=body)
    assert r.status_code == 422, r.text
    assert any(e["loc"][-1] == field for e in r.json()["detail"]), r.text


# A body's bounded numbers and counts, as the OpenAPI document states them: a value at the bound is not refused
# for that field, one past it is (the schema said 32 custom sizes while the service refused more than 16).
# String lengths are pydantic's alone (no route or service has a length rule of its own). Fields whose entries must
# each be a distinct known name bind on that first (never on their count): they are named here with why.
_CONTENT_BOUND = {
    ("selection", "variants"): "each entry must be a distinct TASK/PRECISION variant (about 100 exist)",
    ("models",): "keys are the 5 roles",
    ("config", "models"): "keys are the 5 roles",
}
_CUSTOM = {
    "name": "scale",
    "prototype": 'extern "C" void scale(const float* X, float* Y, int N)',
    "args": {"X": {"role": "input", "length": "N"}, "Y": {"role": "output", "length": "N"}, "N": {"role": "scalar", "value": "N"}},
    "sizes": [{"N": 1024}],
    "baseline_cu": "// does not define the function: refused after every count check, before any compile\n",
}

_PYTORCH = {
    "name": "double",
    "reference_py": "import torch\n\nN = 1024\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
    "        return x * 2\n\n\ndef get_inputs():\n    return [torch.randn(N)]\n\n\ndef get_init_inputs():\n    return []\n",
}


def _bounded(schema: dict, node: dict, path: tuple) -> list[tuple[tuple, str, Any]]:
    if "$ref" in node:
        return _bounded(schema, schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]], path)
    number = node.get("type") == "number"  # the document writes an integer's bounds as 10.0
    found = [
        (path, k, node[k] if number else int(node[k]))
        for k in ("maximum", "minimum", "exclusiveMinimum", "maxItems", "minItems", "maxProperties")
        if k in node
    ]
    for sub in node.get("anyOf", []):
        found += _bounded(schema, sub, path)
    for name, prop in node.get("properties", {}).items():
        found += _bounded(schema, prop, (*path, name))
    return found


def _count_value(path: tuple, n: int) -> Any:
    if path == ("custom", "sizes"):
        return [{"N": 1024 + i} for i in range(n)]
    if path == ("custom", "args"):
        names = [f"a{i}" for i in range(n)]
        return {
            "prototype": f'extern "C" void scale({", ".join(f"int {a}" for a in names)})',
            "args": {a: {"role": "scalar", "value": "1"} for a in names},
        }
    if path == ("pytorch", "sizes"):
        return [{"N": 1024 + i} for i in range(n)]
    raise AssertionError(f"no value for {path}")


def _body(kind: str, path: tuple, value: Any) -> dict:
    body: dict = {"custom": dict(_CUSTOM)} if path[0] == "custom" else ({"task": "vector_add"} if kind == "job" else {})
    if path[0] == "pytorch":
        body = {"pytorch": dict(_PYTORCH)}
    if kind == "campaign":
        body["selection"] = {"variants": ["vector_add/fp32"]}
    if path == ("custom", "args"):
        body["custom"].update(value)
        return body
    node = body
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return body


def _concerns(response: httpx.Response, field: str) -> bool:
    if response.status_code != 422:
        return False
    return any(e["loc"][-1] == field or f"{field}:" in e["msg"] for e in response.json()["detail"])


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_every_bound_of_a_body_in_the_openapi_schema_is_the_enforced_one_with_fake_agent(db_url, server_factory):
    key = make_key(db_url, role="admin")
    server = server_factory(
        CUDAMASTER_SERVICE__MAX_SUBMITS_PER_MINUTE_PER_KEY="1000", CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY="1000"
    )
    checked = []
    with httpx.Client(base_url=server.url, timeout=60, headers={"X-API-Key": key}) as api:
        schema = api.get(f"{API}/openapi.json").json()
        for kind, route in (("job", "/jobs"), ("campaign", "/campaigns")):
            body_schema = schema["paths"][API + route]["post"]["requestBody"]["content"]["application/json"]["schema"]
            for path, bound, limit in _bounded(schema, body_schema, ()):
                if path in _CONTENT_BOUND:
                    continue
                if bound in ("maxItems", "maxProperties", "minItems"):
                    at, past = _count_value(path, limit), _count_value(path, limit + 1 if bound != "minItems" else limit - 1)
                elif bound == "exclusiveMinimum":
                    at, past = limit + 1, limit
                elif isinstance(limit, float):
                    at, past = limit, (limit * 1.5 if bound == "maximum" else limit - 1)
                else:
                    at, past = limit, limit + 1 if bound == "maximum" else limit - 1
                if bound == "minItems" and limit - 1 < 1:
                    past = []
                field = "args" if path == ("custom", "args") else path[-1]
                ok = api.post(API + route, json=_body(kind, path, at))
                assert ok.status_code < 500 and not _concerns(ok, field), (path, bound, limit, ok.status_code, ok.text[:400])
                refused = api.post(API + route, json=_body(kind, path, past))
                assert refused.status_code == 422 and _concerns(refused, field), (path, bound, limit, refused.text[:400])
                checked.append((path, bound))
    assert (("pytorch", "sizes"), "maxItems") in checked
    assert (("custom", "sizes"), "maxItems") in checked and (("rounds",), "maximum") in checked, checked
