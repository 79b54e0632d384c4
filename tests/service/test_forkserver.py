"""The tests' fork server (tests/support/forkserver.py): a forked uvicorn process must be the process that
`python -m uvicorn FACTORY --factory ...` would be (its environment, settings, exit statuses), and the plain
`python -m uvicorn` path (CUDAMASTER_TEST_FORKSERVER=0) must keep working."""

from __future__ import annotations

import ctypes
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import types
from functools import cache

import httpx
import pytest

from tests.support import forkserver

from .conftest import REPO, Server, listens_on, make_key

pytestmark = pytest.mark.timeout(180)

MARKER = "TESTS_FORKSERVER_MARKER"  # in the fork server's environment only


def create_env_app():
    """The FAKE agent's app, plus GET /test/env: what the server process sees (environment, settings, argv)."""
    from settings import load_settings
    from tests.service.fake_agent import create_fake_app

    app = create_fake_app()
    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p

    async def with_env_route(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/test/env":
            return await app(scope, receive, send)
        seen = {
            "environ": dict(os.environ),
            "c_marker": getenv(MARKER.encode()) is not None,  # the C library's environment too
            "database_url": load_settings().service.database_url,
            "max_running_jobs": load_settings().service.max_running_jobs,
            "cwd": os.getcwd(),
            "argv": sys.argv,
            "path": sys.path[:3],
        }
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(seen).encode()})

    return with_env_route


def server(tmp_path, name: str, forked: bool = True, **env: str) -> Server:
    (tmp_path / name).mkdir()
    return Server(f"sqlite:///{tmp_path / name / 'service.db'}", tmp_path / name, forked=forked, **env)


@pytest.fixture
def servers():
    started: list[Server] = []

    def start(s: Server) -> Server:
        started.append(s)
        return s.start()

    yield start
    for s in started:
        s.stop()


def test_forked_servers_answer_and_each_reads_its_own_database_and_settings(tmp_path, servers):
    one = server(tmp_path, "one", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="2")
    two = server(tmp_path, "two", CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="5")
    key = make_key(one.env["CUDAMASTER_SERVICE__DATABASE_URL"])  # a key in the first server's database only
    servers(one)
    servers(two)
    assert isinstance(one.proc, forkserver.ForkedProcess) and isinstance(two.proc, forkserver.ForkedProcess)
    assert one.proc.pid != two.proc.pid
    assert httpx.get(f"{one.url}/api/v1/health").json()["max_running_jobs"] == 2
    assert httpx.get(f"{two.url}/api/v1/health").json()["max_running_jobs"] == 5
    auth = {"Authorization": f"Bearer {key}"}
    me = httpx.get(f"{one.url}/api/v1/keys/me", headers=auth)
    assert me.status_code == 200 and me.json()["id"] == key.split("_")[1]  # the key of the first server's own database
    assert httpx.get(f"{two.url}/api/v1/keys/me", headers=auth).status_code in (401, 403)  # unknown there


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "python-m-uvicorn"])
def test_the_server_process_has_exactly_the_requested_environment(tmp_path, servers, forked):
    """Forked or started by the real CLI (the fallback), the server sees the env it was given, nothing of the
    fork server's (its *_NUM_THREADS and marker variables), the repository as its working directory, the CLI's argv."""
    s = servers(server(tmp_path, "env", forked=forked, factory="tests.service.test_forkserver:create_env_app"))
    assert isinstance(s.proc, forkserver.ForkedProcess if forked else subprocess.Popen)
    seen = httpx.get(f"{s.url}/test/env").json()
    assert seen["environ"] == s.env
    assert MARKER not in seen["environ"] and not seen["c_marker"]
    assert ("OPENBLAS_NUM_THREADS" in seen["environ"]) == ("OPENBLAS_NUM_THREADS" in os.environ)
    assert seen["database_url"] == s.env["CUDAMASTER_SERVICE__DATABASE_URL"] and seen["max_running_jobs"] == 4
    assert seen["cwd"] == str(REPO) and seen["path"] == ["", str(REPO), str(REPO)], seen["path"]  # uvicorn, python -m, PYTHONPATH
    assert seen["argv"][0].endswith(os.path.join("uvicorn", "__main__.py"))
    assert seen["argv"][1:] == [
        "tests.service.test_forkserver:create_env_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(s.port),
        "--log-level",
        "warning",
    ]


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "python-m-uvicorn"])
def test_exit_statuses_read_as_popens(tmp_path, servers, forked):
    first = servers(server(tmp_path, "first", forked=forked))
    assert first.proc is not None and first.proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        first.proc.wait(0.3)
    first.proc.send_signal(signal.SIGTERM)
    assert first.proc.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM after its clean shutdown
    assert first.proc.poll() == first.proc.returncode
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{first.url}/api/v1/health")

    second = servers(server(tmp_path, "second", forked=forked))
    assert second.proc is not None
    second.proc.kill()
    assert second.proc.wait(10) == -signal.SIGKILL and second.proc.poll() == -signal.SIGKILL
    second.proc.send_signal(signal.SIGTERM)  # on an ended process: nothing, as Popen
    assert second.proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "python-m-uvicorn"])
def test_a_server_that_fails_to_start_reports_the_clis_status(tmp_path, forked):
    s = server(tmp_path, "bad", forked=forked, CUDAMASTER_SERVICE__MAX_RUNNING_JOBS="not a number")
    with pytest.raises(RuntimeError, match="server exited with 1"):
        s.start()
    assert "MAX_RUNNING_JOBS" in s.log.read_text()


def test_forkserver_0_starts_python_m_uvicorn(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDAMASTER_TEST_FORKSERVER", "0")
    assert not Server("sqlite://", tmp_path).forked
    monkeypatch.delenv("CUDAMASTER_TEST_FORKSERVER")
    assert Server("sqlite://", tmp_path).forked


def test_servers_die_with_the_fork_server_and_the_next_start_starts_a_new_one(tmp_path, servers):
    first = servers(server(tmp_path, "first"))
    assert isinstance(first.proc, forkserver.ForkedProcess)
    old = forkserver.client()
    old.proc.kill()
    assert first.proc.wait(10) == -signal.SIGKILL  # PR_SET_PDEATHSIG
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{first.url}/api/v1/health")
    with pytest.warns(UserWarning, match="fork server exited with -9"):
        second = servers(server(tmp_path, "second"))
    assert forkserver.client() is not old
    health = httpx.get(f"{second.url}/api/v1/health")
    assert health.status_code == 200 and health.json()["running_jobs"] == 0, health.text


def test_shutdown_kills_and_reaps_the_servers_still_running(tmp_path, servers):
    s = servers(server(tmp_path, "left"))
    assert isinstance(s.proc, forkserver.ForkedProcess)
    fork_server = forkserver.client().proc
    forkserver.shutdown()
    assert fork_server.returncode == 0
    assert s.proc.poll() == -signal.SIGKILL


def test_filled_caches_names_a_cache_filled_before_a_fork(monkeypatch):
    @cache
    def settings() -> dict:
        return dict(os.environ)

    module = types.ModuleType("tests.cached_at_import")
    module.settings = settings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    assert "tests.cached_at_import.settings" not in forkserver.filled_caches()
    settings()
    assert "tests.cached_at_import.settings" in forkserver.filled_caches()


class _Impostor(http.server.BaseHTTPRequestHandler):
    """Another test's server on the same port: answers every GET with 200 (so /health looks fine)."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}')

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("forked", [True, False], ids=["forked", "python-m-uvicorn"])
def test_a_server_whose_port_another_server_took_answers_on_a_new_port_itself(db_url, tmp_path, forked):
    # Two xdist workers can draw the same free port: the other's /health must not pass for ours (a CI run's
    # requests went to another test's server and were refused its keys).
    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    taken = impostor.server_address[1]
    server = Server(db_url, tmp_path, forked=forked)
    server.port, server.url = taken, f"http://127.0.0.1:{taken}"
    try:
        server.start()
        assert server.port != taken and "was taken" in server.log.read_text()
        assert server.proc is not None and listens_on(server.proc.pid, server.port)
        key = make_key(db_url, role="admin")
        r = httpx.get(server.url + "/api/v1/keys/me", headers={"X-API-Key": key}, timeout=30)
        assert r.status_code == 200 and r.json()["role"] == "admin", r.text
    finally:
        server.stop()
        impostor.shutdown()
