"""evaluate(): compile, check and time a candidate against the baseline in a child process.

Flow: validate input -> compile the candidate (symbol checks) -> build the generated driver ->
start the driver while the seeded inputs are drawn (or read from the data cache; the driver waits
for each dataset's `ready` marker) -> correctness calls with poisoned outputs and guard bands,
interleaved timing with every pair's inputs redrawn on the device and random pairs checked, a
fresh-input re-check -> each output is compared with the float64 reference as soon as the driver
writes it -> verdict, per-size rows, score P, per-stage seconds.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench_tasks import data
from bench_tasks.refresh import refresh_draw, refreshed_args
from bench_tasks.spec import Task, Variant, load_task

from . import compile as cc
from . import sandbox as sb
from . import source as src
from .ahead import after, dataset_tasks
from .checks import (
    Case,
    as_check,
    choose_sample,
    compare_outputs,
    generator_mismatch,
    inputs,
    outputs,
    read_inputs,
    read_output,
    reference,
    timed_inputs,
)
from .child import Child
from .cpus import driver_cores, limit_blas
from .datacache import DataCache, write_dataset
from .driver import MEMORY, ROLE, driver_source
from .errors import NoGpuError
from .plan import BufferPlan, CasePlan, Plan, Results, Sample, TimingPlan, choose_check_pairs, secret_key
from .result import Check, EvaluationResult, SizeRow, TimeStats, Verdict, flag_review_speedup, weighted_score
from .sandbox import make_scratch, remove_scratch, sandbox_for

if TYPE_CHECKING:
    from .vendor import VendorBuild
from settings import HarnessSettings, get_harness_settings

_EXIT_VERDICT = {3: Verdict.runtime_error, 4: Verdict.runtime_error, 5: Verdict.wrong_answer, 6: Verdict.timeout}

# The driver's `stage` lines -> the result's stage names (others keep their own). gpu_input_wait is part of
# gpu_checks (the driver blocked on a dataset the parent was still drawing, or reading it), and so are
# check_upload, check_call, check_verify and check_save (the correctness calls' input uploads and output
# poisoning, the calls, the guard and unchanged-input checks, saving the outputs); timing_warmup and
# timing_checked_pairs are parts of timing (the warm-up calls; saving the checked pairs' inputs and outputs);
# gate_wait is the wait, after driver_init, for the previous driver to leave the GPU (bench run's pipeline).
DRIVER_STAGES = {
    "init": "driver_init",
    "checks": "gpu_checks",
    "fresh": "gpu_checks",
    "timing": "timing",
    "input_wait": "gpu_input_wait",
    "warmup": "timing_warmup",
    "timed_checks": "timing_checked_pairs",
}


def gpu_status(settings: HarnessSettings | None = None) -> tuple[bool, str]:
    """(is a GPU visible, what was found or why not)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False, "nvidia-smi not found: no NVIDIA driver on this machine"
    env = _child_env(settings or get_harness_settings())
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"nvidia-smi failed: {exc}"
    gpus = [line for line in out.stdout.splitlines() if line.startswith("GPU")]
    if out.returncode != 0 or not gpus:
        return False, f"nvidia-smi lists no GPU ({(out.stdout + out.stderr).strip()[:200]})"
    return True, gpus[0]


@cache
def nvidia_driver_version() -> str:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ""
    try:
        out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""


def require_gpu(settings: HarnessSettings) -> None:
    ok, why = gpu_status(settings)
    if not ok:
        raise NoGpuError(
            f"No NVIDIA GPU found ({why}). Timing and checking kernels needs one. Without a GPU these still "
            "work: `cudamaster bench list`, `cudamaster bench eval TASK --candidate F --compile-only` "
            "(compile and symbol checks), and the test suite."
        )


def _child_env(settings: HarnessSettings) -> dict[str, str]:
    env = dict(os.environ)
    if settings.gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = settings.gpu
    return env


def _variant(task: str | Task, precision: str) -> Variant:
    return (load_task(task) if isinstance(task, str) else task).variant(precision)


def _sizes(variant: Variant, sizes: str | list[dict[str, int]]) -> tuple[str, list[dict[str, int]]]:
    if isinstance(sizes, str):
        return sizes, variant.task.size_list(sizes)
    return "custom", [dict(s) for s in sizes]


def _workers(settings: HarnessSettings) -> int:
    return settings.data_workers or min(8, os.cpu_count() or 1)


@dataclass
class Overlap:
    """How bench run's pipeline overlaps this evaluation's driver with the previous and the next one (evaluate()'s
    arguments of the same names)."""

    on_timing_done: Callable[[], None] | None = None
    on_driver_done: Callable[[], None] | None = None
    gate: threading.Event | None = None
    gpu_warm: bool = False


class Stages:
    """Busy seconds per stage of an evaluation (stages overlap: host work runs while the GPU works)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)

    def rounded(self) -> dict[str, float]:
        with self._lock:
            return {k: round(v, 3) for k, v in self.seconds.items()}


def _plan(
    variant: Variant,
    cases: list[Case],
    workdir: Path,
    settings: HarnessSettings,
    *,
    mode: str = "full",
    impl: str = "candidate",
    timing: bool = True,
    refresh_key: int = 0,
    dump_baseline: bool = False,
    gpu_warm: bool = False,
) -> Plan:
    task = variant.task
    plan = Plan(
        results=workdir / "results.txt",
        outdir=workdir / "out",
        mode=mode,
        impl=impl,
        timing=TimingPlan(
            settings.min_pairs,
            settings.max_pairs,
            settings.min_seconds_per_size,
            settings.max_seconds_per_size,
            target_rse(variant, settings),
            settings.warmup_calls,
            settings.warmup_seconds,
            None if gpu_warm else settings.warmup_seconds_first,
        ),
        refresh_key=refresh_key,
        dump_baseline=dump_baseline,
        wait_seconds=settings.run_timeout_s,
        call_floor_s=settings.call_timeout_floor_s,
        call_factor=settings.call_timeout_factor,
        input_checks_on_host=settings.input_checks_on_host,
        pinned_staging=settings.pinned_staging,
    )
    for case in cases:
        lengths = task.lengths(case.params, variant.precision)
        scalars = task.scalar_values(case.params, variant.precision)
        cp = CasePlan(case.index, timing=timing, check_pairs=list(case.check_pairs))
        for i, p in enumerate(variant.prototype.params):
            arg = variant.arg_of(p)
            if not p.pointer:
                cp.scalars.append((i, float(scalars[arg.name])))
                continue
            draw = refresh_draw(variant, arg.name)
            buf = BufferPlan(
                i,
                lengths[arg.name],
                ROLE[arg.role_for(variant.precision)],
                MEMORY[arg.memory_for(variant.precision)],
                None if draw is None else (draw.code, draw.p0, draw.p1),
            )
            if case.sample and arg.name in case.sample:
                buf.sample = (case.sample[arg.name].size, workdir / f"c{case.index}_sample_{arg.name}.bin")
            cp.buffers.append(buf)
        cp.datasets = [(directory, purpose) for _, purpose, directory in case.datasets]
        plan.cases.append(cp)
    return plan


def target_rse(variant: Variant, settings: HarnessSettings) -> float:
    """The stop rule's target for this variant: target_rse_host_memory where an argument is in host memory."""
    host = any(a.memory_for(variant.precision) == "host" for a in variant.task.args if not a.scalar)
    return settings.target_rse_host_memory if host else settings.target_rse


def _call_times(samples: list[Sample], late_us: np.ndarray | None = None) -> np.ndarray:
    """Each call's time: its events' interval plus any late work found after it."""
    events = np.asarray([e for e, _, _ in samples], dtype=np.float64)
    return events if late_us is None else events + late_us


def _stats(samples: list[Sample], late_us: np.ndarray | None = None) -> TimeStats:
    s = np.asarray(samples, dtype=np.float64).reshape(-1, 3)
    late = np.zeros(len(s)) if late_us is None else late_us
    v = _call_times(samples, late_us)
    q1, q3 = np.percentile(v, [25, 75])
    return TimeStats(
        median_us=float(np.median(v)),
        iqr_us=float(q3 - q1),
        min_us=float(v.min()),
        samples=len(v),
        wall_median_us=float(np.median(s[:, 1])),
        tail_median_us=float(np.median(s[:, 2])),
        late_work_us=float(np.median(late)),
    )


def late_work(candidate: list[Sample], baseline: list[Sample], settings: HarnessSettings) -> np.ndarray | None:
    """Per call, the candidate's work that ran past its end event (None: none found).

    The tail (end event to an event after a device-wide synchronise) is a fixed cost for an honest
    call; the baseline's median tail is that cost. A candidate whose median tail exceeds it by more
    than the slack left work running: each call's excess is counted as its time.
    """
    tails = np.asarray([t for _, _, t in candidate])
    cost = float(np.median([t for _, _, t in baseline]))
    event = float(np.median([e for e, _, _ in candidate]))
    slack = max(settings.late_work_slack_us, settings.late_work_slack_fraction * event)
    if np.median(tails) - cost <= slack:
        return None
    return np.maximum(tails - cost, 0.0)


def _driver_error(rc: int | None, output: str, settings: HarnessSettings) -> tuple[Verdict, str]:
    if rc is None:
        return (
            Verdict.timeout,
            f"the run did not finish within {settings.run_timeout_s:.0f} s and was killed (a hang or a far too slow kernel)",
        )
    err = next((line for line in output.splitlines() if line.startswith("CMERR ")), "")
    if err:
        _, kind, *rest = err.split(" ", 2)
        message = rest[0] if rest else kind
        if kind in ("plan", "io", "usage"):
            raise RuntimeError(f"harness driver failed ({kind}): {message}")
        return _EXIT_VERDICT.get(rc, Verdict.runtime_error), message
    if rc < 0:
        return Verdict.runtime_error, f"the process was killed by {signal.Signals(-rc).name} (crash in host code?)"
    if rc == 0:
        return Verdict.runtime_error, "the process ended early without finishing the plan (exit() called by the kernel's host code?)"
    return Verdict.runtime_error, f"the process exited with status {rc}: {output.strip()[-300:]}"


def evaluate(
    task: str | Task,
    precision: str,
    candidate_source: str | bytes | None = None,
    sizes: str | list[dict[str, int]] = "paper",
    *,
    settings: HarnessSettings | None = None,
    extra_flags: list[str] | None = None,
    seeds: list[int] | None = None,
    timing: bool = True,
    keep_workdir: bool = False,
    implementation: str = "candidate",
    on_driver_done: Callable[[], None] | None = None,
    gpu_warm: bool = False,
    on_timing_done: Callable[[], None] | None = None,
    gate: threading.Event | None = None,
) -> EvaluationResult:
    """Check and time `candidate_source` (None: the baseline alone) for one task variant.

    For bench run's pipeline, which overlaps one driver's start with the previous one's end:
    `on_timing_done` is called once the driver has timed its last size (only correctness runs are left);
    `on_driver_done` once it has exited (the GPU is free; output checks may still be running). With `gate`,
    the driver stops after its start-up (process, sandbox, CUDA context) until the event is set (the previous
    driver has exited): no two drivers' GPU work overlaps a timed call. `gpu_warm`: the GPU has just been busy,
    so the first timed size warms up like the others.

    `implementation="vendor"` measures the task's vendor reference (bench_tasks/vendor) in the candidate's
    place instead: compiled with its libraries, prototype checked, symbols not (it is trusted code).

    Bad input (unknown task/precision/size set, empty, non-UTF-8 or oversized source) raises
    TaskError or CandidateError; a missing GPU raises NoGpuError; a task without a vendor reference, or
    vendor libraries that are not installed, raise VendorUnavailable. Everything about the kernel
    itself is a verdict in the returned result.
    """
    started = time.monotonic()
    settings = settings or get_harness_settings()
    limit_blas(settings)
    variant = _variant(task, precision)
    size_set, size_list = _sizes(variant, sizes)
    seeds = list(seeds or settings.seeds)
    fresh_seed = secrets.randbelow(2**31 - 1) + 1000
    text, vendor_build = _measured_source(variant, candidate_source, implementation, settings)
    request = _Request(
        variant=variant,
        precision=precision,
        settings=settings,
        size_set=size_set,
        size_list=size_list,
        seeds=seeds,
        fresh_seed=fresh_seed,
        text=text,
        implementation=implementation,
        vendor_build=vendor_build,
        extra_flags=extra_flags,
        timing=timing,
        keep_files=keep_workdir,
        overlap=Overlap(on_timing_done, on_driver_done, gate, gpu_warm),
    )
    return variant.task.after_evaluation(_Evaluation(request, started).run(), request)


def _measured_source(
    variant: Variant, candidate_source: str | bytes | None, implementation: str, settings: HarnessSettings
) -> tuple[str | None, VendorBuild | None]:
    """The source measured in the candidate's place (None: the baseline alone), and the vendor build behind it."""
    if implementation == "vendor":
        if candidate_source is not None:
            raise ValueError("a vendor evaluation measures the task's vendor reference: pass no candidate source")
        from .vendor import compile_vendor

        vendor_build = compile_vendor(variant, settings)
        return vendor_build.source, vendor_build
    if implementation == "candidate":
        return (src.prepare(candidate_source, settings.max_source_bytes) if candidate_source is not None else None), None
    raise ValueError(f"implementation must be 'candidate' or 'vendor', not {implementation!r}")


@dataclass
class _Request:
    """What one evaluation was asked for, resolved: the variant, its sizes and seeds, the source to measure."""

    variant: Variant
    precision: str
    settings: HarnessSettings
    size_set: str
    size_list: list[dict[str, int]]
    seeds: list[int]  # the check seeds (cached datasets)
    fresh_seed: int  # the secret one (a fresh dataset, never cached)
    text: str | None  # the source measured in the candidate's place; None: the baseline alone
    implementation: str
    vendor_build: VendorBuild | None
    extra_flags: list[str] | None
    timing: bool
    keep_files: bool
    overlap: Overlap

    def new_result(self) -> EvaluationResult:
        """The result as known before anything runs (verdict ok until something fails)."""
        settings, variant, text, vendor_build = self.settings, self.variant, self.text, self.vendor_build
        return EvaluationResult(
            task=variant.task.name,
            precision=self.precision,
            verdict=Verdict.ok,
            size_set=self.size_set,
            compile_flags=vendor_build.outcome.flags if vendor_build else cc.candidate_flags(settings, self.extra_flags),
            nvcc_version=cc.nvcc_version(settings.nvcc),
            seeds=[*self.seeds, self.fresh_seed],
            baseline_only=text is None,
            implementation="baseline" if text is None else self.implementation,
            vendor_libraries=list(vendor_build.reference.libraries) if vendor_build else [],
            source_sha256=hashlib.sha256(text.encode()).hexdigest() if text else "",
            refreshed_inputs=refreshed_args(variant) if self.timing else [],
            target_rse=target_rse(variant, settings) if self.timing else None,
        )


class _Evaluation:
    """One evaluation from its request to its result: draw ahead, compile, run the driver, the verdict."""

    def __init__(self, request: _Request, started: float):
        self.request, self.started = request, started
        self.result = request.new_result()
        self.stages = Stages()

    def finish(self, verdict: Verdict, message: str = "", log: str = "") -> EvaluationResult:
        result = self.result
        result.verdict, result.message, result.log = verdict, message, log[-20000:]
        result.wall_seconds = round(time.monotonic() - self.started, 3)
        result.stages = self.stages.rounded()
        return result

    def run(self) -> EvaluationResult:
        inputs_dir = make_scratch(self.request.settings, "cm-in-")  # datasets drawn here, not cached: read-only inside the sandbox
        inputs_dir.chmod(0o755)
        try:
            return self._compile_and_drive(inputs_dir)
        finally:
            if not self.request.keep_files:
                remove_scratch(inputs_dir)

    def _compile_and_drive(self, inputs_dir: Path) -> EvaluationResult:
        """While the candidate compiles: the check datasets are drawn into the data cache (already there in bench run,
        whose pipeline drew them ahead), then the fresh ones (seed secret, never cached) into inputs_dir, then the
        check datasets' full references. The driver then finds them all ready instead of waiting for each."""
        request, settings = self.request, self.request.settings
        ahead = ThreadPoolExecutor(max_workers=_workers(settings), thread_name_prefix="cm-ahead")
        try:
            draws, fresh = self._draw_ahead(ahead, inputs_dir)
            with self.stages("compile"):
                built = _build(request.variant, request.text, settings, request.extra_flags, request.vendor_build)
            if isinstance(built, tuple):
                return self.finish(*built)
            require_gpu(settings)
            with self.stages("draw_wait"):
                for drawn in draws:  # drawn by now but at the largest sizes (a failed draw is drawn again below)
                    drawn.exception()
            return self._drive(built, inputs_dir, fresh)
        finally:
            # After a run its references are the evaluation's own (done, or not needed). A candidate that did not
            # build (or no GPU) cancels what has not started and waits for the draws that have: nothing of this
            # evaluation may still write into the scratch root once it returns (its caller may remove it: a draw
            # left running into a directory being removed made the removal fail), nor into inputs_dir below.
            ahead.shutdown(wait=True, cancel_futures=True)

    def _draw_ahead(self, ahead: ThreadPoolExecutor, inputs_dir: Path) -> tuple[list[Future], dict[Path, Future]]:
        """The check datasets' draws, and the fresh ones' by directory, submitted (their references after them)."""
        request = self.request
        tasks = dataset_tasks(request.variant, request.size_list, request.settings, request.seeds)
        draws = [ahead.submit(draw) for draw, _ in tasks]

        def draw_fresh(i: int, params: dict[str, int]) -> Path:
            with self.stages("inputs"):
                return write_dataset(request.variant, params, request.fresh_seed, fresh_dir(inputs_dir, i))

        fresh = {fresh_dir(inputs_dir, i): ahead.submit(draw_fresh, i, params) for i, params in enumerate(request.size_list)}
        for drawn, (_, ref) in zip(draws, tasks, strict=True):
            ahead.submit(after, drawn, ref)
        return draws, fresh

    def _drive(self, exe: Path, inputs_dir: Path, drawn_ahead: dict[Path, Future]) -> EvaluationResult:
        settings = self.request.settings
        workdir = make_scratch(settings, "cm-eval-")  # the driver's only writable directory
        try:
            (workdir / "out").mkdir()
            return self.finish(*_DriverRun(self.request, exe, self.result, workdir, inputs_dir, self.stages, drawn_ahead).run())
        finally:
            if not self.request.keep_files:
                remove_scratch(workdir)
            DataCache(settings).prune()


def _build(
    variant: Variant, text: str | None, settings: HarnessSettings, extra_flags: list[str] | None, vendor_build: VendorBuild | None = None
) -> Path | tuple[Verdict, str, str]:
    """The driver executable, or (verdict, message, log) when the candidate does not build.

    The harness runtime, the baseline and the driver's host code compile on other threads while the candidate
    compiles (from empty caches the runtime alone takes longer than most candidates); each lands in the compile
    cache, so a candidate that does not build returns at once and leaves them there for the next evaluation."""
    pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="cm-build")
    try:
        runtime = pool.submit(cc.compile_runtime, settings)
        base = pool.submit(cc.compile_baseline, variant, settings)
        driver_obj = pool.submit(cc.compile_driver_object, variant, driver_source(variant, text is not None), settings)
        cand_obj, cand_params = None, None
        if text is not None:
            outcome = vendor_build.outcome if vendor_build else cc.compile_candidate(variant, text, settings, extra_flags)
            if not outcome.ok:
                return outcome.verdict, outcome.message, outcome.log  # type: ignore[return-value]
            cand_obj, cand_params = outcome.object_path, outcome.params
        try:
            base_obj = base.result()
        except cc.BaselineError as exc:
            return exc.outcome.verdict, str(exc), exc.outcome.log  # type: ignore[return-value]
        runtime.result()  # a harness bug in either raises here, as build_driver would
        driver_obj.result()
        try:
            return cc.build_driver(
                variant,
                driver_source(variant, cand_obj is not None, cand_params),
                base_obj,
                cand_obj,
                settings,
                link_flags=vendor_build.link_flags if vendor_build else None,
            )
        except cc.LinkError as exc:
            return Verdict.link_error, "linking the candidate with the harness failed: " + cc._first_error(str(exc)), str(exc)
    finally:
        pool.shutdown(wait=False)  # compiles still running finish into the cache on their own


def compile_only(
    task: str | Task,
    precision: str,
    candidate_source: str | bytes,
    *,
    settings: HarnessSettings | None = None,
    extra_flags: list[str] | None = None,
) -> tuple[Verdict, str, str]:
    """What `bench eval --compile-only` does, without a GPU: prepare the source, compile the candidate, check its
    prototype and symbols, and link it with the baseline, the runtime and its generated driver, as evaluate()
    would. (verdict, message, log); `ok` when the candidate would run."""
    settings = settings or get_harness_settings()
    variant = _variant(task, precision)
    built = _build(variant, src.prepare(candidate_source, settings.max_source_bytes), settings, extra_flags)
    return built if isinstance(built, tuple) else (Verdict.ok, "compiled, checked and linked", "")


def fresh_dir(inputs_dir: Path, case: int) -> Path:
    """Where a size's fresh dataset (the secret seed's, never cached) is drawn."""
    return inputs_dir / f"c{case}" / "fresh"


def _cases(
    variant: Variant,
    size_list: list[dict[str, int]],
    seeds: list[int],
    fresh_seed: int,
    inputs_dir: Path,
    settings: HarnessSettings,
    timing: bool,
) -> list[Case]:
    """Every size with its datasets (cached check seeds, a fresh one here) and its secret choices:
    the output sample and the timed pairs to check, from the operating system's entropy."""
    cache = DataCache(settings)
    secret = secrets.SystemRandom()
    sample_rng = np.random.default_rng(secret.getrandbits(64))
    cases = []
    for i, params in enumerate(size_list):
        # A cached dataset complete now is read in place; any other is drawn into inputs_dir during the run
        # (published into the cache once the driver has ended): the sandbox binds exactly these directories.
        datasets = [(s, "check", cache.ready(variant, params, s) or inputs_dir / f"c{i}" / f"s{s}") for s in seeds]
        case = Case(i, params, [*datasets, (fresh_seed, "fresh", fresh_dir(inputs_dir, i))])
        choose_sample(variant, case, settings, sample_rng)
        if timing:
            case.check_pairs = choose_check_pairs(settings.min_pairs, settings.max_pairs, secret)
        cases.append(case)
    return cases


def _start_driver(exe: Path, workdir: Path, inputs_dir: Path, cases: list[Case], variant: Variant, settings: HarnessSettings) -> Child:
    """The driver in the sandbox: `workdir` is its scratch directory (the staged driver and plan read-only in it);
    the datasets (drawn into `inputs_dir` while it runs, or in the data cache) are visible read-only. It may add
    its outputs (each stage of each dataset and every checked timed call's inputs and outputs, with room to
    spare) plus sandbox_scratch_bytes."""
    driver = sb.stage(exe, workdir, "driver")
    cache_root = DataCache(settings).root
    expected = 0
    for case in cases:
        lengths = variant.task.lengths(case.params, variant.precision)
        size = {n: lengths[n] * np.dtype(data.STORAGE[variant.param(n).dtype]).itemsize for n in lengths}
        out_bytes = sum(size[o] for o in outputs(variant))
        expected += 4 * out_bytes * len(case.datasets) + 2 * len(case.check_pairs) * sum(size.values())
    cached = sorted({directory for case in cases for _, _, directory in case.datasets if directory.is_relative_to(cache_root)})
    return sandbox_for(settings).start(
        [str(driver), str(workdir / "plan.txt")],
        scratch=workdir,
        read_only=[driver, workdir / "plan.txt"],
        shared=[inputs_dir, *cached],
        gpu=True,
        quota_bytes=expected + settings.sandbox_scratch_bytes,
        what="the timing driver",
    )


class _DriverRun:
    """Draw the data, run the driver, and check its outputs as it writes them; the verdict.

    Each output file the driver saves is deleted once it is checked (a timed pair's saved inputs with it), unless
    the request keeps its files: the scratch directory holds what is still to be checked, not GBs of what was."""

    def __init__(
        self,
        request: _Request,
        exe: Path,
        result: EvaluationResult,
        workdir: Path,
        inputs_dir: Path,
        stages: Stages,
        drawn_ahead: dict[Path, Future] | None = None,
    ):
        self.request, self.variant, self.settings = request, request.variant, request.settings
        self.exe, self.result, self.workdir, self.inputs_dir, self.stages = exe, result, workdir, inputs_dir, stages
        self.drawn_ahead = drawn_ahead or {}
        self.oracle = self.variant.task.oracle == "baseline"
        self.out = workdir / "out"
        self.gate_file = inputs_dir / "go"  # read-only inside the sandbox: only the parent opens the gate
        self.cache = DataCache(self.settings)
        self.checks: list[tuple[int, int, Check]] = []  # (case, position in the results, check)
        self.faults: list[str] = []
        self.results = Results()
        self.reader = _Tail(workdir / "results.txt")
        self.drawn: dict[tuple[int, int], Future] = {}
        self.references: dict[tuple[int, int], Future] = {}
        self.jobs: list[tuple[int, int, Future]] = []
        self.pending: dict[tuple[int, int], set[str]] = {}
        self.exited_at: list[float] = []
        self.told_timing_done = False
        self.saved_impls = {"baseline"} if result.baseline_only else {"candidate", "baseline"} if self.oracle else {"candidate"}
        self.checked_impls = (
            [] if self.oracle and result.baseline_only else sorted(self.saved_impls - ({"baseline"} if self.oracle else set()))
        )

    def run(self) -> tuple[Verdict, str, str]:
        self.cases = self._write_plan()
        self.check = ThreadPoolExecutor(max_workers=_workers(self.settings))
        self.waiter = ThreadPoolExecutor(max_workers=1)
        try:
            rc, output = self._watch()
        finally:
            self._close()
        self._record()
        return self._verdict(rc, output)

    def _write_plan(self) -> list[Case]:
        """The cases with their secret choices, the output samples, and the plan the driver reads."""
        request, workdir = self.request, self.workdir
        cases = _cases(self.variant, request.size_list, request.seeds, request.fresh_seed, self.inputs_dir, self.settings, request.timing)
        for case in cases:
            for name, idx in (case.sample or {}).items():
                idx.tofile(workdir / f"c{case.index}_sample_{name}.bin")
        self.refresh_key = secret_key()
        plan = _plan(
            self.variant,
            cases,
            workdir,
            self.settings,
            timing=request.timing,
            refresh_key=self.refresh_key,
            dump_baseline=self.oracle,
            gpu_warm=request.overlap.gpu_warm,
        )
        plan.gate = self.gate_file if request.overlap.gate is not None else None
        plan.cpus = driver_cores(self.settings) or []
        (workdir / "plan.txt").write_text(plan.to_text())
        return cases

    def _watch(self) -> tuple[int | None, str]:
        """Start the driver and check what it writes until it exits; (exit status, output)."""
        cases = self.cases
        self.drawn = {(c.index, d): self.check.submit(self._draw, c, d) for c in cases for d in range(len(c.datasets))}
        child = _start_driver(self.exe, self.workdir, self.inputs_dir, cases, self.variant, self.settings)
        self.driver_started = time.monotonic()
        finished = self.waiter.submit(child.wait, self.settings.run_timeout_s)
        finished.add_done_callback(self._on_exit)
        self.references = {(c.index, d): self.check.submit(self._refs, c, d) for c in cases for d in range(len(c.datasets))}
        self._follow(finished, child)
        rc, output = finished.result()
        self.stages.add("driver", (self.exited_at[0] if self.exited_at else time.monotonic()) - self.driver_started)
        self._pump()
        self.results.feed("\n")
        pump_end = time.monotonic()
        self._collect(rc)
        self.stages.add("after_driver", time.monotonic() - pump_end)
        return rc, output

    def _on_exit(self, _: Future) -> None:  # called by the waiter the moment the driver has exited
        self.exited_at.append(time.monotonic())
        if self.request.overlap.on_driver_done is not None:
            self.request.overlap.on_driver_done()

    def _follow(self, finished: Future, child: Child) -> None:
        """Check the driver's results as they come, and open its gate, until it exits (a failed check kills it)."""
        gate = self.request.overlap.gate
        while not finished.done():
            self._pump()
            error = self._failed()
            if error is not None:
                child.kill_group()
                raise error
            if gate is not None and not self.gate_file.exists():
                if gate.wait(0.02):  # the previous driver has exited: open at once
                    self.gate_file.touch()
            else:
                time.sleep(0.02)

    def _draw(self, case: Case, d: int) -> Path:
        seed, _purpose, directory = case.datasets[d]
        early = self.drawn_ahead.get(directory)  # drawn while the candidate compiled (a failed draw: again here)
        if early is not None and not early.cancelled() and early.exception() is None:
            return directory
        with self.stages("inputs"):
            if directory.is_relative_to(self.cache.root):
                return self.cache.dataset(self.variant, case.params, seed, directory)
            return write_dataset(self.variant, case.params, seed, directory)

    def _refs(self, case: Case, d: int) -> dict[str, np.ndarray]:
        directory = self.drawn[(case.index, d)].result()
        if self.oracle:
            return {}
        seed, purpose, _ = case.datasets[d]

        def compute() -> dict[str, np.ndarray]:
            with self.stages("references"):
                return reference(self.variant, case, read_inputs(self.variant, directory, case.params))

        if case.sample is None and purpose == "check":  # cached (or being computed ahead by bench run's pipeline)
            return self.cache.full_reference(self.variant, case.params, seed, compute)[0]
        return compute()

    def _saved(self, case: Case, filename: str, name: str) -> tuple[np.ndarray, int]:
        return read_output(self.variant, case, self.out / filename, name), self.results.unwritten.get(filename, 0)

    def _checked(self, *filenames: str) -> None:
        if not self.request.keep_files:
            for filename in filenames:
                (self.out / filename).unlink(missing_ok=True)

    def _oracle_outputs(self, case: Case, prefix: str) -> dict[str, np.ndarray]:
        """A custom task's expected outputs: its baseline's, as the driver saved them (`prefix` + name)."""
        variant = self.variant
        return {n: data.to_float64(self._saved(case, f"{prefix}{n}.bin", n)[0], variant.param(n).dtype) for n in outputs(variant)}

    def _output_check(self, ci: int, ds: int, impl: str, stage: str) -> Check:
        variant, case = self.variant, self.cases[ci]
        seed = case.datasets[ds][0]
        want = self._oracle_outputs(case, f"c{ci}_d{ds}_baseline_first_") if self.oracle else self.references[(ci, ds)].result()
        with self.stages("output_checks"):
            got = {n: self._saved(case, f"c{ci}_d{ds}_{impl}_{stage}_{n}.bin", n) for n in outputs(variant)}
            self._checked(*(f"c{ci}_d{ds}_{impl}_{stage}_{n}.bin" for n in outputs(variant)))  # (an oracle's outputs stay)
            seen = lambda: data.float64_inputs(variant, read_inputs(variant, self.drawn[(ci, ds)].result(), case.params))  # noqa: E731
            return as_check(compare_outputs(variant, case, got, want, seen), impl, seed, stage)

    def _timed_check(self, ci: int, pair: int, impls: list[str]) -> list[Check]:
        variant, case = self.variant, self.cases[ci]
        first = case.timed_dataset
        kept_from = self.drawn[(ci, first)].result()
        stored = timed_inputs(variant, case, self.out, pair, kept_from)
        pair_files = [f"c{ci}_t{pair}_input_{n}.bin" for n in inputs(variant)] + [
            f"c{ci}_t{pair}_{impl}_{n}.bin" for impl in self.saved_impls for n in outputs(variant)
        ]
        wrong = generator_mismatch(variant, case, stored, self.refresh_key, pair, np.random.default_rng(pair), kept_from)
        if wrong:
            self.faults.append(f"size {case.params}: {wrong}")
            self._checked(*pair_files)
            return []
        if self.oracle:
            want = self._oracle_outputs(case, f"c{ci}_t{pair}_baseline_")
        else:
            with self.stages("references"):
                want = reference(variant, case, stored)
        found = []
        with self.stages("output_checks"):
            for impl in impls:
                got = {n: self._saved(case, f"c{ci}_t{pair}_{impl}_{n}.bin", n) for n in outputs(variant)}
                cmps = compare_outputs(variant, case, got, want, lambda: data.float64_inputs(variant, stored))
                found.append(as_check(cmps, impl, case.datasets[first][0], "timed_call", pair))
        self._checked(*pair_files)
        return found

    def _pump(self) -> None:
        """Submit a check for each output (and each complete timed pair) the driver has reported since the last call."""
        for entry in self.results.feed(self.reader.read()):
            position = self.results.order[entry]
            if entry[0] == "output":
                _, ci, ds, impl, stage = entry
                if not (self.oracle and impl == "baseline"):  # a custom task's baseline is the oracle, not checked against itself
                    self.jobs.append((ci, position, self.check.submit(self._output_check, ci, ds, impl, stage)))
            else:
                _, ci, pair, impl = entry
                seen = self.pending.setdefault((ci, pair), set())
                seen.add(impl)
                if seen == self.saved_impls and self.checked_impls:
                    self.jobs.append((ci, position, self.check.submit(self._timed_check, ci, pair, self.checked_impls)))
        on_timing_done = self.request.overlap.on_timing_done
        if self.results.timing_done and not self.told_timing_done and on_timing_done is not None:
            self.told_timing_done = True
            on_timing_done()

    def _failed(self) -> BaseException | None:
        for fut in [*self.drawn.values(), *self.references.values(), *(j for _, _, j in self.jobs)]:
            if fut.done() and fut.exception() is not None:
                return fut.exception()
        return None

    def _collect(self, rc: int | None) -> None:
        """The checks' findings, once the driver has exited."""
        for ci, position, job in self.jobs:
            try:
                found = job.result()
            except Exception:
                if rc == 0 and self.results.done:
                    raise
                continue  # the driver failed: its verdict says why, whatever it left half written
            for c in found if isinstance(found, list) else [found]:
                self.checks.append((ci, position, c))

    def _close(self) -> None:
        self.waiter.shutdown(wait=True)
        self.check.shutdown(wait=True, cancel_futures=True)
        for case in self.cases:  # the driver has ended: check datasets drawn during the run go into the cache
            for seed, purpose, directory in case.datasets:
                if purpose == "check" and directory.is_relative_to(self.inputs_dir):
                    self.cache.publish(self.variant, case.params, seed, directory)

    def _record(self) -> None:
        """The driver's stages, GPU and CPUs, and the per-size rows, into the result."""
        results, result = self.results, self.result
        for _case_id, stage, seconds in results.stages:
            self.stages.add(DRIVER_STAGES.get(stage, stage), seconds)
        if results.gpu_start is not None:  # process, sandbox, CUDA context and gate, as the GPU saw them
            self.stages.add("driver_startup", max(0.0, results.gpu_start - self.driver_started))
        if results.gpu is not None:
            results.gpu.driver_version = nvidia_driver_version() or results.gpu.driver_version
        result.gpu = results.gpu
        result.driver_cpus = results.cpus
        result.refresh_key = f"{self.refresh_key:016x}"
        ordered = sorted(self.checks, key=lambda k: k[1])
        result.rows = [
            _row(
                self.variant,
                case,
                [c for ci, _, c in ordered if ci == case.index],
                results.times.get(case.index, {}),
                self.settings,
                bool(result.refreshed_inputs),
            )
            for case in self.cases
        ]

    def _verdict(self, rc: int | None, output: str) -> tuple[Verdict, str, str]:
        if rc != 0 or not self.results.done:
            verdict, message = _driver_error(rc, output, self.settings)
            if verdict in (Verdict.runtime_error, Verdict.timeout):
                healthy, why = gpu_status(self.settings)
                if not healthy:
                    message += f" [GPU check after the fault failed: {why}]"
            return verdict, message, output
        if self.faults:
            return Verdict.runtime_error, self.faults[0], output
        return (*_verdict(self.variant, self.result, self.settings), "")


class _Tail:
    """The text appended to a file since the last read (the driver's results, while it writes them)."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def read(self) -> str:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return ""
        self.offset += len(chunk)
        return chunk.decode("utf-8", errors="replace")


def _row(
    variant: Variant, case: Case, checks: list[Check], t: dict[str, list[Sample]], settings: HarnessSettings, refreshed: bool = True
) -> SizeRow:
    task = variant.task
    row = SizeRow(params=case.params, complexity=task.complexity_of(case.params), passed=all(c.passed for c in checks), checks=checks)
    mine = [c for c in checks if c.impl == "candidate"] or checks
    if mine:
        row.max_abs_err = max(c.max_abs_err or 0.0 for c in mine)
        row.max_rel_err = max(c.max_rel_err or 0.0 for c in mine)
    row.roofline_floor_us = task.roofline_floor_us(case.params, variant.precision, settings)
    if "baseline" in t:
        row.baseline = _stats(t["baseline"])
        row.baseline_roofline_pct = 100.0 * row.roofline_floor_us / row.baseline.median_us
        if not refreshed:
            row.flags.append("inputs_not_refreshed")
    if "candidate" in t and "baseline" in t:
        late = late_work(t["candidate"], t["baseline"], settings)
        if late is not None:
            row.flags.append("late_work")
        row.candidate = _stats(t["candidate"], late)
        row.candidate_roofline_pct = 100.0 * row.roofline_floor_us / row.candidate.median_us
        row.speedup, row.speedup_iqr = paired_speedup(_call_times(t["baseline"]), _call_times(t["candidate"], late))
        flag_review_speedup(row, settings.review_speedup)
    timed = row.candidate or row.baseline
    if timed is not None:
        if timed.median_us < 10.0:
            row.flags.append("launch_bound")
        if timed.wall_median_us > 2.0 * timed.median_us + 100.0:
            row.flags.append("wall_gap")
    return row


def paired_speedup(baseline_us: np.ndarray, candidate_us: np.ndarray) -> tuple[float, float]:
    """The speedup of paired calls (call i of each, interleaved): the median and IQR of baseline / candidate, each
    candidate time floored at 1 ns."""
    ratios = np.asarray(baseline_us, dtype=np.float64) / np.maximum(np.asarray(candidate_us, dtype=np.float64), 1e-3)
    q1, q3 = np.percentile(ratios, [25, 75])
    return float(np.median(ratios)), float(q3 - q1)


def _verdict(variant: Variant, result: EvaluationResult, settings: HarnessSettings) -> tuple[Verdict, str]:
    who = "baseline" if result.baseline_only else "candidate"
    for row in result.rows:
        for check in row.checks:
            if check.impl == who and not check.passed:
                if check.stage == "timed_call":
                    return Verdict.wrong_answer, (
                        f"size {row.params}, timed call {check.call} (inputs redrawn on the device, "
                        f"a call chosen at random and checked): {check.message}"
                    )
                return Verdict.wrong_answer, f"size {row.params}, seed {check.seed}, {check.stage} run: {check.message}"
    for row in result.rows:
        stats = row.baseline if result.baseline_only else row.candidate
        if stats is not None and row.roofline_floor_us and stats.median_us < 0.9 * row.roofline_floor_us:
            return Verdict.rejected, (
                f"size {row.params}: {stats.median_us:.2f} us is below the roofline floor of "
                f"{row.roofline_floor_us:.2f} us; the work cannot have been done"
            )
    if not result.baseline_only and (score := weighted_score(result.rows)) is not None:
        result.score = score
    return Verdict.ok, ""


@dataclass
class SingleRun:
    """One call of one implementation at one size, for a profiler: run `argv` (e.g. under ncu).

    The driver brackets the call with cudaProfilerStart/Stop, so `ncu --profile-from-start off`
    sees only the implementation's own kernels. Call `cleanup()` when done.
    """

    argv: list[str]
    workdir: Path
    env: dict[str, str]  # the environment when no sandbox is used (sandbox = "none")
    params: dict[str, int]
    impl: str
    settings: HarnessSettings  # the settings it was prepared with (its sandbox, its tools)
    read_only: list[Path] = field(default_factory=list)

    def start(self, prefix: list[str], tools: tuple[str, ...] = ()) -> Child:
        """Start `prefix + argv` (e.g. ncu ...) in the evaluation's sandbox, with `workdir` as its scratch directory."""
        return sandbox_for(self.settings).start(
            [*prefix, *self.argv], scratch=self.workdir, read_only=self.read_only, gpu=True, tools=tools
        )

    def cleanup(self) -> None:
        remove_scratch(self.workdir)


def prepare_single_run(
    task: str | Task,
    precision: str,
    candidate_source: str | bytes | None,
    params: dict[str, int],
    *,
    settings: HarnessSettings | None = None,
    extra_flags: list[str] | None = None,
    seed: int = 1,
) -> SingleRun:
    """Compile and stage one call of the candidate (or, with None, the baseline) at `params`.

    Raises ValueError with the compile verdict's message when the candidate does not build.
    """
    settings = settings or get_harness_settings()
    variant = _variant(task, precision)
    cand_obj, cand_params = None, None
    if candidate_source is not None:
        outcome = cc.compile_candidate(variant, src.prepare(candidate_source, settings.max_source_bytes), settings, extra_flags)
        if not outcome.ok:
            raise ValueError(f"{outcome.verdict.value}: {outcome.message}")  # type: ignore[union-attr]
        cand_obj, cand_params = outcome.object_path, outcome.params
    exe = cc.build_driver(
        variant, driver_source(variant, cand_obj is not None, cand_params), cc.compile_baseline(variant, settings), cand_obj, settings
    )
    workdir = make_scratch(settings, "cm-once-")
    (workdir / "out").mkdir()
    case = Case(0, dict(params), [(seed, "check", workdir / "c0")])
    write_dataset(variant, case.params, seed, workdir / "c0")
    impl = "candidate" if cand_obj is not None else "baseline"
    plan = workdir / "plan.txt"
    plan.write_text(_plan(variant, [case], workdir, settings, mode="once", impl=impl, timing=False).to_text())
    driver = sb.stage(exe, workdir, "driver")
    return SingleRun(
        [str(driver), str(plan)],
        workdir,
        _child_env(settings),
        dict(params),
        impl,
        settings,
        read_only=[driver, plan, workdir / "c0"],
    )
