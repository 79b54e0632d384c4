"""A developer's own CUDAMASTER_* settings never reach the test servers: only what a test sets (issue 44: exporting
CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY=1 turned a passing test into `429 == 201`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.support.machine_env import MACHINE, clean_env

from .conftest import REPO, Server

DEVELOPER = "CUDAMASTER_SERVICE__MAX_JOBS_IN_FLIGHT_PER_KEY"


def test_importing_the_tests_conftest_removes_a_developers_settings():
    """The test process itself: tests/conftest.py removes them at import, before xdist's workers and any server."""
    env = os.environ | {DEVELOPER: "1", "CUDAMASTER_TEST_PROBE": "kept", MACHINE[0]: "/opt/nvcc", "PYTHONPATH": str(REPO)}
    code = "import json, os, tests.conftest; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('CUDAMASTER_')}))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert DEVELOPER not in seen
    assert seen["CUDAMASTER_TEST_PROBE"] == "kept" and seen[MACHINE[0]] == "/opt/nvcc"


@pytest.mark.parametrize("forked", [True, False], ids=["forkserver", "uvicorn"])
def test_a_server_sees_only_what_the_test_sets(tmp_path, monkeypatch, forked):
    """Exported after the tests started (as a developer's shell would have, had conftest not removed it): the server
    does not see it, and sees what the test passes."""
    monkeypatch.setenv(DEVELOPER, "1")
    server = Server("sqlite://", tmp_path, factory="tests.support.env_probe:create_app", forked=forked, CUDAMASTER_SERVICE__GPUS='["7"]')
    server.start()
    try:
        seen = httpx.get(server.url + "/env", timeout=10).json()
    finally:
        server.stop()
    assert DEVELOPER not in seen
    assert seen["CUDAMASTER_SERVICE__GPUS"] == '["7"]' and seen["CUDAMASTER_SERVICE__DATABASE_URL"] == "sqlite://"
    assert DEVELOPER not in clean_env()
