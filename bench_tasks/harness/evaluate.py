"""evaluate(): compile, check and time a candidate against the baseline in a child process.

Flow: validate input -> compile the candidate (symbol checks) -> build the generated driver ->
write seeded inputs -> run the driver in its own process group with a time limit (correctness
calls with poisoned outputs and guard bands, interleaved timing, a fresh-input re-check) while
the float64 references are computed here -> compare -> verdict, per-size rows, score P.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from bench_tasks import data
from bench_tasks.compare import Comparison, check_outputs, compare
from bench_tasks.spec import INPUT_ROLES, Task, Variant, load_task

from . import compile as cc
from . import source as src
from .child import Child
from .driver import MEMORY, ROLE, driver_source
from .errors import NoGpuError
from .result import Check, EvaluationResult, GpuInfo, SizeRow, TimeStats, Verdict
from .settings import HarnessSettings, get_settings

_EXIT_VERDICT = {3: Verdict.runtime_error, 4: Verdict.runtime_error, 5: Verdict.wrong_answer}


def gpu_status(settings: HarnessSettings | None = None) -> tuple[bool, str]:
    """(is a GPU visible, what was found or why not)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False, "nvidia-smi not found: no NVIDIA driver on this machine"
    env = _child_env(settings or get_settings())
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


@dataclass
class _Case:
    index: int
    params: dict[str, int]
    datasets: list[tuple[int, str, Path]]  # (seed, purpose, directory)
    sample: dict[str, np.ndarray] | None = None


def _variant(task: str | Task, precision: str) -> Variant:
    return (load_task(task) if isinstance(task, str) else task).variant(precision)


def _sizes(variant: Variant, sizes: str | list[dict[str, int]]) -> tuple[str, list[dict[str, int]]]:
    if isinstance(sizes, str):
        return sizes, variant.task.size_list(sizes)
    return "custom", [dict(s) for s in sizes]


def _outputs(variant: Variant) -> list[str]:
    return variant.outputs()


def _parallel(settings: HarnessSettings, fn, items) -> list:
    """fn over items in threads (the data path is numpy and file I/O, which release the GIL)."""
    with ThreadPoolExecutor(max_workers=settings.data_workers or min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(fn, items))


def _write_datasets(variant: Variant, cases: list[_Case], settings: HarnessSettings) -> None:
    """Draw and store every dataset, in threads."""

    def write(seed: int, directory: Path, params: dict[str, int]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for name, arr in data.generate(variant, params, seed).items():
            arr.tofile(directory / f"{name}.bin")

    _parallel(settings, lambda job: write(*job), [(seed, directory, case.params) for case in cases for seed, _, directory in case.datasets])


def _plan_text(variant: Variant, cases: list[_Case], workdir: Path, settings: HarnessSettings, mode: str = "full",
               impl: str = "candidate", timing: bool = True) -> str:
    lines = [f"mode {mode}", f"impl {impl}", f"results {workdir / 'results.txt'}", f"outdir {workdir / 'out'}",
             f"timing {settings.min_pairs} {settings.max_pairs} {settings.min_seconds_per_size} {settings.max_seconds_per_size} "
             f"{settings.target_rse} {settings.warmup_calls} {settings.warmup_seconds}"]
    task = variant.task
    for case in cases:
        lengths = task.lengths(case.params, variant.precision)
        scalars = task.scalar_values(case.params, variant.precision)
        lines.append(f"case {case.index}")
        for i, p in enumerate(variant.prototype.params):
            arg = variant.arg_of(p)
            if p.pointer:  # buffer ARG COUNT ROLE MEMORY
                lines.append(f"buffer {i} {lengths[arg.name]} {ROLE[arg.role_for(variant.precision)]} "
                             f"{MEMORY[arg.memory_for(variant.precision)]}")
            else:
                lines.append(f"scalar {i} {float(scalars[arg.name])!r}")
        for _, purpose, directory in case.datasets:
            lines.append(f"dataset {directory} {purpose}")
        lines.append(f"time {int(timing)}")
    return "\n".join(lines) + "\n"


def _read_stored(variant: Variant, directory: Path, params: dict[str, int]) -> dict[str, np.ndarray]:
    lengths = variant.task.lengths(params, variant.precision)
    stored = {}
    for a in variant.task.args:
        if a.role_for(variant.precision) in INPUT_ROLES:
            dtype = variant.param(a.name).dtype
            stored[a.name] = np.fromfile(directory / f"{a.name}.bin", dtype=data.STORAGE[dtype], count=lengths[a.name])
    return stored


def _choose_sample(variant: Variant, case: _Case, settings: HarnessSettings, rng: np.random.Generator) -> None:
    """At large sizes the reference covers a random sample of each output (plus its first and last element)."""
    task = variant.task
    lengths = task.lengths(case.params, variant.precision)
    flops, _ = task.work(case.params, variant.precision)
    outs = _outputs(variant)
    if task.oracle == "baseline" or not (flops > settings.reference_full_flops or any(lengths[o] > settings.reference_full_elements for o in outs)):
        return
    case.sample = {}
    for o in outs:
        n = lengths[o]
        k = min(n, settings.reference_sample)
        idx = rng.choice(n, size=k, replace=False) if k < n else np.arange(n)
        case.sample[o] = np.unique(np.concatenate([idx, [0, n - 1]]).astype(np.int64))


def _reference(variant: Variant, case: _Case, directory: Path) -> dict[str, np.ndarray]:
    task = variant.task
    if task.oracle == "baseline":  # custom task: the baseline's output is read after the run
        return {}
    names = data.reference_names(variant, case.params)
    lengths = task.lengths(case.params, variant.precision)
    outs = _outputs(variant)
    x = data.float64_inputs(variant, _read_stored(variant, directory, case.params))
    ref = task.reference_module.reference(x, names, variant.precision, case.sample)
    result = {}
    for o in outs:
        r = np.asarray(ref[o], dtype=np.float64).reshape(-1)
        if case.sample is not None and r.size == lengths[o] and r.size != case.sample[o].size:
            r = r[case.sample[o]]
        result[o] = r
    return result


Sample = tuple[float, float, float]  # (event µs, host wall µs, tail µs) of one timed call


def _call_times(samples: list[Sample], late_us: np.ndarray | None = None) -> np.ndarray:
    """Each call's time: its events' interval plus any late work found after it."""
    events = np.asarray([e for e, _, _ in samples], dtype=np.float64)
    return events if late_us is None else events + late_us


def _stats(samples: list[Sample], late_us: np.ndarray | None = None) -> TimeStats:
    s = np.asarray(samples, dtype=np.float64).reshape(-1, 3)
    late = np.zeros(len(s)) if late_us is None else late_us
    v = _call_times(samples, late_us)
    q1, q3 = np.percentile(v, [25, 75])
    return TimeStats(median_us=float(np.median(v)), iqr_us=float(q3 - q1), min_us=float(v.min()), samples=len(v),
                     wall_median_us=float(np.median(s[:, 1])), tail_median_us=float(np.median(s[:, 2])),
                     late_work_us=float(np.median(late)))


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


def _parse_results(path: Path) -> tuple[GpuInfo | None, list[tuple[int, int, str, str]], dict[int, dict[str, list[Sample]]]]:
    gpu, outputs, times = None, [], {}
    if not path.exists():
        return gpu, outputs, times
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "device" and len(parts) >= 8:
            drv, rt = int(parts[6]), int(parts[7])
            gpu = GpuInfo(name=parts[1].replace("_", " "), compute_capability=parts[2], sm_count=int(parts[3]),
                          l2_bytes=int(parts[4]), memory_bytes=int(parts[5]),
                          driver_version=f"CUDA {drv // 1000}.{drv % 1000 // 10}", cuda_driver_api=f"{drv // 1000}.{drv % 1000 // 10}", runtime_version=f"{rt // 1000}.{rt % 1000 // 10}")
        elif parts[0] == "output":
            outputs.append((int(parts[1]), int(parts[2]), parts[3], parts[4]))
        elif parts[0] == "time":
            times.setdefault(int(parts[1]), {}).setdefault(parts[2], []).append((float(parts[4]), float(parts[5]), float(parts[6])))
    return gpu, outputs, times


def _driver_error(rc: int | None, output: str, settings: HarnessSettings) -> tuple[Verdict, str]:
    if rc is None:
        return Verdict.timeout, f"the run did not finish within {settings.run_timeout_s:.0f} s and was killed (a hang or a far too slow kernel)"
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


def evaluate(task: str | Task, precision: str, candidate_source: str | bytes | None = None, sizes: str | list[dict[str, int]] = "paper",
             *, settings: HarnessSettings | None = None, extra_flags: list[str] | None = None,
             seeds: list[int] | None = None, timing: bool = True, keep_workdir: bool = False,
             implementation: str = "candidate") -> EvaluationResult:
    """Check and time `candidate_source` (None: the baseline alone) for one task variant.

    `implementation="vendor"` measures the task's vendor reference (bench_tasks/vendor) in the candidate's
    place instead: compiled with its libraries, prototype checked, symbols not (it is trusted code).

    Bad input (unknown task/precision/size set, empty, non-UTF-8 or oversized source) raises
    TaskError or CandidateError; a missing GPU raises NoGpuError; a task without a vendor reference, or
    vendor libraries that are not installed, raise VendorUnavailable. Everything about the kernel
    itself is a verdict in the returned result.
    """
    started = time.monotonic()
    settings = settings or get_settings()
    variant = _variant(task, precision)
    size_set, size_list = _sizes(variant, sizes)
    seeds = list(seeds or settings.seeds)
    fresh_seed = secrets.randbelow(2**31 - 1) + 1000
    vendor_build = None
    if implementation == "vendor":
        if candidate_source is not None:
            raise ValueError("a vendor evaluation measures the task's vendor reference: pass no candidate source")
        from .vendor import compile_vendor

        vendor_build = compile_vendor(variant, settings)
        text: str | None = vendor_build.source
    elif implementation == "candidate":
        text = src.prepare(candidate_source, settings.max_source_bytes) if candidate_source is not None else None
    else:
        raise ValueError(f"implementation must be 'candidate' or 'vendor', not {implementation!r}")
    result = EvaluationResult(task=variant.task.name, precision=precision, verdict=Verdict.ok, size_set=size_set,
                              compile_flags=vendor_build.outcome.flags if vendor_build else cc.candidate_flags(settings, extra_flags),
                              nvcc_version=cc.nvcc_version(settings.nvcc),
                              seeds=seeds + [fresh_seed], baseline_only=text is None,
                              implementation="baseline" if text is None else implementation,
                              vendor_libraries=list(vendor_build.reference.libraries) if vendor_build else [],
                              source_sha256=hashlib.sha256(text.encode()).hexdigest() if text else "")

    def finish(verdict: Verdict, message: str = "", log: str = "") -> EvaluationResult:
        result.verdict, result.message, result.log = verdict, message, log[-20000:]
        result.wall_seconds = round(time.monotonic() - started, 3)
        return result

    cand_obj = None
    if text is not None:
        outcome = vendor_build.outcome if vendor_build else cc.compile_candidate(variant, text, settings, extra_flags)
        if not outcome.ok:
            return finish(outcome.verdict, outcome.message, outcome.log)
        cand_obj = outcome.object_path
    try:
        base_obj = cc.compile_baseline(variant, settings)
    except cc.BaselineError as exc:
        return finish(exc.outcome.verdict, str(exc), exc.outcome.log)
    try:
        exe = cc.build_driver(variant, driver_source(variant, cand_obj is not None), base_obj, cand_obj, settings,
                              link_flags=vendor_build.link_flags if vendor_build else None)
    except cc.LinkError as exc:
        return finish(Verdict.link_error, "linking the candidate with the harness failed: " + cc._first_error(str(exc)), str(exc))
    require_gpu(settings)

    workdir = Path(tempfile.mkdtemp(prefix="cm-eval-"))
    try:
        (workdir / "out").mkdir()
        cases = [_Case(i, p, [(s, "check", workdir / f"c{i}" / f"s{s}") for s in seeds] + [(fresh_seed, "fresh", workdir / f"c{i}" / "fresh")])
                 for i, p in enumerate(size_list)]
        _write_datasets(variant, cases, settings)
        plan = workdir / "plan.txt"
        plan.write_text(_plan_text(variant, cases, workdir, settings, timing=timing))
        child = Child([str(exe), str(plan)], env=_child_env(settings), cwd=workdir)
        try:  # the float64 references are computed while the GPU works
            rng = np.random.default_rng(fresh_seed)
            for c in cases:
                _choose_sample(variant, c, settings, rng)
            keys = [(c, d, directory) for c in cases for d, (_, _, directory) in enumerate(c.datasets)]
            computed = _parallel(settings, lambda k: _reference(variant, k[0], k[2]), keys)
            refs = {(c.index, d): ref for (c, d, _), ref in zip(keys, computed)}
        except BaseException:
            child.kill()
            raise
        rc, output = child.wait(settings.run_timeout_s)
        gpu, outputs, times = _parse_results(workdir / "results.txt")
        if gpu is not None:
            gpu.driver_version = nvidia_driver_version() or gpu.driver_version
        result.gpu = gpu
        rows = _parallel(settings, lambda c: _row(variant, c, outputs, times, refs, workdir, settings), cases)
        result.rows = rows
        results_file = workdir / "results.txt"
        if rc != 0 or not results_file.exists() or "done" not in results_file.read_text().split():
            verdict, message = _driver_error(rc, output, settings)
            if verdict in (Verdict.runtime_error, Verdict.timeout):
                healthy, why = gpu_status(settings)
                if not healthy:
                    message += f" [GPU check after the fault failed: {why}]"
            return finish(verdict, message, output)
        return finish(*_verdict(variant, result, settings))
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _row(variant: Variant, case: _Case, outputs, times, refs, workdir: Path, settings: HarnessSettings) -> SizeRow:
    task = variant.task
    lengths = task.lengths(case.params, variant.precision)
    checks = []
    oracle = task.oracle == "baseline"

    def stored(ci, ds, impl, stage, name) -> np.ndarray:
        dtype = variant.param(name).dtype
        path = workdir / "out" / f"c{ci}_d{ds}_{impl}_{stage}_{name}.bin"
        return np.fromfile(path, dtype=data.STORAGE[dtype], count=lengths[name])

    names = data.reference_names(variant, case.params)
    inputs: dict[int, dict[str, np.ndarray]] = {}

    def seen(ds: int) -> dict[str, np.ndarray]:
        """The inputs of dataset `ds` as the kernel saw them (only a task's check() needs them)."""
        if ds not in inputs:
            inputs[ds] = data.float64_inputs(variant, _read_stored(variant, case.datasets[ds][2], case.params))
        return inputs[ds]

    has_check = not oracle and hasattr(task.reference_module, "check")
    for (ci, ds, impl, stage) in outputs:
        if ci != case.index or (oracle and impl == "baseline"):
            continue  # a custom task's baseline is the oracle, not checked against itself
        seed = case.datasets[ds][0]
        raw = {name: stored(ci, ds, impl, stage, name) for name in _outputs(variant)}
        dtypes = {name: variant.param(name).dtype for name in raw}
        if oracle:
            cmps = [compare(name, data.to_float64(raw[name], dtypes[name]),
                            data.to_float64(stored(ci, ds, "baseline", "first", name), dtypes[name]),
                            variant.tolerance_for(name, names)) for name in raw]
        else:
            sample = case.sample
            got = {name: data.to_float64(r if sample is None else r[sample[name]], dtypes[name]) for name, r in raw.items()}
            cmps = check_outputs(variant, got, refs[(ci, ds)], seen(ds) if has_check else {}, names, sample)
            if sample is not None and all(c.passed for c in cmps):  # sampled: every element must have been written
                for name, r in raw.items():
                    unwritten = data.unwritten_count(r, dtypes[name])
                    if unwritten:
                        cmps.append(Comparison.failure(f"{name}: {unwritten} elements are NaN (left unwritten, or NaN written)", r.size))
        failing = [c for c in cmps if not c.passed]
        worst = failing[0] if failing else max(cmps, key=lambda c: c.max_abs_err)
        checks.append(Check(impl=impl, seed=seed, stage=stage, passed=worst.passed, max_abs_err=worst.max_abs_err,
                            max_rel_err=worst.max_rel_err, worst_index=worst.worst_index, checked_elements=worst.checked,
                            message=worst.message))
    row = SizeRow(params=case.params, complexity=task.complexity_of(case.params), passed=all(c.passed for c in checks), checks=checks)
    mine = [c for c in checks if c.impl == "candidate"] or checks
    if mine:
        row.max_abs_err = max(c.max_abs_err or 0.0 for c in mine)
        row.max_rel_err = max(c.max_rel_err or 0.0 for c in mine)
    t = times.get(case.index, {})
    flops, nbytes = task.work(case.params, variant.precision)
    peak = settings.peak_flops_bf16 if variant.precision == "bf16" else settings.peak_flops_fp32
    row.roofline_floor_us = max(flops / peak, nbytes / settings.peak_bytes_per_s) * 1e6
    if "baseline" in t:
        row.baseline = _stats(t["baseline"])
        row.baseline_roofline_pct = 100.0 * row.roofline_floor_us / row.baseline.median_us
    if "candidate" in t and "baseline" in t:
        late = late_work(t["candidate"], t["baseline"], settings)
        if late is not None:
            row.flags.append("late_work")
        row.candidate = _stats(t["candidate"], late)
        row.candidate_roofline_pct = 100.0 * row.roofline_floor_us / row.candidate.median_us
        ratios = _call_times(t["baseline"]) / np.maximum(_call_times(t["candidate"], late), 1e-3)
        q1, q3 = np.percentile(ratios, [25, 75])
        row.speedup, row.speedup_iqr = float(np.median(ratios)), float(q3 - q1)
        if row.speedup > settings.review_speedup:
            row.flags.append("speedup_over_review_threshold")
    timed = row.candidate or row.baseline
    if timed is not None:
        if timed.median_us < 10.0:
            row.flags.append("launch_bound")
        if timed.wall_median_us > 2.0 * timed.median_us + 100.0:
            row.flags.append("wall_gap")
    return row


def _verdict(variant: Variant, result: EvaluationResult, settings: HarnessSettings) -> tuple[Verdict, str]:
    who = "baseline" if result.baseline_only else "candidate"
    for row in result.rows:
        for check in row.checks:
            if check.impl == who and not check.passed:
                return Verdict.wrong_answer, f"size {row.params}, seed {check.seed}, {check.stage} run: {check.message}"
    for row in result.rows:
        stats = row.baseline if result.baseline_only else row.candidate
        if stats is not None and row.roofline_floor_us and stats.median_us < 0.9 * row.roofline_floor_us:
            return Verdict.rejected, (f"size {row.params}: {stats.median_us:.2f} us is below the roofline floor of "
                                      f"{row.roofline_floor_us:.2f} us; the work cannot have been done")
    if not result.baseline_only:
        total = sum(r.complexity for r in result.rows if r.speedup is not None)
        if total:
            result.score = sum(r.complexity * r.speedup for r in result.rows if r.speedup is not None) / total
    return Verdict.ok, ""


@dataclass
class SingleRun:
    """One call of one implementation at one size, for a profiler: run `argv` (e.g. under ncu).

    The driver brackets the call with cudaProfilerStart/Stop, so `ncu --profile-from-start off`
    sees only the implementation's own kernels. Call `cleanup()` when done.
    """

    argv: list[str]
    workdir: Path
    env: dict[str, str]
    params: dict[str, int]
    impl: str

    def cleanup(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


def prepare_single_run(task: str | Task, precision: str, candidate_source: str | bytes | None, params: dict[str, int],
                       *, settings: HarnessSettings | None = None, extra_flags: list[str] | None = None, seed: int = 1) -> SingleRun:
    """Compile and stage one call of the candidate (or, with None, the baseline) at `params`.

    Raises ValueError with the compile verdict's message when the candidate does not build.
    """
    settings = settings or get_settings()
    variant = _variant(task, precision)
    cand_obj = None
    if candidate_source is not None:
        outcome = cc.compile_candidate(variant, src.prepare(candidate_source, settings.max_source_bytes), settings, extra_flags)
        if not outcome.ok:
            raise ValueError(f"{outcome.verdict.value}: {outcome.message}")
        cand_obj = outcome.object_path
    exe = cc.build_driver(variant, driver_source(variant, cand_obj is not None), cc.compile_baseline(variant, settings), cand_obj, settings)
    workdir = Path(tempfile.mkdtemp(prefix="cm-once-"))
    (workdir / "out").mkdir()
    case = _Case(0, dict(params), [(seed, "check", workdir / "c0")])
    _write_datasets(variant, [case], settings)
    impl = "candidate" if cand_obj is not None else "baseline"
    plan = workdir / "plan.txt"
    plan.write_text(_plan_text(variant, [case], workdir, settings, mode="once", impl=impl, timing=False))
    return SingleRun([str(exe), str(plan)], workdir, _child_env(settings), dict(params), impl)
