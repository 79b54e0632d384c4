"""Throughput (issue 13) on the CPU: the timing loop's stop rule (runtime/cm_host.h against its Python twin,
and the argument that its target, not the seconds, bounds the spread), the warm-up plan, the host-buffer
parallel for."""

from __future__ import annotations

import re
import subprocess
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from bench_tasks import load_task
from bench_tasks.harness.compile import RUNTIME_DIR
from bench_tasks.harness.evaluate import _cases, _plan
from bench_tasks.harness.plan import Plan, TimingPlan
from bench_tasks.harness.stoprule import RSE_NONE, median_rse, stop_after
from settings import HarnessSettings

HOST_TEST = Path(__file__).parent / "stoprule" / "stop_host.cpp"


@pytest.fixture(scope="module")
def host_rule(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("stoprule") / "stop_host"
    subprocess.run(
        ["g++", "-std=c++17", "-O2", "-pthread", f"-I{RUNTIME_DIR}", str(HOST_TEST), "-o", str(exe)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return exe


def _sequences(rng: np.random.Generator) -> list[list[float]]:
    """Per-pair statistics as the loop sees them: ratios near 1 and times in µs, with outliers, ties,
    event-timer quantisation (32 ns steps) and a few degenerate cases."""
    out: list[list[float]] = [[], [1.0], [2.0, 2.0], [0.0, 0.0, 0.0], [1.0, -1.0, 0.5]]
    for _ in range(300):
        n = int(rng.integers(2, 400))
        kind = rng.integers(4)
        if kind == 0:
            v = 1.0 + 0.03 * rng.standard_normal(n)
        elif kind == 1:
            v = np.round(12.0 * (1 + 0.02 * rng.standard_normal(n)) / 0.032) * 0.032
        elif kind == 2:
            v = 250.0 * rng.lognormal(0, 0.01, n)
            v[rng.random(n) < 0.05] *= 3.0  # calls delayed by the host
        else:
            v = rng.choice([9.984, 10.016, 10.048], n)  # a handful of distinct quantised times
        out.append([float(x) for x in v])
    return out


def test_the_runtime_stop_rule_is_the_python_twin_on_every_sequence(host_rule):
    rng = np.random.default_rng(13)
    cases, lines = [], []
    for v in _sequences(rng):
        rule = TimingPlan(
            int(rng.integers(2, 20)), int(rng.integers(20, 3000)), float(rng.uniform(0, 0.3)), 2.0, float(rng.uniform(1e-3, 1e-2))
        )
        pairs, elapsed = len(v), float(rng.uniform(0, 2.5))
        cases.append((rule, pairs, elapsed, v))
        fields = [rule.min_pairs, rule.max_pairs, rule.min_seconds, rule.max_seconds, rule.target_rse, pairs, elapsed, len(v), *v]
        lines.append("R " + " ".join(repr(x) for x in fields))
    out = subprocess.run([str(host_rule)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True, timeout=120)
    got = out.stdout.split("\n")
    stops = 0
    for (rule, pairs, elapsed, v), line in zip(cases, got, strict=False):
        rse, stop = line.split()
        assert float(rse) == pytest.approx(median_rse(v), rel=1e-12, abs=0), v[:8]
        assert (stop == "1") == stop_after(rule, pairs, elapsed, v), (rule, pairs, elapsed)
        stops += stop == "1"
    assert 0 < stops < len(cases)  # both decisions are exercised


def test_the_stop_rule_keeps_its_floors_and_its_caps():
    tight = [1.0 + 1e-6 * i for i in range(30)]  # a median known to 1e-6: only the floors hold the loop
    rule = TimingPlan(min_pairs=10, max_pairs=2000, min_seconds=0.05, max_seconds=2.0, target_rse=0.002)
    assert not stop_after(rule, 9, 1.0, tight[:9])  # fewer than min_pairs
    assert not stop_after(rule, 30, 0.01, tight)  # under min_seconds
    assert stop_after(rule, 30, 0.06, tight)
    noisy = [float(x) for x in 1.0 + 0.5 * np.random.default_rng(0).standard_normal(100)]
    assert not stop_after(rule, 96, 1.0, noisy)
    assert stop_after(rule, 96, 2.01, noisy) and stop_after(TimingPlan(max_pairs=96), 96, 0.0, noisy)  # the caps
    # past 64 pairs the median is estimated every 8th pair only (a sort of up to max_pairs values)
    assert not stop_after(rule, 65, 1.0, tight + [1.0] * 35) and stop_after(rule, 72, 1.0, tight + [1.0] * 42)
    assert median_rse([1.0]) == RSE_NONE and median_rse([0.0, 0.0]) == RSE_NONE


def test_a_few_delayed_calls_do_not_hold_the_loop_as_they_held_the_standard_deviation():
    rng = np.random.default_rng(3)
    v = 1.0 + 0.005 * rng.standard_normal(200)
    v[::50] = 4.0  # four pairs with one call delayed by the host (the statistic jumps)
    mean_rse = float(np.std(v, ddof=1) / np.sqrt(v.size) / np.mean(v))
    assert mean_rse > 0.005  # the old rule (the mean's standard error) would run on to max_pairs or max_seconds
    assert median_rse(list(v)) < 0.001  # the median the result reports is known well: the loop stops


def _evaluation(rng: np.random.Generator, rule: TimingPlan, call_us: float, cv: float, per_pair_overhead_us: float) -> tuple[float, int]:
    """One simulated size of a candidate evaluation: each pair times baseline and candidate (the same kernel,
    noise cv per call, 5 % of calls delayed by 30 %, 32 ns event quantisation) until the rule stops."""
    ratios: list[float] = []
    elapsed = 0.0
    while True:
        t = call_us * (1 + cv * rng.standard_normal(2))
        t[rng.random(2) < 0.05] *= 1.3
        t = np.round(t / 0.032) * 0.032
        ratios.append(float(t[0] / t[1]))
        elapsed += (2 * call_us + per_pair_overhead_us) * 1e-6
        if stop_after(rule, len(ratios), elapsed, ratios):
            return float(np.median(ratios)), len(ratios)


# (call µs, noise per call, mean pairs at most): 2 % per call is what the H200 showed at 10 µs (conv_1d:
# IQR 0.29 µs at 9.8 µs); 4 % is a noisy kernel, which still stops under max_pairs.
@pytest.mark.parametrize("call_us, cv, most_pairs", [(10.0, 0.02, 800), (10.0, 0.04, 2000), (100.0, 0.01, 300), (2000.0, 0.01, 300)])
def test_the_target_not_the_seconds_bounds_the_spread_of_five_evaluations(call_us, cv, most_pairs):
    # The target: speedups of the same pair over 5 evaluations spread by <= 1 % (kernels >= 10 us).
    # With the defaults (min 0.05 s a size, RSE of the median < 0.2 %) the spread stays under it in
    # 95 % of trials, at a fraction of the 2000 pairs the old 0.3 s floor forced on a 10 us kernel.
    rule = TimingPlan(**{k: getattr(HarnessSettings(), f) for k, f in _RULE_SETTINGS.items()})
    rng = np.random.default_rng(int(call_us * 100 + cv * 1000))
    spreads, pairs = [], []
    for _ in range(40):
        runs = [_evaluation(rng, rule, call_us, cv, 100.0) for _ in range(5)]
        medians = [m for m, _ in runs]
        spreads.append((max(medians) / min(medians) - 1) * 100)
        pairs += [n for _, n in runs]
    assert np.percentile(spreads, 95) <= 1.0, spreads
    assert np.mean(pairs) < most_pairs


_RULE_SETTINGS = {
    "min_pairs": "min_pairs",
    "max_pairs": "max_pairs",
    "min_seconds": "min_seconds_per_size",
    "max_seconds": "max_seconds_per_size",
    "target_rse": "target_rse",
}


def test_every_plan_token_python_writes_is_one_the_runtime_reads(tmp_path):
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    known = set(re.findall(r'tok == "(\w+)"', runtime))
    settings = HarnessSettings(cache_dir=tmp_path / "cache", reference_full_elements=3000)
    variant = load_task("spmv_csr").variant("bf16")
    cases = _cases(variant, variant.task.size_list("paper")[:3], [1, 2, 3], 77, tmp_path, settings, True)
    text = _plan(variant, cases, tmp_path, settings, refresh_key=5).to_text()
    written = {line.split()[0] for line in text.splitlines() if line.strip()}
    assert "warmup_first" in written and written <= known, written - known


@pytest.mark.parametrize(
    "task, precision, host",
    [("matrix_power", "fp32", True), ("FFT", "fp32", True), ("matrix_power", "bf16", False), ("vector_add", "fp32", False)],
)
def test_a_variant_with_host_memory_arguments_is_timed_to_its_own_target(tmp_path, task, precision, host):
    """Host-pointer calls allocate and copy pageable memory (2-9 % from call to call): their median is timed to
    target_rse_host_memory; every other variant to target_rse. The driver reads the target from its plan."""
    from bench_tasks.harness.evaluate import target_rse

    settings = HarnessSettings(cache_dir=tmp_path / "cache", target_rse=0.003, target_rse_host_memory=0.02)
    variant = load_task(task).variant(precision)
    want = 0.02 if host else 0.003
    assert target_rse(variant, settings) == want
    cases = _cases(variant, variant.task.size_list("paper")[:1], [1], 5, tmp_path, settings, True)
    plan = Plan.from_text(_plan(variant, cases, tmp_path, settings).to_text())
    assert plan.timing.target_rse == want


def test_the_first_timed_size_warms_up_longer_than_the_next_ones(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache", warmup_seconds=0.01, warmup_seconds_first=0.3)
    variant = load_task("vector_add").variant("fp32")
    plan = _plan(variant, _cases(variant, [{"N": 1000}], [1], 5, tmp_path, settings, True), tmp_path, settings)
    again = Plan.from_text(plan.to_text())
    assert (again.timing.warmup_seconds, again.timing.warmup_first) == (0.01, 0.3)
    # the runtime applies warmup_first to the first size it times only
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    assert "time_case(c, specs, p, call, has_candidate, timer, !timed_before)" in runtime
    assert "first && p.warmup_first >= 0" in runtime


def test_a_driver_that_follows_another_at_once_skips_the_first_size_warm_up(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache", warmup_seconds=0.01, warmup_seconds_first=0.3)
    variant = load_task("vector_add").variant("fp32")
    cases = _cases(variant, [{"N": 1000}], [1], 5, tmp_path, settings, True)
    warm = Plan.from_text(_plan(variant, cases, tmp_path, settings, gpu_warm=True).to_text())
    assert (warm.timing.warmup_seconds, warm.timing.warmup_first) == (0.01, None)
    assert "warmup_first" not in _plan(variant, cases, tmp_path, settings, gpu_warm=True).to_text()


@pytest.mark.parametrize("n, grain", [(0, 1), (1, 1), (10, 65536), (1_000_003, 65536), (1000, 7)])
def test_host_buffers_are_redrawn_in_parallel_chunks_that_cover_each_element_once(host_rule, n, grain):
    out = subprocess.run([str(host_rule)], input=f"P {n} {grain}\n", capture_output=True, text=True, check=True, timeout=60)
    chunks, once = (int(x) for x in out.stdout.split())
    assert once == 1  # every element exactly once
    if n <= grain:
        assert chunks == (1 if n else 0)  # small buffers: no thread started
    else:
        assert 1 <= chunks <= 8


# --- bench run's pipeline (fake driver: tests/bench/fake_driver.py) ------------------------------------------------

from tests.bench import test_evaluate_fake_driver as _fake  # noqa: E402

SIZES, _settings = _fake.SIZES, _fake._settings
fake_driver = _fake.fake_driver  # the fixture, shared with that module


def test_single_flight_runs_the_work_once_and_every_waiter_gets_its_answer():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from bench_tasks.harness.datacache import single_flight

    started, release, calls = threading.Event(), threading.Event(), []

    def work() -> int:
        calls.append(1)
        started.set()
        release.wait(10)
        return 42

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(single_flight, "k", work)
        started.wait(10)
        others = [pool.submit(single_flight, "k", work) for _ in range(3)]
        release.set()
        assert [f.result(10) for f in [first, *others]] == [42] * 4
    assert len(calls) == 1
    assert single_flight("k", lambda: 7) == 7  # done: a later call works again

    def boom() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        single_flight("k2", boom)


def test_released_entries_leave_an_over_full_cache_at_once_and_others_wait_their_grace(tmp_path):
    from bench_tasks.harness.datacache import DataCache

    settings = _settings(tmp_path, data_cache_bytes=1)  # every entry is over the bound
    cache = DataCache(settings)
    variant = load_task("vector_add").variant("fp32")
    entries = [cache.dataset(variant, {"N": n}, 1, tmp_path / "unused") for n in (100, 200, 300)]
    assert all((e / "ready").exists() for e in entries)
    assert cache.prune() == 0 and all(e.exists() for e in entries)  # used just now: protected by the grace period
    assert cache.prune(released=entries[:2]) > 0
    assert [e.exists() for e in entries] == [False, False, True]


def test_dataset_bytes_counts_every_seed_and_the_full_references():
    from bench_tasks.harness.pipeline import dataset_bytes

    variant = load_task("vector_add").variant("fp32")
    settings = HarnessSettings()
    # A, B (float32) per seed, and C's float64 reference per seed (full at these sizes)
    assert dataset_bytes(variant, [{"N": 1000}], settings) == 3 * (2 * 1000 * 4 + 1000 * 8)
    big = HarnessSettings(reference_full_elements=10)  # sampled: no stored reference
    assert dataset_bytes(variant, [{"N": 1000}], big) == 3 * 2 * 1000 * 4


def test_the_prefetch_admits_variants_within_its_byte_budget_and_always_the_next(tmp_path, monkeypatch):
    from bench_tasks.harness import pipeline

    jobs = [pipeline.Job(t, p) for t in ("vector_add", "RELU") for p in ("fp32", "bf16")]
    monkeypatch.setattr(pipeline, "dataset_bytes", lambda variant, sizes, settings: 1000)
    monkeypatch.setattr(pipeline, "dataset_tasks", lambda variant, sizes, settings: [])
    settings = _settings(tmp_path)
    tight = pipeline.Prefetcher(jobs, SIZES, settings, workers=2, budget=1500)
    tight.admit(0)
    assert tight.next == 2  # the current job and the next, though together over the budget
    tight.finished(0)
    tight.admit(1)
    assert tight.next == 3  # the next again; the one after would make 3000 pending > 1500
    tight.finished(1)
    tight.admit(2)
    assert tight.next == 4
    roomy = pipeline.Prefetcher(jobs, SIZES, settings, workers=2, budget=10_000)
    roomy.admit(0)
    assert roomy.next == 4
    limited = pipeline.Prefetcher(jobs, SIZES, settings, workers=2, budget=10_000)
    limited.admit(0, lookahead=1)
    assert limited.next == 2
    for p in (tight, roomy, limited):
        p.close()


def test_references_ahead_fill_the_processs_cores_when_each_blas_call_runs_on_one_thread(monkeypatch):
    from bench_tasks.harness import pipeline

    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: set(range(12)))  # 4 left to the drivers
    assert pipeline.prefetch_workers(HarnessSettings()) == 4
    assert pipeline.reference_workers(HarnessSettings(blas_threads=1)) == 12
    assert pipeline.reference_workers(HarnessSettings(blas_threads=4)) == 4
    assert pipeline.reference_workers(HarnessSettings(blas_threads=0)) == 4  # each BLAS call on every core: as before
    assert pipeline.reference_workers(HarnessSettings(blas_threads=1, prefetch_workers=20)) == 20
    prefetcher = pipeline.Prefetcher([], SIZES, HarnessSettings(), workers=2, budget=0, ref_workers=12)
    assert prefetcher.refs._max_workers == 12 and prefetcher.draws._max_workers == 2
    prefetcher.close()


def test_the_next_driver_starts_while_the_previous_evaluation_still_checks_outputs_with_fake_driver(fake_driver, tmp_path, monkeypatch):
    import threading
    import time

    from bench_tasks.harness import pipeline

    ev = __import__("sys").modules["bench_tasks.harness.evaluate"]
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    order: list[str] = []
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: order.append(job.key))
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: order.append("runtime"))
    real_start, real_check, real_evaluate = ev._start_driver, ev.as_check, pipeline.evaluate

    def start_driver(exe, workdir, inputs_dir, cases, variant, settings):
        with lock:
            events.append(("driver", variant.key))
        return real_start(exe, workdir, inputs_dir, cases, variant, settings)

    def slow_check(*args, **kwargs):
        time.sleep(0.2)  # output checks that outlast the driver
        return real_check(*args, **kwargs)

    def evaluate(task, precision, *args, **kwargs):
        try:
            return real_evaluate(task, precision, *args, **kwargs)
        finally:
            with lock:
                events.append(("returned", f"{task}/{precision}"))

    monkeypatch.setattr(ev, "_start_driver", start_driver)
    monkeypatch.setattr(ev, "as_check", slow_check)
    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    fake_driver("vector_add/fp32", SIZES)
    jobs = [pipeline.Job("vector_add", "fp32", "// a"), pipeline.Job("vector_add", "fp32", "// b")]
    settings = _settings(tmp_path)
    results = pipeline.run_pipeline(jobs, SIZES, settings, compile_workers=1)
    assert [r.verdict.value for r in results] == ["ok", "ok"]
    assert order[0] == "runtime"  # compiled first, beside the first baseline
    assert events.index(("driver", "vector_add/fp32")) < events.index(("returned", "vector_add/fp32"))
    second_driver = [i for i, e in enumerate(events) if e[0] == "driver"][1]
    first_return = events.index(("returned", "vector_add/fp32"))
    assert second_driver < first_return  # the GPU did not wait for the first evaluation's output checks
    assert all(any(c.stage == "timed_call" for c in row.checks) for r in results for row in r.rows)


def test_slow_output_checks_of_one_variant_hold_none_of_the_next_drivers_with_fake_driver(fake_driver, tmp_path, monkeypatch):
    """A variant whose output checks outlast several drivers (triangle_attention's references take ~20 s on the
    H200) no longer holds the GPU: the next drivers start, results still come back in job order, and only
    the drivers that follow another at once skip the first-size warm-up."""
    import threading

    from bench_tasks.harness import pipeline

    ev = __import__("sys").modules["bench_tasks.harness.evaluate"]
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    release = threading.Event()
    drivers: list[str] = []
    warm: list[bool] = []
    real_start, real_evaluate = ev._start_driver, pipeline.evaluate

    def start_driver(exe, workdir, inputs_dir, cases, variant, settings):
        drivers.append(workdir.name)
        if len(drivers) == 4:
            release.set()  # the fourth driver started: let the first evaluation's checks finish
        return real_start(exe, workdir, inputs_dir, cases, variant, settings)

    def evaluate(task, precision, source, *args, **kwargs):
        warm.append(kwargs["gpu_warm"])
        if source == "// slow":
            done = kwargs["on_driver_done"]

            def held() -> None:
                done()
                assert release.wait(60), "the later drivers never started while the first variant was checking"

            kwargs["on_driver_done"] = held
        return real_evaluate(task, precision, source, *args, **kwargs)

    monkeypatch.setattr(ev, "_start_driver", start_driver)
    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    fake_driver("vector_add/fp32", SIZES)
    sources = ["// slow", "// b", "// c", "// d"]
    jobs = [pipeline.Job("vector_add", "fp32", s) for s in sources]
    reported: list[str | bytes | None] = []
    results = pipeline.run_pipeline(
        jobs, SIZES, _settings(tmp_path), compile_workers=1, on_result=lambda job, out: reported.append(job.source)
    )
    assert len(drivers) == 4 and release.is_set()
    assert reported == sources  # in job order, though the first finished last
    assert [r.verdict.value for r in results] == ["ok"] * 4
    assert [r.source_sha256 for r in results] == [__import__("hashlib").sha256(s.encode()).hexdigest() for s in sources]
    assert warm == [False, True, True, True]
    # where the GPU's time between drivers went is recorded from the second evaluation on
    assert "pipeline_gpu_idle" not in results[0].stages
    for r in results[1:]:
        assert r.stages["pipeline_gpu_idle"] >= 0 and r.stages["pipeline_wait_tails"] >= 0
        assert r.stages["gate_wait"] >= 0  # every driver after the first waited at its gate


def test_the_next_driver_starts_up_while_the_previous_one_checks_but_waits_at_its_gate_until_it_exits_with_fake_driver(
    fake_driver, tmp_path, monkeypatch
):
    """Fake driver. Once a driver has timed its last size, the next one starts (process, sandbox, CUDA context)
    while it finishes its correctness runs; the next one's GPU work waits until it has exited, so no timed call
    overlaps another driver's work."""
    from bench_tasks.harness import pipeline

    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    log = tmp_path / "drivers.log"
    monkeypatch.setenv("CM_FAKE_LOG", str(log))
    monkeypatch.setenv("CM_FAKE_TAIL_S", "30")  # correctness runs after the last timed size: until the next driver starts
    monkeypatch.setenv("CM_FAKE_DRIVERS", "3")
    fake_driver("vector_add/fp32", SIZES)
    jobs = [pipeline.Job("vector_add", "fp32", s) for s in ("// a", "// b", "// c")]
    results = pipeline.run_pipeline(jobs, SIZES, _settings(tmp_path), compile_workers=1)
    assert [r.verdict.value for r in results] == ["ok"] * 3
    events = [line.split() for line in log.read_text().splitlines()]
    drivers = list(dict.fromkeys(d for _, d in events))
    assert len(drivers) == 3
    at = {(e, d): i for i, (e, d) in enumerate(events)}
    for before, after in pairwise(drivers):
        assert at[("timing_done", before)] < at[("start", after)] < at[("exit", before)]  # started up beside it
        assert at[("exit", before)] < at[("gate", after)]  # and waited for it to leave the GPU
    assert "gate_wait" not in results[0].stages and all(r.stages["gate_wait"] > 0 for r in results[1:])
    # the GPU's idle time between two drivers: from one's exit to the next one's first GPU work; the next one
    # started before that exit, so the gap is within its start-up (process, CUDA context, gate)
    assert "pipeline_gpu_gap" not in results[0].stages
    for r in results[1:]:
        assert 0 <= r.stages["pipeline_gpu_gap"] <= r.stages["driver_startup"] <= r.stages["driver"]


def test_the_pipeline_computes_each_reference_once_and_releases_each_variants_data_with_fake_driver(fake_driver, tmp_path, monkeypatch):
    from bench_tasks.harness import pipeline
    from bench_tasks.harness.datacache import DataCache

    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    stored: list[tuple] = []
    real_store = DataCache.store_reference

    def store(self, variant, params, seed, ref):
        stored.append((variant.key, tuple(sorted(params.items())), seed))
        return real_store(self, variant, params, seed, ref)

    monkeypatch.setattr(DataCache, "store_reference", store)
    settings = _settings(tmp_path, data_cache_bytes=1)  # over the bound at once: only the grace period would keep entries
    fake_driver("vector_add/fp32", SIZES)
    jobs = [pipeline.Job("vector_add", "fp32", "// a")]
    results = pipeline.run_pipeline(jobs, SIZES, settings, compile_workers=1)
    assert [r.verdict.value for r in results] == ["ok"]
    assert len(stored) == len(set(stored)) == len(SIZES) * len(settings.seeds)  # prefetch and evaluation: once each
    cache = DataCache(settings)
    assert not [e for e in cache.root.iterdir() if (e / "ready").exists()]  # released once evaluated, then pruned


# --- the device figures: a suite cut by its time limit still reports what it finished ------------------------------


def _throughput_figures():
    """scripts/throughput_figures.py as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("throughput_figures", Path(__file__).parents[2] / "scripts" / "throughput_figures.py")
    assert spec is not None and spec.loader is not None
    tf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tf)
    return tf


def test_a_suite_cut_by_its_limit_records_the_variants_it_finished(tmp_path, monkeypatch):
    import json
    import sys
    import time

    tf = _throughput_figures()
    finished = {"task": "vector_add", "precision": "fp32", "verdict": "ok", "message": "", "wall_seconds": 1.5, "stages": {"timing": 1.0}}
    # bench run as it is when the limit comes: one variant saved, the next one running
    script = (
        "import json, sys, time\n"
        f"open(sys.argv[1], 'w').write(json.dumps({{'results': [{finished!r}]}}))\n"
        "print('vector_add/fp32 done', flush=True)\n"
        "time.sleep(60)\n"
    )
    monkeypatch.setattr(tf, "_suite_command", lambda out, tasks: [sys.executable, "-c", script, str(out)])
    monkeypatch.setattr(tf, "SUITE_LIMIT_S", 3.0)
    monkeypatch.setattr(tf, "SUITE_RUN_FILE", tmp_path / "suite.run.json")
    t0 = time.monotonic()
    fig = tf.suite(HarnessSettings(), ["vector_add"])
    assert time.monotonic() - t0 < 30
    assert fig["cut"] is True and fig["met"] is False and fig["exit_code"] != 0
    assert fig["variants"] == 1 and fig["variants_total"] == 2 and fig["per_variant_wall_s"] == {"vector_add/fp32": 1.5}
    assert fig["stage_totals_s"] == {"timing": 1.0} and "vector_add/fp32 done" in fig["log_tail"]
    assert fig["gpu_path_s"]["gpu_busy_s"] == 0.0 and fig["gpu_path_s"]["outside_s"] == fig["wall_s"]
    assert json.loads((tmp_path / "suite.run.json").read_text())["results"][0]["task"] == "vector_add"  # kept beside the figures
    assert fig["disk_free_gb"]["min"] <= fig["disk_free_gb"]["start"]


def test_the_suites_wall_splits_into_the_drivers_gpu_work_the_gaps_between_them_and_the_rest():
    tf = _throughput_figures()
    results = [
        {"stages": {"driver": 5.0, "driver_startup": 0.5}},
        {"stages": {"driver": 3.0, "driver_startup": 1.0, "pipeline_gpu_gap": 0.25}},
        {"stages": {"driver": 2.0}},  # recorded before driver_startup: all of it
    ]
    assert tf.gpu_path(results, 20.0) == {"gpu_busy_s": 8.5, "gpu_gaps_s": 0.2, "outside_s": 11.2}
    assert tf.gpu_path([], 3.0) == {"gpu_busy_s": 0.0, "gpu_gaps_s": 0.0, "outside_s": 3.0}


def test_the_build_figure_times_each_build_from_a_cache_of_its_own_and_removes_it(tmp_path, monkeypatch):
    import sys

    ev = sys.modules["bench_tasks.harness.evaluate"]  # the module (the package exports its function evaluate)
    tf = _throughput_figures()
    caches = []

    def fake_build(variant, text, settings, extra_flags):
        assert text is not None and variant.candidate_entry in text  # the baseline's source as the candidate
        assert {p.name for p in settings.cache_dir.iterdir()} <= {"scratch"}  # nothing compiled yet: a cold build
        caches.append(settings.cache_dir)
        return settings.cache_dir / "driver"

    monkeypatch.setattr(ev, "_build", fake_build)
    fig = tf.cold_build(HarnessSettings(cache_dir=tmp_path / "cache"), ["vector_add"], repeats=2)
    assert [r["variant"] for r in fig["rows"]] == ["vector_add/fp32"] * 2 and all(r["built"] for r in fig["rows"])
    assert len(set(caches)) == 2 and not any(c.exists() for c in caches)  # a new cache each time, removed after


def test_the_driver_reuses_host_memory_instead_of_mapping_fresh_gigabytes(host_rule):
    out = subprocess.run([str(host_rule)], input="B\n", capture_output=True, text=True, check=True, timeout=120)
    figures = dict(line.split() for line in out.stdout.splitlines() if line != "end")
    assert figures["same_memory"] == "1" and figures["size"] == str(4 << 20) and figures["reused"] == "1"
    assert figures["small_not_lent"] == "1" and figures["spares"] == "2"
    assert figures["held_within_limit"] == "1" and figures["spares_after"] == "1"  # the two smaller spares went
    assert figures["spares_after_huge"] == "1" and figures["threads_ok"] == "1"
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    # every large host buffer of the driver goes through the pool: datasets read, inputs compared, buffers saved
    assert "Bytes v = g_bytes.take(bytes);" in runtime  # read_file
    assert "Bytes now = g_bytes.take(b.bytes);" in runtime  # check_inputs_unchanged
    assert runtime.count("g_bytes.give(") >= 5 and "now.resize" not in runtime and "h.resize" not in runtime


def test_the_drivers_staging_blocks_are_page_locked_once_asked_and_each_is_freed_as_it_was_allocated(host_rule):
    """cm_host.h's HostAlloc with a fake page-locking allocator (the runtime's is cudaHostAlloc, set by plan token
    pinned_staging): large blocks go through it, small ones and those from before it was set are malloc'd, a
    refused block falls back to malloc, and only page-locked blocks are handed to its free."""
    out = subprocess.run([str(host_rule)], input="H\n", capture_output=True, text=True, check=True, timeout=60)
    figures = dict(line.split() for line in out.stdout.splitlines() if line != "end")
    assert figures["big_pinned"] == "1" and figures["small_pinned"] == "0" and figures["before_pinned"] == "0"
    assert figures["fallback_pinned"] == "0" and figures["aligned"] == "1"
    assert figures["frees_after_unpinned"] == "0"  # malloc'd blocks never reach the page-locked free
    assert figures["again_pinned"] == "1" and figures["pinned_allocs"] == "1" and figures["pinned_frees"] == "1"
    # while a size is timed only the timing thread makes these CUDA calls (between its timed calls)
    assert figures["timing_main_pinned"] == "1" and figures["timing_helper_pinned"] == "0"
    assert figures["frees_while_timing"] == "1" and figures["frees_after_timing"] == "2" and figures["frees_at_end"] == "3"
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    assert "cudaHostAlloc(&q, n, cudaHostAllocDefault)" in runtime and "if (p.pinned_staging)" in runtime
    loop = runtime[runtime.index("static void time_case(") :]
    loop = loop[: loop.index("\n}\n")]
    assert (
        loop.index("HostMemory::begin_timing();")
        < loop.index("warm-up")
        < loop.index("t.time_call(")
        < loop.index("HostMemory::end_timing();")
    )


def test_the_timing_loop_starts_from_the_last_check_dataset_the_buffers_already_hold_with_fake_driver(fake_driver, tmp_path):
    # spmv_csr keeps its structure (indices, offsets) in timed pairs: the parent must check them against the
    # dataset the driver timed from, the last check dataset (no copy of the first one kept, nothing uploaded again)
    from bench_tasks.harness import Verdict, evaluate

    sizes = [{"rows": 300, "cols": 200}]
    fake_driver("spmv_csr/fp32", sizes)
    settings = _settings(tmp_path)
    result = evaluate("spmv_csr", "fp32", "// fake", sizes, settings=settings)
    assert result.verdict == Verdict.ok, result.message
    timed = [c for c in result.rows[0].checks if c.stage == "timed_call"]
    assert timed and {c.seed for c in timed} == {settings.seeds[-1]}
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    assert "Loaded first" not in runtime and "upload_inputs(c, c.resident);" in runtime


def test_the_next_variants_draws_do_not_queue_behind_an_earlier_variants_references(tmp_path, monkeypatch):
    """triangle_attention's float64 references held the prefetch threads for tens of seconds on the H200, and the next
    variant's datasets, queued behind them, came 7 s late: draws and references now have threads of their own."""
    import threading

    from bench_tasks.harness import pipeline

    release = threading.Event()
    drawn: list[str] = []

    def tasks(variant, sizes, settings):
        def draw() -> None:
            drawn.append(variant.key)

        def ref() -> None:
            if variant.key == "triangle_attention/fp32":
                assert release.wait(30), "never released"

        return [(draw, ref), (draw, ref)]

    monkeypatch.setattr(pipeline, "dataset_bytes", lambda variant, sizes, settings: 1)
    monkeypatch.setattr(pipeline, "dataset_tasks", tasks)
    jobs = [pipeline.Job("triangle_attention", "fp32"), pipeline.Job("vector_add", "fp32")]
    prefetcher = pipeline.Prefetcher(jobs, SIZES, _settings(tmp_path), workers=2, budget=10)
    try:
        prefetcher.admit(0)
        done = threading.Thread(target=prefetcher.wait_inputs, args=(1,))
        done.start()
        done.join(10)
        assert not done.is_alive(), "the second variant's datasets waited for the first one's references"
        assert drawn.count("vector_add/fp32") == 2
        ahead = prefetcher.ahead["triangle_attention/fp32"]
        assert not any(f.done() for f in ahead.refs)  # its references were still computing
    finally:
        release.set()
        prefetcher.close()


def test_short_of_disk_the_pipeline_lets_no_evaluation_check_beside_the_next_driver_with_fake_driver(fake_driver, tmp_path, monkeypatch):
    """Fake driver. Each evaluation still checking holds its fresh datasets on disk; while the data cache's file
    system is short of space the next driver starts only once the previous evaluation has returned."""
    import threading

    from bench_tasks.harness import pipeline
    from bench_tasks.harness.datacache import DataCache

    ev = __import__("sys").modules["bench_tasks.harness.evaluate"]
    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    monkeypatch.setattr(DataCache, "has_room", lambda self: False)
    events: list[str] = []
    lock = threading.Lock()
    real_start, real_evaluate = ev._start_driver, pipeline.evaluate

    def start_driver(exe, workdir, inputs_dir, cases, variant, settings):
        with lock:
            events.append("driver")
        return real_start(exe, workdir, inputs_dir, cases, variant, settings)

    def evaluate(*args, **kwargs):
        try:
            return real_evaluate(*args, **kwargs)
        finally:
            with lock:
                events.append("returned")

    monkeypatch.setattr(ev, "_start_driver", start_driver)
    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    fake_driver("vector_add/fp32", SIZES)
    jobs = [pipeline.Job("vector_add", "fp32", s) for s in ("// a", "// b", "// c")]
    results = pipeline.run_pipeline(jobs, SIZES, _settings(tmp_path), compile_workers=1)
    assert [r.verdict.value for r in results] == ["ok"] * 3
    assert events == ["driver", "returned"] * 3


@pytest.mark.parametrize(
    "raised, kind, words",
    [
        (OSError(28, "No space left on device"), "MachineError", "No space left on device"),
        (KeyError("missing"), "HarnessError", "KeyError: 'missing'"),  # a harness bug: where it happened, and go on
    ],
)
def test_a_machine_error_in_one_variant_is_reported_for_it_and_the_run_goes_on(tmp_path, monkeypatch, raised, kind, words):
    """A full disk ended the whole suite on the H200 (an OSError drawing a dataset): now that variant gets a
    MachineError, saying what to do, and the next ones are evaluated; a harness bug in one variant likewise gets a
    HarnessError naming it and where it happened."""
    from types import SimpleNamespace

    from bench_tasks.harness import errors, pipeline

    monkeypatch.setattr(pipeline, "prebuild", lambda job, settings: None)
    monkeypatch.setattr(pipeline, "prebuild_runtime", lambda settings: None)
    monkeypatch.setattr(pipeline, "dataset_tasks", lambda variant, sizes, settings: [])
    evaluated: list[str] = []

    def evaluate(task, precision, *args, **kwargs):
        if precision == "bf16":
            raise raised
        evaluated.append(task)
        kwargs["on_timing_done"]()
        kwargs["on_driver_done"]()
        return SimpleNamespace(task=task, stages={})

    monkeypatch.setattr(pipeline, "evaluate", evaluate)
    monkeypatch.setattr(pipeline, "EvaluationResult", SimpleNamespace)  # the fake results above stand for them
    outcomes: list[tuple[str, object]] = []
    jobs = [pipeline.Job("vector_add", "fp32"), pipeline.Job("vector_add", "bf16"), pipeline.Job("RELU", "fp32")]
    results = pipeline.run_pipeline(jobs, SIZES, _settings(tmp_path), on_result=lambda job, out: outcomes.append((job.key, out)))
    assert [r.task for r in results] == ["vector_add", "RELU"]
    assert [k for k, _ in outcomes] == ["vector_add/fp32", "vector_add/bf16", "RELU/fp32"]
    error = outcomes[1][1]
    assert isinstance(error, getattr(errors, kind)) and words in str(error) and "goes on" in str(error)
    if kind == "HarnessError":
        assert "test_throughput.py" in str(error) and "in evaluate" in str(error)  # where: this test's fake evaluate


def test_the_result_records_the_target_its_timing_stopped_at_with_a_fake_driver(fake_driver, tmp_path):
    from bench_tasks.harness import Verdict, evaluate
    from bench_tasks.harness import result as _result

    sizes = [{"N": 8, "P": 2}]
    fake_driver("matrix_power/fp32", sizes)
    settings = _settings(tmp_path).model_copy(update={"target_rse_host_memory": 0.015})
    result = evaluate("matrix_power", "fp32", "// fake", sizes, settings=settings)
    assert result.verdict == Verdict.ok, result.message
    assert result.target_rse == 0.015 and result.schema_version == "1.5"
    assert _result.EvaluationResult.model_validate_json(result.model_dump_json()).target_rse == 0.015
    old = result.model_dump(mode="json") | {"schema_version": "1.4"}
    del old["target_rse"]
    assert _result.EvaluationResult.model_validate(old).target_rse is None  # documents before 1.5 still read
