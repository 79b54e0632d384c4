"""Many evaluations in a row, with the host work of the next ones done while the GPU runs this one.

`bench run` evaluates variant after variant on the one GPU. While variant k runs:
- the next variants compile on all cores (the harness runtime first; candidate, baseline, driver: the
  objects land in the content-addressed cache, so evaluate() finds them);
- the check datasets of the next variants are drawn into the data cache on `prefetch_workers` threads, one
  task per (size, seed), variants in order and as far ahead as `prefetch_bytes` allows (at least one
  variant); their full float64 references are computed on threads of their own (one per core of this process
  when each BLAS call runs on one thread, `blas_threads`), each once its
  dataset is drawn (a variant's draws never queue behind an earlier variant's references: triangle_attention's
  took the next variant's inputs 7 s late on the H200); variant k starts as soon as its datasets are there (its
  references may still be computing: the evaluation waits for those, rather than computing them again);
- earlier variants' output checks finish, and their scratch directories go, while variant k's driver runs (up
  to TAILS evaluations may still be checking; results are reported in job order);
- variant k+1's evaluation starts as soon as variant k's driver has timed its last size: its driver starts up
  (process, sandbox, CUDA context) while k's finishes its last correctness runs, and then waits at its gate
  until k's driver has exited. Two drivers' GPU work never overlaps a timed call;
- a driver that follows another at once skips the longer first-size warm-up (the GPU is warm).
Once variant k is evaluated its cached datasets are released to the cache's bound (the suite's datasets do
not fit on a disk of the H200 machine's size). Every evaluation is still a plain evaluate() call with all
of its checks; the pipeline only warms the caches ahead of it and overlaps its host-side tail.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench_tasks import data
from bench_tasks.spec import Variant, load_task
from settings import HarnessSettings

from . import compile as cc
from . import source as src
from .ahead import after, dataset_tasks
from .checks import sampled
from .cpus import driver_cores, limit_blas
from .datacache import DataCache
from .driver import driver_source
from .errors import CandidateError, HarnessError, MachineError, VendorUnavailable
from .evaluate import evaluate
from .result import EvaluationResult

# What one job ends with: its result, or why it has none (bad input, no vendor reference, the machine, a harness bug).
Outcome = EvaluationResult | CandidateError | VendorUnavailable | MachineError | HarnessError

# Evaluations whose driver has exited but whose output checks still run (a float64 reference still computing,
# as triangle_attention's for ~20 s): up to this many, beside the next driver, before the loop waits for the oldest
# (with 3, the H200's suite waited 11 s in all for them). Each holds its fresh datasets on disk until it returns (GBs
# for matrix_transpose): while the data cache's file system is short of space (DataCache.has_room), the next
# evaluation starts only once the previous one has returned.
TAILS = 6
# A driver that starts within this many seconds of the previous driver's exit finds the GPU's clocks up: it skips
# the longer warm-up of its first timed size (evaluate's gpu_warm), keeping every size's own warm-up.
WARM_GPU_S = 2.0


def _where(exc: BaseException) -> str:
    """The innermost frame of an exception's traceback, as file:line in function."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "an unknown place"
    last = frames[-1]
    return f"{Path(last.filename).name}:{last.lineno} in {last.name}"


@dataclass
class Job:
    task: str
    precision: str
    source: str | bytes | None = None  # None: the baseline alone (or, with implementation "vendor", the vendor reference)
    implementation: str = "candidate"  # or "vendor": the task's vendor reference in the candidate's place

    @property
    def key(self) -> str:
        return f"{self.task}/{self.precision}" + (" vendor" if self.implementation == "vendor" else "")


def prebuild_runtime(settings: HarnessSettings) -> None:
    """The harness runtime object, which every driver links: compiled first, beside the first baseline."""
    try:
        cc.compile_runtime(settings)
    except RuntimeError:
        return  # the first build reports it


def prebuild(job: Job, settings: HarnessSettings) -> None:
    """Compile what evaluate() will need (errors are left for evaluate() to report as verdicts)."""
    variant = load_task(job.task).variant(job.precision)
    if job.implementation == "vendor":
        from .vendor import prebuild_vendor

        prebuild_vendor(variant, settings)
        return
    cand, cand_params = None, None
    if job.source is not None:
        try:
            outcome = cc.compile_candidate(variant, src.prepare(job.source, settings.max_source_bytes), settings)
        except CandidateError:
            return
        if not outcome.ok:
            return
        cand, cand_params = outcome.object_path, outcome.params
    try:
        base = cc.compile_baseline(variant, settings)
        cc.build_driver(variant, driver_source(variant, cand is not None, cand_params), base, cand, settings)
    except (cc.BaselineError, cc.LinkError, RuntimeError):
        return


def dataset_bytes(variant: Variant, sizes: str | list[dict[str, int]], settings: HarnessSettings) -> int:
    """What the check datasets of `variant` hold on disk (every size, every seed), full references included."""
    total = 0
    for params in variant.task.size_list(sizes) if isinstance(sizes, str) else sizes:
        lengths = variant.task.lengths(params, variant.precision)
        for name in lengths:
            arg = next((a for a in variant.task.args if a.name == name), None)
            if arg is None:
                continue
            itemsize = np.dtype(data.STORAGE[variant.param(name).dtype]).itemsize
            if arg.role_for(variant.precision) in ("input", "inout"):
                total += lengths[name] * itemsize * len(settings.seeds)
        if not sampled(variant, params, settings):
            total += sum(lengths[o] for o in variant.outputs()) * 8 * len(settings.seeds)
    return total


@dataclass
class _Ahead:
    """One variant's prefetch: its dataset draws and reference computations in the pools."""

    nbytes: int
    draws: list[Future] = field(default_factory=list)
    refs: list[Future] = field(default_factory=list)
    entries: list[Path] = field(default_factory=list)


class Prefetcher:
    """Check datasets and full references of the variants ahead, in order, within a byte budget."""

    def __init__(
        self,
        jobs: list[Job],
        sizes: str | list[dict[str, int]],
        settings: HarnessSettings,
        workers: int,
        budget: int,
        ref_workers: int | None = None,
    ):
        self.jobs, self.sizes, self.settings, self.budget = jobs, sizes, settings, budget
        self.draws = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cm-draw")
        self.refs = ThreadPoolExecutor(max_workers=ref_workers or workers, thread_name_prefix="cm-ref")
        self.ahead: dict[str, _Ahead] = {}  # variant key -> its prefetch (each variant once)
        self.done: set[str] = set()
        self.next = 0  # next job to admit

    def _key(self, k: int) -> str:
        return f"{self.jobs[k].task}/{self.jobs[k].precision}"

    def _pending_bytes(self) -> int:
        return sum(a.nbytes for key, a in self.ahead.items() if key not in self.done)

    def admit(self, current: int, lookahead: int | None = None) -> None:
        """Start the prefetch of the jobs from `current` on while the admitted, unfinished variants' bytes stay
        within the budget (and at most `lookahead` jobs ahead); the current job and the next are always admitted."""
        while self.next < len(self.jobs):
            if lookahead is not None and self.next > current + max(1, lookahead):
                return
            key = self._key(self.next)
            if key not in self.ahead:
                variant = load_task(self.jobs[self.next].task).variant(self.jobs[self.next].precision)
                nbytes = dataset_bytes(variant, self.sizes, self.settings)
                if self.next > current + 1 and self._pending_bytes() + nbytes > self.budget:
                    return
                ahead = _Ahead(nbytes)
                tasks = dataset_tasks(variant, self.sizes, self.settings)
                ahead.draws = [self.draws.submit(draw) for draw, _ in tasks]
                ahead.refs = [self.refs.submit(after, drawn, ref) for drawn, (_, ref) in zip(ahead.draws, tasks, strict=True)]
                cache = DataCache(self.settings)
                params_list = variant.task.size_list(self.sizes) if isinstance(self.sizes, str) else self.sizes
                ahead.entries = [e for p in params_list for s in self.settings.seeds if (e := cache.entry(variant, p, s)) is not None]
                self.ahead[key] = ahead
            self.next += 1

    def wait_inputs(self, k: int) -> None:
        """Wait for job k's check datasets (not its references); a failed draw is left to evaluate()."""
        ahead = self.ahead.get(self._key(k))
        if ahead:
            wait(ahead.draws)  # done, failed or cancelled: wait() raises none of their exceptions

    def finished(self, k: int) -> list[Path]:
        """Job k is evaluated: its bytes leave the budget; returns its cache entries when no later job uses them."""
        key = self._key(k)
        if any(self._key(j) == key for j in range(k + 1, len(self.jobs))):
            return []
        self.done.add(key)
        ahead = self.ahead.get(key)
        return list(ahead.entries) if ahead else []

    def close(self) -> None:
        self.draws.shutdown(wait=True, cancel_futures=True)
        self.refs.shutdown(wait=True, cancel_futures=True)


def prefetch_workers(settings: HarnessSettings) -> int:
    return settings.prefetch_workers or max(2, min(8, (os.cpu_count() or 1) // 4))


def reference_workers(settings: HarnessSettings) -> int:
    """Threads computing the variants' references ahead: with BLAS calls on `blas_threads` threads each, enough
    of them to fill this process's cores (the drivers' own are not among them); with the BLAS library's own pool
    of every core under each (blas_threads 0), as many as draw."""
    workers = prefetch_workers(settings)
    if settings.blas_threads <= 0:
        return workers
    return max(workers, len(os.sched_getaffinity(0)) // settings.blas_threads)


def run_pipeline(
    jobs: list[Job],
    sizes: str | list[dict[str, int]],
    settings: HarnessSettings,
    *,
    compile_workers: int | None = None,
    lookahead: int | None = None,
    on_start: Callable[[Job, int], None] | None = None,
    on_result: Callable[[Job, Outcome], None] | None = None,
    timing: bool = True,
) -> list[EvaluationResult]:
    """Evaluate `jobs` in order on the GPU, compiling and drawing data ahead; returns the results.

    `lookahead`: at most this many variants' data drawn ahead (default: as many as `prefetch_bytes` allows)."""
    limit_blas(settings)
    driver_cores(settings)  # this process's threads (and the compiles they start) keep off the drivers' cores from now on
    pipeline = _Pipeline(jobs, sizes, settings, timing, on_result)
    try:
        pipeline.run(compile_workers or os.cpu_count() or 1, lookahead, on_start)
    finally:
        pipeline.prefetcher.close()
    return [pipeline.by_index[k] for k in sorted(pipeline.by_index)]


class _Pipeline:
    """One run_pipeline call: the jobs' compiles and prefetch, the evaluations still checking their outputs (reported
    in job order), and when each driver left the GPU."""

    def __init__(
        self,
        jobs: list[Job],
        sizes: str | list[dict[str, int]],
        settings: HarnessSettings,
        timing: bool,
        on_result: Callable[[Job, Outcome], None] | None,
    ):
        self.jobs, self.sizes, self.settings, self.timing, self.on_result = jobs, sizes, settings, timing, on_result
        self.compiled_count = 0
        self.lock = threading.Lock()
        self.cache = DataCache(settings)
        self.prefetcher = Prefetcher(
            jobs, sizes, settings, prefetch_workers(settings), settings.prefetch_bytes, reference_workers(settings)
        )
        self.by_index: dict[int, EvaluationResult] = {}
        self.last_driver_exit = float("-inf")  # when the GPU was last busy (a driver exited)
        self.exits: dict[int, float] = {}  # job -> when its driver exited
        self.pending: deque[tuple[int, Future, dict[str, float]]] = deque()  # started, not yet reported, in job order

    def build(self, job: Job) -> None:
        prebuild(job, self.settings)
        with self.lock:
            self.compiled_count += 1

    def evaluate(
        self, k: int, job: Job, timed: threading.Event, exited: threading.Event, gate: threading.Event | None, warm: bool
    ) -> Outcome:
        try:
            return evaluate(
                job.task,
                job.precision,
                job.source,
                self.sizes,
                settings=self.settings,
                timing=self.timing,
                implementation=job.implementation,
                on_timing_done=timed.set,
                on_driver_done=lambda: self.driver_done(k, exited),
                gate=gate,
                gpu_warm=warm,
            )
        except (CandidateError, VendorUnavailable) as exc:
            return exc
        except OSError as exc:  # the H200 machine's disk filled up once: one variant lost, not the run
            free = DataCache(self.settings).has_room()
            hint = "" if free else " (the data cache's file system is short of space: free some, or set CUDAMASTER_HARNESS__CACHE_DIR)"
            return MachineError(f"the harness could not finish this variant: {exc}{hint}; the run goes on")
        except Exception as exc:  # noqa: BLE001 - a harness bug in one variant: that variant's outcome, not the end of the run
            return HarnessError(
                f"the harness failed on this variant ({type(exc).__name__}: {exc}; at {_where(exc)}): not the kernel's fault; "
                "the run goes on. Please report it with this message"
            )
        finally:
            timed.set()
            exited.set()

    def driver_done(self, k: int, exited: threading.Event) -> None:
        self.last_driver_exit = self.exits[k] = time.monotonic()
        exited.set()

    def gpu_gap(self, k: int, stages: dict[str, float]) -> dict[str, float]:
        """The GPU's idle time between job k-1's driver exit and job k's first GPU work (after its start-up and
        gate): its driver started at its exit minus its `driver` seconds, and `driver_startup` seconds later
        the GPU was its own."""
        exits = self.exits
        if k - 1 not in exits or k not in exits or "driver_startup" not in stages:
            return {}
        gpu_start = exits[k] - stages["driver"] + stages["driver_startup"]
        return {"pipeline_gpu_gap": round(max(0.0, gpu_start - exits[k - 1]), 3)}

    def report(self, k: int, fut: Future, waits: dict[str, float]) -> None:
        outcome = fut.result()  # a verdict, or the error that kept this variant from one
        if isinstance(outcome, EvaluationResult):
            outcome.stages.update(waits | self.gpu_gap(k, outcome.stages))
            self.by_index[k] = outcome
        released = self.prefetcher.finished(k)
        if released:  # removing GBs of datasets takes a while: beside the next driver, not before it
            self.pruner.submit(self.cache.prune, released)
        if self.on_result is not None:
            self.on_result(self.jobs[k], outcome)

    def report_finished(self, keep: int) -> None:
        """Report, in job order, the evaluations that have returned; wait for the oldest ones while more
        than `keep` are still checking outputs."""
        while self.pending and (self.pending[0][1].done() or len(self.pending) > keep):
            self.report(*self.pending.popleft())

    def run(self, workers: int, lookahead: int | None, on_start: Callable[[Job, int], None] | None) -> None:
        with (
            ThreadPoolExecutor(max_workers=workers) as compile_pool,
            # the previous driver finishing, this one, and up to TAILS evaluations checking outputs
            ThreadPoolExecutor(max_workers=TAILS + 2, thread_name_prefix="cm-eval") as eval_pool,
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="cm-prune") as pruner,
        ):
            self.pruner = pruner
            compile_pool.submit(prebuild_runtime, self.settings)
            builds = [compile_pool.submit(self.build, job) for job in self.jobs]
            tails_s = 0.0  # the loop's wait for earlier evaluations' output checks after the previous driver
            previous: threading.Event | None = None  # set when the previous driver has exited
            for k, job in enumerate(self.jobs):
                self.prefetcher.admit(k, lookahead)
                if on_start is not None:
                    on_start(job, self.compiled_count)
                waits, warm = self.wait_ready(k, builds[k], previous, tails_s)
                timed, exited = threading.Event(), threading.Event()
                fut = eval_pool.submit(self.evaluate, k, job, timed, exited, previous, warm)
                self.pending.append((k, fut, waits))
                self.report_finished(TAILS + 2)  # report what has returned; earlier output checks run beside this driver
                timed.wait()  # the driver has timed its last size (or exited, or there was none): start the next
                previous = exited
                t3 = time.monotonic()
                self.report_finished(TAILS + 1 if self.cache.has_room() else 0)  # this one and up to TAILS still checking
                tails_s = time.monotonic() - t3
            self.report_finished(0)

    def wait_ready(self, k: int, build: Future, previous: threading.Event | None, tails_s: float) -> tuple[dict[str, float], bool]:
        """Wait for job k's compile and data; (what it waited for, whether the GPU is still warm).

        What this evaluation waited for once the previous driver had timed its last size (not in wall_seconds):
        its compile, its data drawn ahead, earlier evaluations' output checks; and the GPU's idle time, from the
        previous driver's exit to now (0 while it still runs)."""
        t0 = time.monotonic()
        build.result()
        t1 = time.monotonic()
        self.prefetcher.wait_inputs(k)
        t2 = time.monotonic()
        waits = {"pipeline_wait_compile": round(t1 - t0, 3), "pipeline_wait_inputs": round(t2 - t1, 3)}
        running = previous is not None and not previous.is_set()
        idle = 0.0 if running else t2 - self.last_driver_exit
        if previous is not None:
            waits |= {"pipeline_wait_tails": round(tails_s, 3), "pipeline_gpu_idle": round(idle, 3)}
        return waits, previous is not None and idle <= WARM_GPU_S
