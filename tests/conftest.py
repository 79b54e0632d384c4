"""Shared test setup: GPU tests run only where a GPU is visible (`pytest -m gpu` on the device)."""

from __future__ import annotations

import os
import shutil
from functools import cache

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


requires_nvcc = pytest.mark.skipif(shutil.which(os.environ.get("CUDAMASTER_HARNESS__NVCC", "nvcc")) is None, reason="nvcc not installed")
