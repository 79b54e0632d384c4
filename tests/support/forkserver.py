"""A fork server for the tests' uvicorn processes: `python -m uvicorn FACTORY --factory ...` without the imports.

Why: the service tests start ~130 real servers; each fresh `python -m uvicorn` spends 1-2 s of CPU importing
(FastAPI, SQLAlchemy, LangGraph, openai, ...) before it serves, and the CPU suite runs on 2 cores.

Design:
- Each test process (xdist worker) starts, on first use, one child `python -m tests.support.forkserver` (`client()`).
  It imports PRELOAD and nothing more: no app, engine, settings object, event loop or thread is created (it
  checks that no functools cache of the project's own modules is filled, and that it is single-threaded before
  every fork: OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 in its environment keep numpy's OpenBLAS from
  starting its threads on import).
- It reads JSON lines on its stdin and answers on its stdout. `start` (factory, host, port, log level, env, cwd,
  log file): it forks; the child sets PR_SET_PDEATHSIG (it dies with the fork server), takes stdin from
  /dev/null and stdout+stderr from the log file, replaces os.environ (and so the C environment) by the request's
  env, chdirs to cwd, stays in the caller's process group (as Popen's child would), and runs uvicorn's __main__
  through runpy as `python -m uvicorn ...` does. The child never returns into the server's loop: `serve()`
  returns the request in the child, and the interpreter then ends as the CLI's would (uvicorn's exit status,
  SIGTERM re-raised after a clean shutdown, non-daemon threads joined, atexit handlers run). The fork server
  registers no atexit handler and writes nothing through Python's buffered stdio, so nothing runs or is flushed
  twice; a child that fails before uvicorn runs leaves with os._exit(70).
- It holds a pidfd per child: a child's exit wakes its selector, it reaps the child (waitpid, so the child's CPU
  time counts in its own and, once the test process waits for it, the test run's resource usage) and reports
  the exit status, as Popen's returncode (negative signal number when killed by a signal). `signal` requests go
  through the pidfd (never to a reused pid). When its stdin closes (the test process ends or calls
  `shutdown()`) it SIGKILLs and reaps the children still running, then exits.
- In the test process, `ForkedProcess` stands in for subprocess.Popen where the tests use it: pid, returncode,
  poll(), wait(timeout) (raises subprocess.TimeoutExpired), send_signal(), terminate(), kill(). A thread reads
  the fork server's replies and exit notices. If the fork server has died, the next `start_uvicorn` starts a
  new one and warns with the old one's exit status; the children of a dead fork server were SIGKILLed by
  PR_SET_PDEATHSIG and read as returncode -SIGKILL once they are gone (watched through pidfds of their own: the
  signal comes as the fork server dies, the exit and the closing of the child's socket a moment later).

Limits (what a forked server shares with its fork server, where a fresh process would not):
- Everything done at import time: modules that read the environment, the working directory or the time when
  imported see the fork server's (the test process's environment at the first start, plus SERVER_ENV, without
  the test's own variables: settings.service.DEFAULT_DB, built from HOME at import, is one such value). The service reads its settings when the app is created, in the
  child (settings.tree caches them per set of CUDAMASTER_* variables; the cache is empty at each fork). A module
  imported only by the child (not in PRELOAD) is imported there, from the child's environment.
- sys.path comes from the fork server's PYTHONPATH (the repository first, like the test's servers).
- OpenBLAS in a forked server is single-threaded; the hash seed (PYTHONHASHSEED) is the fork server's.
  `random` is reseeded at fork by CPython; other generators seeded at import would be shared (none known).
- Fork safety: the imported modules must not hold threads, locks taken by other threads, open sockets or
  connections at fork: checked for threads only (threading and /proc/self/task).
- A test that needs the real CLI path sets CUDAMASTER_TEST_FORKSERVER=0 (tests/service/conftest.py: Server).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import json
import os
import runpy
import select
import selectors
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from tests.support.machine_env import clean_env

REPO = Path(__file__).resolve().parents[2]

# What the service's test factories import before they serve (found with `python -X importtime` and by listing
# sys.modules in a server once it answered): the service, both test factories' agents, uvicorn's protocol,
# loop and lifespan modules, and the SQLite and PostgreSQL drivers.
PRELOAD = (
    "app.main",
    "tests.service.fake_agent",
    "tests.service.graph_app",
    "graph.runner",
    "graph.builder",
    "gpu.local",
    "gpu.fake",
    "bench_tasks.harness",
    "uvicorn.main",
    "uvicorn.loops.auto",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.on",
    "sqlalchemy.dialects.sqlite.pysqlite",
    "sqlalchemy.dialects.postgresql.psycopg",
)
_CACHED = type(functools.cache(lambda: None))  # what functools.cache and lru_cache return
OWN_PACKAGES = ("app", "graph", "gpu", "bench_tasks", "profiling", "tests")
# Single-threaded imports; and a marker the tests look for in a forked server (it must not be there).
SERVER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "TESTS_FORKSERVER_MARKER": "1"}
CHILD_SETUP_FAILED = 70
PR_SET_PDEATHSIG = 1


# -- the fork server (`python -m tests.support.forkserver`) ---------------------------------------------------------


def _send(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def filled_caches() -> list[str]:
    """functools caches of the project's own modules that hold something (state a fork would hand down)."""
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in OWN_PACKAGES:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, _CACHED) and value.cache_info().currsize:
                found.append(f"{name}.{attr}")
    return found


def thread_count() -> int:
    """Threads of this process, as the kernel sees them (a C library's threads included)."""
    return len(os.listdir("/proc/self/task"))


def serve(rfd: int, wfd: int) -> dict[str, Any] | None:
    """The fork server's loop. Returns a `start` request in the forked child; None in the fork server once its
    input has closed and its remaining children are killed and reaped."""
    selector = selectors.DefaultSelector()
    selector.register(rfd, selectors.EVENT_READ)
    children: dict[int, int] = {}  # pid -> pidfd
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.fd != rfd:  # a child's pidfd: it has exited
                pid = key.data
                selector.unregister(key.fd)
                os.close(children.pop(pid))
                _, status = os.waitpid(pid, 0)
                _send(wfd, {"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})
                continue
            data = os.read(rfd, 1 << 16)
            if not data:  # the test process is gone or done: nothing of ours outlives it
                for pid, pidfd in children.items():
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                    _send(wfd, {"exited": pid, "returncode": os.waitstatus_to_exitcode(status)})
                return None
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                if request["op"] == "signal":
                    pidfd = children.get(request["pid"])
                    if pidfd is not None:
                        signal.pidfd_send_signal(pidfd, request["signal"])
                    _send(wfd, {"id": request["id"]})
                    continue
                threads = (threading.active_count(), thread_count())
                if threads != (1, 1):
                    _send(wfd, {"id": request["id"], "error": f"fork server not single-threaded (threading, kernel): {threads}"})
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    for pidfd in (*children.values(), rfd, wfd):
                        os.close(pidfd)
                    return request
                children[pid] = os.pidfd_open(pid)
                selector.register(children[pid], selectors.EVENT_READ, pid)
                _send(wfd, {"id": request["id"], "pid": pid})


def _become(request: dict[str, Any], server_pid: int) -> None:
    """In the forked child: the process `python -m uvicorn` would be, up to the point where it runs uvicorn."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server_pid:  # the fork server died before the line above
        os._exit(CHILD_SETUP_FAILED)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the fork server ignores it; Python's default
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = os.getcwd()  # `python -m` puts the working directory first
    sys.argv = ["uvicorn", request["factory"], "--factory", "--host", request["host"], "--port", str(request["port"])]
    sys.argv += ["--log-level", request["log_level"]]


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the servers (same process group) directly
    rfd, wfd = os.dup(0), os.dup(1)  # the protocol's pipes; stray prints go to stderr, not into the protocol
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    for name in PRELOAD:
        importlib.import_module(name)
    leaks = filled_caches()
    if leaks:
        _send(wfd, {"error": f"caches filled at import time (a fork would hand them down): {leaks}"})
        sys.exit(1)
    _send(wfd, {"ready": os.getpid()})
    server_pid = os.getpid()
    request = serve(rfd, wfd)
    if request is None:
        return
    try:
        _become(request, server_pid)
    except BaseException:  # noqa: BLE001 - a forked child: any failure ends it here (os._exit), never in the parent's code
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(CHILD_SETUP_FAILED)
    runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)


# -- the test process's side ----------------------------------------------------------------------------------------


class ForkServerDied(RuntimeError):
    pass


def _wait_gone(pid: int, timeout: float = 30.0) -> None:
    """Wait until a dead fork server's child has exited too: PR_SET_PDEATHSIG's SIGKILL is delivered as the fork
    server dies, but the child's exit (and its listening socket's close) may come a moment later."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # gone already
    try:
        select.select([fd], [], [], timeout)  # a pidfd turns readable when its process exits
    finally:
        os.close(fd)


class ForkServer:
    """A running fork server and a thread reading what it says."""

    def __init__(self) -> None:
        env = {**clean_env(), **SERVER_ENV}  # what its modules read at import: no developer's settings
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO, env=env
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out = self.proc.stdout
        first = self._out.readline()
        if not first or "ready" not in json.loads(first):
            self.proc.kill()
            self.proc.wait()
            raise ForkServerDied(f"fork server did not start (exit status {self.proc.returncode}): {first.decode().strip()}")
        self._cond = threading.Condition()
        self._write = threading.Lock()
        self._replies: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._pids: set[int] = set()
        self._next_id = 0
        self.alive = True
        threading.Thread(target=self._read, name="forkserver-reader", daemon=True).start()

    def _read(self) -> None:
        for line in self._out:
            message = json.loads(line)
            with self._cond:
                if "exited" in message:
                    self._exits[message["exited"]] = message["returncode"]
                else:
                    self._replies[message["id"]] = message
                self._cond.notify_all()
        self.proc.wait()
        with self._cond:
            orphans = self._pids - self._exits.keys()
        for pid in orphans:  # killed by PR_SET_PDEATHSIG when the fork server died: read as such once gone
            _wait_gone(pid)
        with self._cond:
            self.alive = False
            for pid in orphans:
                self._exits[pid] = -signal.SIGKILL
            self._cond.notify_all()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        with self._write:
            if not self.alive:
                raise ForkServerDied(f"fork server exited with {self.proc.returncode}")
            self._next_id += 1
            key = message["id"] = self._next_id
            try:
                self.proc.stdin.write((json.dumps(message) + "\n").encode())
                self.proc.stdin.flush()
            except OSError as exc:
                raise ForkServerDied(f"fork server gone: {exc}") from None
        with self._cond:
            if not self._cond.wait_for(lambda: key in self._replies or not self.alive, timeout=60):
                raise ForkServerDied("fork server did not answer within 60 s")
            if key not in self._replies:
                raise ForkServerDied(f"fork server exited with {self.proc.returncode}")
            reply = self._replies.pop(key)
            if "pid" in reply:
                self._pids.add(reply["pid"])
            return reply

    def returncode(self, pid: int, timeout: float | None = 0) -> int | None:
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits, timeout=timeout)
            return self._exits.get(pid)

    def shutdown(self) -> None:
        """Close its input: it kills and reaps the children still running, then exits; wait for it."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        self.proc.wait()


class ForkedProcess:
    """A forked uvicorn process, as much of subprocess.Popen as the tests use."""

    def __init__(self, server: ForkServer, pid: int, args: list[str]) -> None:
        self._server, self.pid, self.args = server, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.returncode(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server.returncode(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None and self._server.alive:
            self._server.request({"op": "signal", "pid": self.pid, "signal": int(sig)})

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


_server: ForkServer | None = None
_lock = threading.Lock()


def client() -> ForkServer:
    """This process's fork server, started on first use and again (with a warning) if it has died."""
    global _server
    with _lock:
        if _server is not None and not _server.alive:
            warnings.warn(f"the tests' fork server exited with {_server.proc.returncode}; starting a new one", stacklevel=3)
            _server = None
        if _server is None:
            _server = ForkServer()
            atexit.register(_server.shutdown)
        return _server


def shutdown() -> None:
    """Stop this process's fork server, if it runs, and wait for it (its and its children's CPU time then
    count in this process's RUSAGE_CHILDREN, and so in `time pytest`)."""
    global _server
    with _lock:
        if _server is not None:
            _server.shutdown()
            _server = None


def start_uvicorn(factory: str, *, host: str, port: int, log_level: str, env: dict[str, str], cwd: Path, log: Path) -> ForkedProcess:
    """`python -m uvicorn FACTORY --factory --host HOST --port PORT --log-level LEVEL` in `cwd` with `env`,
    stdout and stderr appended to `log`: forked from the fork server."""
    request = {"op": "start", "factory": factory, "host": host, "port": port, "log_level": log_level}
    request |= {"env": dict(env), "cwd": str(cwd), "log": str(log)}
    server = client()
    reply = server.request(request)
    if "error" in reply:
        raise RuntimeError(f"fork server: {reply['error']}")
    args = [sys.executable, "-m", "uvicorn", factory, "--factory", "--host", host, "--port", str(port), "--log-level", log_level]
    return ForkedProcess(server, reply["pid"], args)


if __name__ == "__main__":
    main()
