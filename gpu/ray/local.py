"""A Ray cluster on this machine, for the tests and the figure script: `ray start --head --block` in a session
of its own (so it is stopped by its process group, never by name), on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def local_cluster(
    num_gpus: int | None = None, num_cpus: int = 4, env: dict[str, str] | None = None, timeout_s: float = 120.0
) -> Iterator[str]:
    """Yields the cluster's address. `num_gpus=None` lets Ray find the machine's GPUs; a number DECLARES that
    many (on a machine without GPUs, for workers that run a FAKE GPU evaluator)."""
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="cmray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    gpus = [] if num_gpus is None else [f"--num-gpus={num_gpus}"]
    command = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        "--block",
        f"--port={port}",
        "--node-ip-address=127.0.0.1",
        *gpus,
        f"--num-cpus={num_cpus}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
        "--object-store-memory=100000000",
    ]
    log = open(temp / "head.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        command,
        # No drain on SIGTERM: Ray's default (RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=30) has the head wait up to
        # 30 s for a node drain that never completes here (the whole process group is signalled at once, so the
        # GCS it would ask is gone), which is exactly how long the stop below waits before SIGKILL: every stop
        # took 30 s and ended in SIGKILL. This cluster serves no traffic that a drain would protect.
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0", **(env or {})},
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    address = f"127.0.0.1:{port}"
    try:
        _wait_up(proc, address, temp, timeout_s)
        yield address
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        except ProcessLookupError:
            pass
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _wait_up(proc: subprocess.Popen, address: str, temp: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"ray start exited with {proc.returncode}: {(temp / 'head.log').read_text()[-2000:]}")
        status = subprocess.run(
            [sys.executable, "-m", "ray.scripts.scripts", "status", f"--address={address}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if status.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Ray head at {address} did not come up in {timeout_s:.0f} s: {status.stderr[-1000:]}")
        time.sleep(1)
