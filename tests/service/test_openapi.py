"""The OpenAPI document is the contract: every status a route can answer is documented, and
schemathesis, fuzzing a live server (FAKE agent) from that document, finds no server error, no
undocumented status, and no response that breaks its documented schema or content type."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import make_key

API = "/api/v1"
J = f"{API}/jobs/{{job_id}}"
C = f"{API}/campaigns/{{campaign_id}}"
# Every route that takes a key can answer 429: its key id or address failed to authenticate too often (issue 40).
EXPECTED = {
    ("post", f"{API}/jobs"): {201, 400, 401, 403, 404, 413, 422, 429, 503},
    ("get", f"{API}/jobs"): {200, 401, 403, 422, 429},
    ("get", J): {200, 401, 403, 404, 422, 429},
    ("get", f"{J}/attempts/{{attempt_id}}/source"): {200, 401, 403, 404, 422, 429},
    ("get", f"{J}/events"): {200, 401, 403, 404, 422, 429},
    ("get", f"{J}/export"): {200, 401, 403, 404, 409, 422, 429},
    ("post", f"{J}/cancel"): {200, 401, 403, 404, 409, 422, 429},
    ("post", f"{J}/resume"): {200, 401, 403, 404, 409, 422, 429, 503},
    ("post", f"{J}/answer"): {200, 400, 401, 403, 404, 409, 413, 422, 429, 503},
    ("get", f"{API}/tasks"): {200, 401, 403, 429},
    ("get", f"{API}/keys"): {200, 401, 403, 429},
    ("post", f"{API}/keys"): {201, 400, 401, 403, 413, 422, 429},
    ("get", f"{API}/keys/me"): {200, 401, 403, 429},
    ("post", f"{API}/keys/{{key_id}}/revoke"): {200, 401, 403, 404, 409, 422, 429},
    ("get", f"{API}/health"): {200},
    ("post", f"{API}/campaigns"): {201, 400, 401, 403, 413, 422, 429, 503},
    ("get", f"{API}/campaigns"): {200, 401, 403, 422, 429},
    ("get", f"{C}"): {200, 401, 403, 404, 422, 429},
    ("post", f"{C}/cancel"): {200, 401, 403, 404, 409, 422, 429},
    ("post", f"{C}/resume"): {200, 400, 401, 403, 404, 409, 413, 422, 429, 503},
    ("get", f"{C}/report"): {200, 401, 403, 404, 422, 429},
    ("get", f"{API}/gpus"): {200, 401, 403, 429},
    ("get", f"{API}/leaderboard"): {200, 401, 403, 404, 422, 429},
    ("get", f"{API}/costs"): {200, 401, 403, 422, 429},
    ("get", f"{API}/reviews"): {200, 401, 403, 422, 429},
    ("post", f"{API}/reviews/{{attempt_id}}"): {200, 400, 401, 403, 404, 409, 413, 422, 429},
    ("get", f"{API}/compare/jobs"): {200, 401, 403, 404, 422, 429},
    ("get", f"{API}/compare/attempts"): {200, 401, 403, 404, 422, 429},
    ("get", f"{API}/compare/campaigns"): {200, 401, 403, 404, 422, 429},
    ("post", f"{API}/suites"): {201, 400, 401, 403, 413, 422, 429, 503},
    ("get", f"{API}/suites"): {200, 401, 403, 429},
    ("get", f"{API}/suites/{{suite_id}}"): {200, 401, 403, 404, 422, 429},
}


def test_every_route_documents_the_statuses_it_can_answer(tmp_path):
    from app.main import create_app
    from settings import ServiceSettings

    spec = create_app(ServiceSettings(database_url=f"sqlite:///{tmp_path / 's.db'}")).openapi()
    documented = {
        (method, path): {int(code) for code in op["responses"]} for path, ops in spec["paths"].items() for method, op in ops.items()
    }
    assert documented == EXPECTED
    for (method, path), codes in EXPECTED.items():
        responses = spec["paths"][path][method]["responses"]
        for code in codes - {200, 201}:
            content = responses[str(code)]["content"]
            assert list(content) == ["application/json"], (method, path, code, content)  # errors are JSON, even on a stream
            if code == 422:
                assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/HTTPValidationError"}
            else:
                assert content["application/json"]["schema"]["properties"]["detail"]["type"] == "string"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_schemathesis_finds_no_server_error_with_fake_agent(db_url, server_factory, tmp_path):
    admin = make_key(db_url, "fuzzer", role="admin", team="ops")
    server = server_factory()
    seed = os.environ.get("CUDAMASTER_FUZZ_SEED", "20261203")
    # Bounded: 10 cases per operation in the fuzzing phase, plus the coverage phase's boundary cases
    # (about 35 s on the 2-core CI machine). Revoking keys is left out: the fuzzer
    # would revoke its own key (tests/service/test_keys.py covers revocation). On PostgreSQL only valid data
    # (`--mode positive`: about 800 cases of the 1,700): invalid data is refused by the request models before any
    # query, the same on either database, and is sent on SQLite; valid data reaches the database, where the two
    # differ (string lengths, NUL bytes, integer ranges). `positive_data_acceptance`
    # is left out because the document cannot say "exactly one of task or custom" or the configured page
    # size; `allow_header_conformance` because Starlette answers 405 per route, not per path.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            f"{server.url}{API}/openapi.json",
            "--header",
            f"Authorization: Bearer {admin}",
            "--max-examples",
            "10",
            "--seed",
            seed,
            "--mode",
            "all" if db_url.startswith("sqlite") else "positive",
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            "--exclude-path",
            f"{API}/keys/{{key_id}}/revoke",
            "--generation-database",
            "none",
            "--request-timeout",
            "60",  # slack for a loaded machine (the suite runs on several xdist workers): a slow answer is not a server error
            "--no-color",
            "--report-dir",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=tmp_path,
    )  # its cache (.schemathesis/) goes there
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    tested = len(EXPECTED) - 1  # every operation but the excluded revoke
    assert " passed" in out.stdout and f"Tested: {tested}" in out.stdout, out.stdout[-3000:]
    server.stop()
    assert "Traceback" not in server.log.read_text()
