"""A local Ray cluster for the session: `ray start --head` on 127.0.0.1 with two GPUs DECLARED (`--num-gpus 2`;
there is no GPU: the workers run graph.testing's FAKE GPU evaluator, with real nvcc compiles). Started once
and stopped by its process group (its own session), never by name."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def ray_address():
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="cmray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([str(ray_cli), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
                             "--num-gpus=2", "--num-cpus=4", "--include-dashboard=false", "--disable-usage-stats",
                             f"--temp-dir={temp}", "--object-store-memory=100000000"],
                            env=env, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=open(temp / "head.log", "w"))
    address = f"127.0.0.1:{port}"
    try:
        import ray

        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"ray start exited with {proc.returncode}: {(temp / 'head.log').read_text()[-2000:]}")
            try:
                ray.init(address=address, namespace="cudamaster-tests", log_to_driver=False, configure_logging=False)
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        yield address
    finally:
        try:
            import ray

            ray.shutdown()
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            shutil.rmtree(temp, ignore_errors=True)
