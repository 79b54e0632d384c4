"""Cores of its own for the timing driver (bench_tasks/harness/cpus.py): the split, the parent's threads moved off
the driver's cores, the plan's `cpus` token, and the driver's report of where it ran (a FAKE driver here, the
real one in tests/bench/test_harness_gpu.py)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness.compile import RUNTIME_DIR
from bench_tasks.harness.cpus import driver_cores, split
from bench_tasks.harness.plan import Plan, Results
from settings import HarnessSettings
from tests.bench import test_evaluate_fake_driver as _fake
from tests.bench.test_throughput import host_rule  # noqa: F401 (the fixture: cm_host.h's test program)

fake_driver = _fake.fake_driver
CORES = sorted(os.sched_getaffinity(0))
two_cores = pytest.mark.skipif(len(CORES) < 2, reason="needs 2 usable cores")


def _s(n: int) -> HarnessSettings:
    return HarnessSettings(driver_cpus=n)


def test_a_machine_of_8_cores_or_more_gives_a_quarter_to_the_driver_and_a_small_one_nothing_by_default():
    assert split(_s(-1), list(range(16))) == ([12, 13, 14, 15], list(range(12)))
    assert split(_s(-1), list(range(8))) == ([6, 7], list(range(6)))
    assert split(_s(-1), list(range(128)))[0] == list(range(96, 128))  # type: ignore[index]
    assert split(_s(-1), [0, 1]) is None and split(_s(-1), list(range(7))) is None
    assert split(_s(0), list(range(16))) is None  # turned off
    assert split(_s(3), [4, 9]) == ([9], [4])  # asked for more than there are: the parent keeps one
    assert split(_s(2), [0]) is None
    assert split(_s(2), [5, 1, 3]) == ([3, 5], [1])  # by core number, whatever order they came in


def test_the_plan_carries_the_driver_cores_in_a_token_the_runtime_reads():
    plan = Plan(results=Path("r"), outdir=Path("o"), cpus=[2, 7])
    text = plan.to_text()
    assert "cpus 2 2 7" in text.splitlines()
    assert Plan.from_text(text).cpus == [2, 7]
    assert "cpus" not in Plan(results=Path("r"), outdir=Path("o")).to_text()  # none: the parent's cores
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    assert 'tok == "cpus"' in runtime
    # the driver pins itself before it creates its CUDA context, so the context's threads inherit its cores
    assert runtime.index("pin_to(p.cpus);") < runtime.index("CM_CHECK(cudaFree(0));  // create the context")


def test_the_drivers_report_of_its_cores_and_of_when_the_gpu_became_its_own_is_read():
    results = Results()
    results.feed("cpus 3 4 5 6\ngpu_start 1234.5\ndevice X 9.0 1 2 3 13000 13000\n")
    assert results.cpus == [4, 5, 6] and results.gpu_start == 1234.5


@two_cores
def test_every_thread_of_the_parent_moves_off_the_driver_cores_and_new_threads_inherit_it():
    """In a child process (this test's own process keeps its cores): a thread started before the move is moved
    too, one started after inherits the parent's cores, the split's driver cores are left to the driver, and
    every later driver gets the same ones."""
    script = textwrap.dedent(
        """
        import json, os, threading
        from settings import HarnessSettings
        from bench_tasks.harness.cpus import driver_cores
        stop = threading.Event()
        before = threading.Thread(target=stop.wait)
        before.start()
        driver = driver_cores(HarnessSettings(driver_cpus=1))
        seen = {}
        after = threading.Thread(target=lambda: seen.update(after=sorted(os.sched_getaffinity(0))))
        after.start()
        after.join()
        tasks = [sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")]
        stop.set()
        before.join()
        again = driver_cores(HarnessSettings(driver_cpus=1))  # the next evaluation's driver: the same cores
        print(json.dumps({"driver": driver, "again": again, "tasks": tasks, "after": seen["after"]}))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60, cwd=Path(__file__).parents[2]
    )
    out = json.loads(run.stdout)
    parent = CORES[:-1]
    assert out["driver"] == out["again"] == [CORES[-1]]  # not a split of what the first one left the parent
    assert len(out["tasks"]) >= 2 and all(t == parent for t in out["tasks"])  # the thread started before the move too
    assert out["after"] == parent


def test_no_split_leaves_the_parents_threads_where_they_were():
    assert driver_cores(_s(0)) is None
    assert sorted(os.sched_getaffinity(0)) == CORES


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.mark.parametrize("blas_threads, want", [(2, 2), (0, 1)])
def test_every_blas_library_of_the_harness_process_runs_on_the_settings_threads(blas_threads, want):
    """In a child whose BLAS libraries would start 1 thread a call: numpy's and scipy's OpenBLAS (two libraries)
    both run on blas_threads once it is applied, scipy's though nothing had imported it; 0 leaves the default."""
    script = textwrap.dedent(
        f"""
        import json
        import numpy
        from threadpoolctl import threadpool_info
        from settings import HarnessSettings
        from bench_tasks.harness.cpus import limit_blas
        limit_blas(HarnessSettings(blas_threads={blas_threads}))
        import scipy.linalg  # loaded by limit_blas (when it limits), or now
        print(json.dumps([lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]))
        """
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60, env=env, cwd=Path(__file__).parents[2]
    )
    assert json.loads(run.stdout) == [want, want]


@pytest.mark.parametrize("bad", [-1, 257, "many"])
def test_a_blas_thread_count_out_of_range_is_refused_with_the_settings_name(bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="blas_threads"):
        HarnessSettings(blas_threads=bad)


@pytest.fixture
def restore_blas():
    from threadpoolctl import threadpool_limits

    limits = threadpool_limits(limits=None, user_api="blas")  # remembers this process's BLAS threads
    yield
    limits.restore_original_limits()


def test_an_evaluation_runs_its_references_blas_on_the_settings_threads_with_a_fake_driver(fake_driver, tmp_path, restore_blas):
    fake_driver("vector_add/fp32", _fake.SIZES)
    result = evaluate("vector_add", "fp32", "// fake", _fake.SIZES, settings=_fake._settings(tmp_path, driver_cpus=0, blas_threads=3))
    assert result.verdict == Verdict.ok, result.message
    assert set(_blas_threads()) == {3}


@pytest.fixture
def restore_cores():
    """The test moves this process's threads: put every one back on all its cores afterwards."""
    yield
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(ProcessLookupError, OSError):
            os.sched_setaffinity(int(task.name), CORES)


@two_cores
def test_the_driver_runs_on_its_cores_and_the_result_says_which_with_a_fake_driver(fake_driver, tmp_path, restore_cores):
    fake_driver("vector_add/fp32", _fake.SIZES)
    result = evaluate("vector_add", "fp32", "// fake", _fake.SIZES, settings=_fake._settings(tmp_path, driver_cpus=1))
    assert result.verdict == Verdict.ok, result.message
    assert result.driver_cpus == [CORES[-1]]  # what the driver found itself on, after pinning itself
    assert sorted(os.sched_getaffinity(0)) == CORES[:-1]  # and this process keeps off it
    assert result.stages["driver_startup"] > 0 and result.stages["driver_startup"] <= result.stages["driver"]


def test_without_a_split_the_result_names_every_core_the_driver_had_with_a_fake_driver(fake_driver, tmp_path):
    fake_driver("vector_add/fp32", _fake.SIZES)
    result = evaluate("vector_add", "fp32", "// fake", _fake.SIZES, settings=_fake._settings(tmp_path, driver_cpus=0))
    assert result.verdict == Verdict.ok, result.message
    assert result.driver_cpus == CORES


@two_cores
def test_the_runtimes_host_threads_stay_within_the_cores_the_driver_may_use(host_rule):  # noqa: F811
    """cm_host.h's parallel_for (host-memory redraws and checks) starts no more threads than the driver's cores:
    a driver pinned to one core runs its chunks on the calling thread alone."""
    n = 1_000_003
    pinned = subprocess.run(["taskset", "-c", str(CORES[0]), str(host_rule)], input=f"P {n} 65536\n", capture_output=True, text=True,
                            check=True, timeout=60).stdout.split()  # fmt: skip
    free = subprocess.run([str(host_rule)], input=f"P {n} 65536\n", capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert pinned == ["1", "1"]  # one chunk, every element once
    assert int(free[0]) == min(8, len(CORES)) and free[1] == "1"


@two_cores
def test_the_real_driver_pins_itself_to_the_plans_cores_before_its_cuda_context(harness_settings, tmp_path):
    """The runtime's pin_to, in a real driver (vector_add's baseline, our code, run directly): it reports the
    plan's cores, and every core it may use without a `cpus` token. It runs before the CUDA context is created, so
    this machine without a GPU sees it too (the driver then stops at cudaFree(0))."""
    from bench_tasks import load_task
    from bench_tasks.harness import compile as cc
    from bench_tasks.harness.driver import driver_source

    variant = load_task("vector_add").variant("fp32")
    base = cc.compile_baseline(variant, harness_settings)
    exe = cc.build_driver(variant, driver_source(variant, False), base, None, harness_settings)
    reports = []
    for token in (f"cpus 1 {CORES[0]}\n", ""):
        plan = tmp_path / "plan.txt"
        plan.write_text(f"mode full\nresults {tmp_path}/results.txt\noutdir {tmp_path}\n{token}")
        subprocess.run([str(exe), str(plan)], capture_output=True, text=True, timeout=120)
        results = Results()
        results.feed((tmp_path / "results.txt").read_text())
        reports.append(results.cpus)
    assert reports == [[CORES[0]], CORES]


@two_cores
def test_bench_runs_compiles_start_off_the_driver_cores_from_the_first_with_a_fake_driver(
    fake_driver, tmp_path, monkeypatch, restore_cores
):
    """The pipeline compiles the next variants while drivers run: its compile threads (and so nvcc) are on the
    parent's cores from the first compile on, not only once the first driver has started."""
    from bench_tasks.harness import pipeline

    seen: list[list[int]] = []
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: seen.append(sorted(os.sched_getaffinity(0))))
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: seen.append(sorted(os.sched_getaffinity(0))))
    fake_driver("vector_add/fp32", _fake.SIZES)
    jobs = [pipeline.Job("vector_add", "fp32", s) for s in ("// a", "// b")]
    results = pipeline.run_pipeline(jobs, _fake.SIZES, _fake._settings(tmp_path, driver_cpus=1), compile_workers=2)
    assert [r.verdict.value for r in results] == ["ok", "ok"]
    assert len(seen) == 3 and all(cores == CORES[:-1] for cores in seen)
    assert all(r.driver_cpus == [CORES[-1]] for r in results)
