"""Shared test setup: GPU tests run only where a GPU is visible (`pytest -m gpu` on the device), and never on
several xdist workers at once (the CPU suite does: pyproject's addopts, tests/support/workers.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.support.machine_env import remove_developer_settings
from tests.support.workers import compile_cache, worker, worker_index

# A developer's own CUDAMASTER_* settings never reach the tests, their servers or CLI runs: only what a test sets
# (the machine's own variables and the tests' switches stay: tests/support/machine_env.py). Removed here, at import,
# before xdist starts its workers (they inherit this environment) and before any settings object is built.
remove_developer_settings(os.environ)

pytest_plugins = ["tests.support.sharding"]  # --shard I/N (scripts/device_gpu_suite.sh)


@cache
def gpu_present() -> tuple[bool, str]:
    from bench_tasks.harness import gpu_status

    return gpu_status()


def _gpu_tests_selected(config: pytest.Config) -> bool:
    """Whether this run would run GPU tests: `-m` selects gpu-marked ones, or no `-m` is given on a GPU machine."""
    expression = config.getoption("markexpr", "")
    if not expression:
        return gpu_present()[0]
    from _pytest.mark.expression import Expression

    compiled = Expression.compile(expression)
    return any(compiled.evaluate(lambda name, marks=marks, **kwargs: name in marks) for marks in ({"gpu"}, {"gpu", "slow"}))


@pytest.hookimpl(tryfirst=True)  # before xdist's own pytest_configure starts the workers
def pytest_configure(config):
    """GPU tests are serial: they time kernels on one GPU, and tests running beside them would change the times."""
    parallel = worker() is None and config.pluginmanager.has_plugin("xdist") and config.getoption("numprocesses", None)
    if parallel and _gpu_tests_selected(config):
        config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []
        config.stash[_SERIAL_FOR_GPU] = True


_SERIAL_FOR_GPU = pytest.StashKey[bool]()


def pytest_unconfigure(config):
    """Stop this process's fork server (tests/support/forkserver.py), if the service tests started one, and wait
    for it: its CPU time and its servers' then count in this process's, as a `python -m uvicorn` child's did."""
    from tests.support import forkserver

    forkserver.shutdown()


def pytest_report_header(config):
    if config.stash.get(_SERIAL_FOR_GPU, False):
        return "xdist: off, serial run (GPU tests selected: their kernel timings need the GPU to themselves)"
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "ray_address" in getattr(item, "fixturenames", ()):
            # One local Ray cluster per run, not one per xdist worker: its tests share one worker.
            item.add_marker(pytest.mark.xdist_group("ray"))
    _xdist_group_suffixes(config, items)
    for item in items:
        if "gpu" in item.keywords:
            # In the JUnit XML (<property name="marker" value="gpu"/>, and its node id): scripts/ci_check.py tells a
            # GPU test's skip on the CPU machine from a skip that hides a test (CI fails on those), and the device's
            # records (scripts/junit_summary.py --collected) name every GPU test by its id.
            item.user_properties.extend([("marker", "gpu"), ("nodeid", item.nodeid)])
    ok, why = gpu_present()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU here ({why}); run `pytest -m gpu` on a GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _xdist_group_suffixes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` sends the tests whose node ids end in `@GROUP` to one worker. xdist 3.8.0 appends the
    suffix by setting `item._nodeid`, which pytest 9 no longer reads (a node's id is `item._id`): without this,
    xdist_group marks are silently ignored. Appends it as xdist would (remove when xdist does it again)."""
    if worker() is None or not config.getvalue("loadgroup"):
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")


@pytest.fixture(scope="session")
def harness_settings(tmp_path_factory):
    """Harness settings with a cache shared by the whole test session, by all its xdist workers (compiles are
    reused; the cache is content addressed and each entry locked while it compiles: bench_tasks/harness/compile.py)."""
    from settings import get_harness_settings

    cache_dir = compile_cache(tmp_path_factory)
    return get_harness_settings(cache_dir=cache_dir, max_seconds_per_size=0.5, min_seconds_per_size=0.05, warmup_seconds=0.02, min_pairs=10)


class Ahead:
    """Work for every parameter set of one parametrized test that this session collected, started at once on all
    cores (an nvcc compile keeps one core busy): each test then waits only for its own result, while the next ones
    are already compiling. `get(*params)` returns the result or raises what the work raised, in that test.

    Under xdist every worker collects every test and starts the work of those it runs: the work is expected to
    store its result in a cache the workers share (harness_settings' cache_dir), and each worker starts it in
    another order (rotated by its index), so that two workers rarely compile the same thing at once (one would
    wait for the other's lock) and each thing is compiled once for the run. A test whose work has not started
    yet runs it at once, itself, rather than wait for its turn."""

    def __init__(self, request: pytest.FixtureRequest, test: str, names: tuple[str, ...], work: Callable[..., Any]) -> None:
        self.work = work
        keys = sorted(
            {
                tuple(item.callspec.params[n] for n in names)
                for item in request.session.items
                if getattr(item, "originalname", None) == test and hasattr(item, "callspec") and not item.get_closest_marker("skip")
            },
            key=repr,
        )
        if keys and worker() is not None:
            start = worker_index() * len(keys) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
            keys = keys[start:] + keys[:start]
        pool = ThreadPoolExecutor(max(1, min(len(keys), os.cpu_count() or 1)), thread_name_prefix="ahead")
        self.futures: dict[tuple, Future] = {k: pool.submit(work, *k) for k in keys}
        pool.shutdown(wait=False)

    def get(self, *params: Any) -> Any:
        future = self.futures.get(params)
        if future is None or future.cancel():  # not collected, or still waiting for a thread: do it now
            return self.work(*params)
        return future.result()


requires_nvcc = pytest.mark.skipif(shutil.which(os.environ.get("CUDAMASTER_HARNESS__NVCC", "nvcc")) is None, reason="nvcc not installed")


_REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ray_address():
    """A local Ray cluster for the session (gpu/ray/local.py) with two GPUs DECLARED (`--num-gpus 2`; no GPU
    is needed: the tests' workers run gpu.fake's FAKE GPU evaluator, with real nvcc compiles). Started once.

    CUDAMASTER_TEST_RAY_GPUS=detect (scripts/device_checks.sh ray-tests, on a GPU machine) lets Ray find the real GPUs."""
    pytest.importorskip("ray")
    import ray

    from gpu.ray.local import local_cluster

    wanted = os.environ.get("CUDAMASTER_TEST_RAY_GPUS", "2")
    # The workers import the tests' own evaluators (tests.cluster.fakes): the repository on their path.
    path = os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")]))
    with local_cluster(None if wanted == "detect" else int(wanted), env={"PYTHONPATH": path}) as address:
        ray.init(address=address, namespace="cudamaster-tests", log_to_driver=False, configure_logging=False)
        try:
            yield address
        finally:
            ray.shutdown()
