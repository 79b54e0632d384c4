"""Fixtures: a database per test (SQLite file, or a fresh PostgreSQL schema), a real uvicorn process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.support import forkserver
from tests.support.machine_env import clean_env
from tests.support.workers import postgres_url

PG_BASE = os.environ.get("CUDAMASTER_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REPO = Path(__file__).resolve().parents[2]


def _postgres_up() -> str | None:
    try:
        import psycopg

        with psycopg.connect(postgres_url(PG_BASE).replace("+psycopg", ""), connect_timeout=3):
            return None
    except Exception as exc:  # noqa: BLE001
        return f"PostgreSQL at {PG_BASE} not reachable: {exc}"


# The page-level tests (a real browser) run on SQLite only: what they store and read goes through the same
# service calls the API tests exercise on both databases (each browser module names its PostgreSQL twins).
sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'service.db'}"
        return
    why = _postgres_up()
    if why:
        pytest.skip(why)
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    plain = postgres_url(PG_BASE).replace("+psycopg", "")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{postgres_url(PG_BASE)}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def sessions(db_url):
    """A session factory on the test's database, migrated to head (for tests that drive the stores directly)."""
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.migrate import upgrade

    upgrade(db_url)
    engine = make_engine(db_url)
    yield make_sessionmaker(engine)
    engine.dispose()


def make_key(db_url: str, name: str = "test-team", *, role: str = "member", team: str = "default") -> str:
    from app.auth import create_key
    from app.db.engine import make_engine, make_sessionmaker
    from app.db.migrate import upgrade

    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            return create_key(session, name, role=role, team=team)[1]
    finally:
        engine.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listens_on(pid: int, port: int) -> bool:
    """Whether process `pid` holds a listening TCP socket on `port` (Linux: /proc/net/tcp and /proc/PID/fd)."""
    inodes = set()
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return True
    return False


def use_forkserver() -> bool:
    """Whether servers are forked from this process's fork server (tests/support/forkserver.py: no imports to
    pay per server) rather than started as `python -m uvicorn`: CUDAMASTER_TEST_FORKSERVER=0 turns it off."""
    return os.environ.get("CUDAMASTER_TEST_FORKSERVER", "1") != "0"


class Server:
    """`python -m uvicorn <factory> --factory` on a free loopback port (forked from a fork server that has
    imported the service already, or a fresh process: `use_forkserver`, `forked`)."""

    def __init__(
        self, db_url: str, tmp_path: Path, factory: str = "tests.service.fake_agent:create_fake_app", forked: bool | None = None, **env: str
    ):
        self.forked = use_forkserver() if forked is None else forked
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.factory = factory
        self.log = tmp_path / f"server-{self.port}.log"
        self.env = {
            **clean_env(),  # only what the test sets reaches the server (tests/support/machine_env.py)
            "CUDAMASTER_SERVICE__DATABASE_URL": db_url,
            "CUDAMASTER_SERVICE__POLL_SECONDS": "0.3",
            "CUDAMASTER_SERVICE__LEASE_SECONDS": "3",
            "CUDAMASTER_SERVICE__DRAIN_SECONDS": "10",
            "FAKE_AGENT_STATE_DIR": str(tmp_path / "fake-agent"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            **env,
        }
        self.proc: subprocess.Popen | forkserver.ForkedProcess | None = None

    def start(self) -> Server:
        """Start the server and wait until it answers. A free port can be taken by another test's server between
        `free_port` and our bind (two xdist workers drew the same one): our server then exits with EADDRINUSE, and
        until it does the other server answers /health. So the answer counts only once this server's own process
        holds the listening socket, and a lost bind is retried on a new port."""
        for _ in range(3):
            if self._start_once():
                return self
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        raise RuntimeError(f"server lost its port three times:\n{self.log.read_text()[-3000:]}")

    def _start_once(self) -> bool:
        if self.forked:
            self.proc = forkserver.start_uvicorn(
                self.factory, host="127.0.0.1", port=self.port, log_level="warning", env=self.env, cwd=REPO, log=self.log
            )
        else:
            self._popen()
        assert self.proc is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log.read_text()
                if "address already in use" in log.lower():
                    self.log.write_text(log + f"\n[test] port {self.port} was taken; retrying on another\n")
                    return False
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{log[-3000:]}")
            try:
                if httpx.get(self.url + "/api/v1/health", timeout=2).status_code == 200 and listens_on(self.proc.pid, self.port):
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.proc.kill()  # not left running: the fixture only stops the servers that started
        self.proc.wait(10)
        raise RuntimeError(f"server did not start:\n{self.log.read_text()[-3000:]}")

    def _popen(self) -> None:
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    self.factory,
                    "--factory",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--log-level",
                    "warning",
                ],
                cwd=REPO,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def serve_cli(env: dict[str, str], log: Path, *args: str, wait_s: float = 60) -> tuple[subprocess.Popen, str]:
    """`python -m app.cli serve --port P ARGS` (the real command) in the repository: see `serve_on_free_port`."""
    return serve_on_free_port(lambda port: ([sys.executable, "-m", "app.cli", "serve", "--port", str(port), *args], env), log, REPO, wait_s)


def serve_on_free_port(
    command: Callable[[int], tuple[list[str], dict[str, str]]], log: Path, cwd: Path, wait_s: float = 60
) -> tuple[subprocess.Popen, str]:
    """Start the service that `command(port)` (its argv and environment) runs on a free port, its output appended
    to `log`; return it and its URL once it answers /health (200, or 503 when degraded) from its own listening
    socket. As `Server.start`: a port another test's server took between `free_port` and our bind is retried on a
    new one (until our server exits with EADDRINUSE, the other one answers /health)."""
    for _ in range(3):
        port, start = free_port(), log.stat().st_size if log.exists() else 0
        argv, env = command(port)
        with open(log, "a") as out:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + wait_s
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=2).status_code in (200, 503) and listens_on(proc.pid, port):
                    return proc, url
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
            raise AssertionError(f"the service did not start within {wait_s:.0f} s:\n{log.read_text()[-3000:]}")
        if "address already in use" not in log.read_text()[start:].lower():
            raise AssertionError(f"the service exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        with open(log, "a") as out:
            out.write(f"\n[test] port {port} was taken; retrying on another\n")
    raise AssertionError(f"the service lost its port three times:\n{log.read_text()[-3000:]}")


@pytest.fixture
def server_factory(db_url, tmp_path):
    servers: list[Server] = []

    def start(**env) -> Server:
        server = Server(db_url, tmp_path, **env).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class HeldStream:
    """An event stream opened on a socket of its own (with a browser's cookies or an API key's header): its status,
    headers and, for a refusal, its body are read; a stream is then held open until `close` (the client leaves at
    once, not at the stream's next chunk)."""

    def __init__(self, base_url: str, path: str, *, cookies: httpx.Cookies | None = None, headers: dict | None = None) -> None:
        url = httpx.URL(base_url)
        self.sock = socket.create_connection((url.host, url.port), timeout=30)
        lines = [f"GET {path} HTTP/1.1", f"Host: {url.host}", "Accept: text/event-stream"]
        if cookies:
            lines.append("Cookie: " + "; ".join(f"{name}={value}" for name, value in cookies.items()))
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            assert chunk, f"the stream closed before its headers: {head!r}"
            head += chunk
        status_line, *header_lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
        self.status = int(status_line.split()[1])
        self.headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
        body = head.split(b"\r\n\r\n", 1)[1]
        while len(body) < int(self.headers.get("content-length", 0)):  # a refusal's whole body (a stream has none)
            chunk = self.sock.recv(4096)
            assert chunk, f"the answer closed before its body: {body!r}"
            body += chunk
        self.body = body.decode(errors="replace")

    def ends(self) -> bool:
        """Whether the server ends the stream (its last chunk, or the connection closed) before its second keep-alive
        ping from now (an idle stream's ": ping" comes every 15 s; a stream the server ends ends at its next check)."""
        seen = b""
        while b"\r\n0\r\n\r\n" not in seen[-16:] and seen.count(b": ping") < 2 and (chunk := self.sock.recv(4096)):
            seen += chunk
        return seen.count(b": ping") < 2

    def close(self) -> None:
        self.sock.close()


def read_sse(client: httpx.Client, url: str, headers: dict, timeout: float = 60) -> list[tuple[str, dict]]:
    """Read a job's event stream until its `end` event; returns [(event name, data)]."""
    events: list[tuple[str, dict]] = []
    with client.stream("GET", url, headers=headers, timeout=timeout) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        name, data = "message", []
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "" and data:
                events.append((name, json.loads("\n".join(data))))
                if name == "end":
                    return events
                name, data = "message", []
    return events


def wait_status(client: httpx.Client, url: str, headers: dict, statuses: set[str], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    job = {}
    while time.monotonic() < deadline:
        job = client.get(url, headers=headers).json()
        if job.get("status") in statuses:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job never reached {statuses}: {job.get('status')} ({job.get('message')})")


@pytest.fixture
def llm():
    """A scripted OpenAI-compatible endpoint on a loopback port (a FAKE model: tests queue its replies)."""
    from tests.support.openai_stub import ScriptedOpenAI

    server = ScriptedOpenAI({})
    server.start()
    yield server
    server.stop()
