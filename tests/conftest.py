"""Shared test setup: GPU tests run only where a GPU is visible (`pytest -m gpu` on the device)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import pytest


@cache
def gpu_present() -> tuple[bool, str]:
    from bench_tasks.harness import gpu_status

    return gpu_status()


def pytest_collection_modifyitems(config, items):
    ok, why = gpu_present()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU here ({why}); run `pytest -m gpu` on a GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def harness_settings(tmp_path_factory):
    """Harness settings with a cache shared by the whole test session (compiles are reused)."""
    from bench_tasks.harness import HarnessSettings

    cache_dir = tmp_path_factory.mktemp("cm-cache")
    return HarnessSettings(cache_dir=cache_dir, max_seconds_per_size=0.5, min_seconds_per_size=0.05, warmup_seconds=0.02, min_pairs=10)


requires_nvcc = pytest.mark.skipif(shutil.which(os.environ.get("CUDAMASTER_NVCC", "nvcc")) is None, reason="nvcc not installed")


_REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def ray_address():
    """A local Ray cluster for the session: `ray start --head` on 127.0.0.1 with two GPUs DECLARED (`--num-gpus 2`;
    no GPU is needed: the tests' workers run graph.testing's FAKE GPU evaluator, with real nvcc compiles). Started
    once, stopped by its process group (its own session), never by name."""
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="cmray-", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")])),
           "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([str(ray_cli), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
                             "--num-gpus=2", "--num-cpus=4", "--include-dashboard=false", "--disable-usage-stats",
                             f"--temp-dir={temp}", "--object-store-memory=100000000"],
                            env=env, cwd=_REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=open(temp / "head.log", "w"))
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
