"""Shared test setup: GPU tests run only where a GPU is visible (`pytest -m gpu` on the device)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

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
    from bench_tasks.harness import get_settings

    cache_dir = tmp_path_factory.mktemp("cm-cache")
    return get_settings(cache_dir=cache_dir, max_seconds_per_size=0.5, min_seconds_per_size=0.05, warmup_seconds=0.02, min_pairs=10)


class Ahead:
    """Work for every parameter set of one parametrized test that this session collected, started at once on all
    cores (an nvcc compile keeps one core busy): each test then waits only for its own result, while the next ones
    are already compiling. `get(*params)` returns the result or raises what the work raised, in that test."""

    def __init__(self, request: pytest.FixtureRequest, test: str, names: tuple[str, ...], work: Callable[..., Any]) -> None:
        self.work = work
        keys = sorted(
            {
                tuple(item.callspec.params[n] for n in names)
                for item in request.session.items
                if getattr(item, "originalname", None) == test and hasattr(item, "callspec")
            },
            key=repr,
        )
        pool = ThreadPoolExecutor(max(1, min(len(keys), os.cpu_count() or 1)), thread_name_prefix="ahead")
        self.futures: dict[tuple, Future] = {k: pool.submit(work, *k) for k in keys}
        pool.shutdown(wait=False)

    def get(self, *params: Any) -> Any:
        future = self.futures.get(params)
        return future.result() if future is not None else self.work(*params)


requires_nvcc = pytest.mark.skipif(shutil.which(os.environ.get("CUDAMASTER_HARNESS__NVCC", "nvcc")) is None, reason="nvcc not installed")


_REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ray_address():
    """A local Ray cluster for the session (graph/cluster/local.py) with two GPUs DECLARED (`--num-gpus 2`; no GPU
    is needed: the tests' workers run graph.testing's FAKE GPU evaluator, with real nvcc compiles). Started once.

    CUDAMASTER_TEST_RAY_GPUS=detect (scripts/device_checks.sh ray-tests, on a GPU machine) lets Ray find the real GPUs."""
    pytest.importorskip("ray")
    import ray

    from graph.cluster.local import local_cluster

    wanted = os.environ.get("CUDAMASTER_TEST_RAY_GPUS", "2")
    # The workers import the tests' own evaluators (tests.cluster.fakes): the repository on their path.
    path = os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")]))
    with local_cluster(None if wanted == "detect" else int(wanted), env={"PYTHONPATH": path}) as address:
        ray.init(address=address, namespace="cudamaster-tests", log_to_driver=False, configure_logging=False)
        try:
            yield address
        finally:
            ray.shutdown()
