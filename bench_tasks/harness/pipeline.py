"""Many evaluations in a row, with the host work of the next ones done while the GPU runs this one.

`bench run` evaluates variant after variant on the one GPU. While variant k runs, the pipeline
compiles variants k+1, k+2, ... on all cores (candidate, baseline, driver: the objects land in the
content-addressed cache, so evaluate() finds them) and draws the check datasets and full float64
references of the next `lookahead` variants into the data cache. Every evaluation is still a plain
evaluate() call with all of its checks; the pipeline only warms the caches ahead of it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from bench_tasks.spec import Variant, load_task

from . import compile as cc
from . import source as src
from .checks import Case, read_inputs, reference, sampled
from .datacache import DataCache
from .driver import driver_source
from .errors import CandidateError, VendorUnavailable
from .evaluate import evaluate
from .result import EvaluationResult
from .settings import HarnessSettings


@dataclass
class Job:
    task: str
    precision: str
    source: str | bytes | None = None  # None: the baseline alone (or, with implementation "vendor", the vendor reference)
    implementation: str = "candidate"  # or "vendor": the task's vendor reference in the candidate's place

    @property
    def key(self) -> str:
        return f"{self.task}/{self.precision}" + (" vendor" if self.implementation == "vendor" else "")


def prebuild(job: Job, settings: HarnessSettings) -> None:
    """Compile what evaluate() will need (errors are left for evaluate() to report as verdicts)."""
    variant = load_task(job.task).variant(job.precision)
    if job.implementation == "vendor":
        from .vendor import prebuild_vendor

        prebuild_vendor(variant, settings)
        return
    cand = None
    if job.source is not None:
        try:
            outcome = cc.compile_candidate(variant, src.prepare(job.source, settings.max_source_bytes), settings)
        except CandidateError:
            return
        if not outcome.ok:
            return
        cand = outcome.object_path
    try:
        base = cc.compile_baseline(variant, settings)
        cc.build_driver(variant, driver_source(variant, cand is not None), base, cand, settings)
    except (cc.BaselineError, cc.LinkError, RuntimeError):
        return


def prefetch_data(variant: Variant, sizes: str | list[dict[str, int]], settings: HarnessSettings) -> None:
    """Draw the check datasets of every size into the data cache, with their full references."""
    cache = DataCache(settings)
    if not cache.enabled or variant.task.custom or not cache.has_room():
        return
    for params in variant.task.size_list(sizes) if isinstance(sizes, str) else sizes:
        full = not sampled(variant, params, settings)
        for seed in settings.seeds:
            directory = cache.dataset(variant, params, seed, settings.cache_dir / "unused")
            if full and cache.reference(variant, params, seed) is None:
                cache.store_reference(
                    variant, params, seed, reference(variant, Case(0, params, []), read_inputs(variant, directory, params))
                )


def run_pipeline(
    jobs: list[Job],
    sizes: str | list[dict[str, int]],
    settings: HarnessSettings,
    *,
    compile_workers: int | None = None,
    lookahead: int = 2,
    on_start: Callable[[Job, int], None] | None = None,
    on_result: Callable[[Job, EvaluationResult | CandidateError | VendorUnavailable], None] | None = None,
    timing: bool = True,
) -> list[EvaluationResult]:
    """Evaluate `jobs` in order on the GPU, compiling and drawing data ahead; returns the results."""
    workers = compile_workers or os.cpu_count() or 1
    results: list[EvaluationResult] = []
    compiled_count = [0]
    lock = threading.Lock()

    def build(job: Job) -> None:
        prebuild(job, settings)
        with lock:
            compiled_count[0] += 1

    with ThreadPoolExecutor(max_workers=workers) as compile_pool, ThreadPoolExecutor(max_workers=1) as data_pool:
        builds = [compile_pool.submit(build, job) for job in jobs]
        data: dict[int, Future] = {}

        def want_data(k: int) -> None:
            if k < len(jobs) and k not in data:
                variant = load_task(jobs[k].task).variant(jobs[k].precision)
                data[k] = data_pool.submit(prefetch_data, variant, sizes, settings)

        for k, job in enumerate(jobs):
            for ahead in range(k + 1, k + 1 + lookahead):  # variant k draws what it lacks itself, while its driver starts
                want_data(ahead)
            if on_start is not None:
                on_start(job, compiled_count[0])
            builds[k].result()
            if k in data:
                data[k].result()
            try:
                result = evaluate(
                    job.task, job.precision, job.source, sizes, settings=settings, timing=timing, implementation=job.implementation
                )
            except (CandidateError, VendorUnavailable) as exc:
                if on_result is not None:
                    on_result(job, exc)
                continue
            results.append(result)
            if on_result is not None:
                on_result(job, result)
    return results
