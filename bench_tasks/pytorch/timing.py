"""A PyTorch task's baselines: PyTorch eager and torch.compile, timed on the GPU against the candidate.

The harness's own evaluation (its driver) checks the candidate against the float64 reference and times it against
the task's baseline slot, which for a PyTorch task is an empty stub: that speedup means nothing and is removed here
(`apply`). Once the candidate is `ok`, the candidate is compiled again as position-independent code (through the
same compile and symbol checks), linked into a shared library in the sandbox, and the sandboxed torch child
(child.py, mode "time") loads it with ctypes beside the user's model: eager, torch.compile and the candidate are
called in one process, in a random order per round, each between CUDA events after an L2 flush, after warm-up
calls. The speedups are medians of per-round ratios; P is over eager, weighted by the task's complexity (the
user's cost expression, else the FLOPs torch's counter found, else the output elements).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench_tasks.harness import compile as cc
from bench_tasks.harness import sandbox as sb
from bench_tasks.harness import source as src
from bench_tasks.harness.result import REVIEW_FLAG, EvaluationResult, SizeRow, TimeStats, Verdict, flag_review_speedup, weighted_score
from settings import HarnessSettings

from .runner import Limits, ReferenceRefused, run_child

if TYPE_CHECKING:
    from .task import PyTorchTask

IMPLS = ("eager", "compile", "candidate")
# The candidate's outputs in the timing process against eager's (not against float64: the harness's checks did that):
# both err, and eager runs as users run it (cuDNN convolutions in TF32 by default), so the bound is 10x the task's
# tolerance and at least KernelBench's own 1e-2. It catches a candidate that does not do the work in that process.
AGREEMENT_SLACK, AGREEMENT_FLOOR = 10.0, 1e-2


@dataclass(frozen=True)
class TorchTiming:
    """How the torch child times (per size): at least `min_rounds` rounds, then rounds until `seconds` or
    `max_rounds`; `warmup` calls of each implementation first; `compile`: time torch.compile too."""

    min_rounds: int = 20
    max_rounds: int = 2000
    seconds: float = 1.0
    warmup: int = 3
    compile: bool = True
    limit_seconds: float = 480.0  # the whole run: torch.compile compiles once per size


def hide_stub_speedups(result: EvaluationResult) -> None:
    """The harness's baseline slot of a PyTorch task is an empty stub: its time, speedup and P mean nothing."""
    for row in result.rows:
        row.baseline, row.baseline_roofline_pct, row.speedup, row.speedup_iqr = None, None, None, None
        row.flags = [f for f in row.flags if f != REVIEW_FLAG]
    result.score = None


def call_spec(task: PyTorchTask, precision: str) -> list[tuple[str, str]]:
    """The candidate's arguments in its prototype's order, as the child binds them: ("output", index), ("input",
    index), ("param", state_dict key), or (the C integer type, the constant's name)."""
    probe = task.probe
    assert probe is not None
    index = {t.name: (t.kind, t.source if t.kind == "param" else str(probe.of(t.kind).index(t))) for t in probe.tensors}
    return [index.get(p.name, ("int64_t" if p.ctype == "int64_t" else "int", p.name)) for p in task.variant(precision).prototype.params]


def _shared_library(task: PyTorchTask, precision: str, source: str, settings: HarnessSettings, flags: list[str] | None) -> Path:
    """The candidate, compiled again as position-independent code (the same checks) and linked into a .so in the
    sandbox. Raises ReferenceRefused where it does not build (it built once already: a harness problem)."""
    variant = task.variant(precision)
    outcome = cc.compile_candidate(
        variant, src.prepare(source, settings.max_source_bytes), settings, [*(flags or []), "-Xcompiler", "-fPIC"]
    )
    if not outcome.ok or outcome.object_path is None:
        raise ReferenceRefused("candidate", f"the candidate did not build as a shared library: {outcome.message}")
    work = sb.make_scratch(settings, "cm-torchso-")
    staged = sb.stage(outcome.object_path, work, "candidate.o")
    rc, log = sb.sandbox_for(settings).run(
        [cc._nvcc(settings), *cc.arch_flags(settings), "-shared", "-o", str(work / "candidate.so"), str(staged)],
        scratch=work,
        read_only=[staged],
        timeout=settings.compile_timeout_s,
        what="the linker",
    )
    if rc != 0 or not (work / "candidate.so").is_file():
        sb.remove_scratch(work)
        raise ReferenceRefused("candidate", f"linking the candidate into a shared library failed: {log.strip()[-400:]}")
    return work / "candidate.so"


def time_torch(
    task: PyTorchTask,
    precision: str,
    source: str | None,
    sizes: list[dict[str, int]],
    settings: HarnessSettings,
    flags: list[str] | None = None,
    how: TorchTiming | None = None,
) -> dict[str, Any]:
    """Eager, torch.compile and the candidate (None: none) timed at every size in the sandboxed torch child on the GPU: its
    report ({"torch", "device", "sizes": [{"size", "times": {impl: [us...]}, "agreement"}]})."""
    how = how or TorchTiming()
    probe = task.probe
    assert probe is not None
    library = _shared_library(task, precision, source, settings, flags) if source is not None else None
    try:
        full = [probe.sizes[task.size_index(task.names(s, precision))] for s in sizes]
        tol = task.tolerance[precision]
        request = {
            "mode": "time",
            "sizes": full,
            "precision": precision,
            "entry": task.variant(precision).candidate_entry,
            "args": call_spec(task, precision),
            "library": "candidate.so" if library else None,
            "tolerance": [max(float(t) * AGREEMENT_SLACK, AGREEMENT_FLOOR) for t in (tol.atol, tol.rtol)],
            "tolerance_scale": tol.scale,
            "seed": 1,
            "min_rounds": how.min_rounds,
            "max_rounds": how.max_rounds,
            "seconds": how.limit_seconds,
            "round_seconds": how.seconds,
            "warmup": how.warmup,
            "compile": how.compile,
        }
        result, _ = run_child(
            probe.source,
            request,
            settings,
            Limits(seconds=how.limit_seconds, memory_bytes=0),
            gpu=True,
            staged={"candidate.so": library} if library else {},
        )
        return result
    finally:
        if library is not None:
            sb.remove_scratch(library.parent)


def _stats(us: list[float]) -> TimeStats:
    v = np.asarray(us, dtype=np.float64)
    q1, q3 = np.percentile(v, [25, 75])
    median = float(np.median(v))
    return TimeStats(median_us=median, iqr_us=float(q3 - q1), min_us=float(v.min()), samples=len(v), wall_median_us=median)


def _fill_baselines(row: SizeRow, times: dict[str, list[float]]) -> None:
    row.torch_times = {impl: _stats(times[impl]) for impl in IMPLS if times.get(impl)}
    row.baseline = row.torch_times["eager"]
    if row.roofline_floor_us:
        row.baseline_roofline_pct = 100.0 * row.roofline_floor_us / row.baseline.median_us


def _fill_row(row: SizeRow, measured: dict[str, Any], review_speedup: float | None) -> None:
    times = measured["times"]
    _fill_baselines(row, times)
    from bench_tasks.harness.evaluate import paired_speedup  # the harness's own rule (imported here: the service loads this module)

    row.speedup, row.speedup_iqr = paired_speedup(times["eager"], times["candidate"])
    if times.get("compile"):
        row.speedup_compile = paired_speedup(times["compile"], times["candidate"])[0]
    flag_review_speedup(row, review_speedup)


def apply(result: EvaluationResult, measured: dict[str, Any], review_speedup: float | None) -> EvaluationResult:
    """The torch child's report into the harness's result: per size eager (the row's baseline) and torch.compile
    times, speedups over both, and P over eager. A candidate whose outputs in that process do not agree with eager's
    gets no speedups (the message says why); its verdict is the harness's."""
    sizes = measured["sizes"]
    bad = [m for m in sizes if not m["agreement"] <= 1.0]
    if bad:
        result.message = (
            f"PyTorch baselines timed, speedups withheld: at {bad[0]['size']} the candidate's outputs in the PyTorch "
            f"process differ from eager's ({bad[0]['agreement']:.3g} x the bound)"
        )
        return result
    for row, m in zip(result.rows, sizes, strict=True):
        _fill_row(row, m, review_speedup)
    failed = next((m["compile_error"] for m in sizes if m.get("compile_error")), "")
    if failed:
        result.message = f"torch.compile failed in the sandbox (no speedup over it): {failed}"
    result.score = weighted_score(result.rows)
    result.torch_baselines = f"PyTorch {measured.get('torch', '')} on {measured.get('device', '')}"
    return result


def measure_baselines(
    task: PyTorchTask,
    result: EvaluationResult,
    source: str | None,
    sizes: list[dict[str, int]],
    settings: HarnessSettings,
    flags: list[str] | None,
    timing: bool,
    how: TorchTiming | None = None,
) -> EvaluationResult:
    """The harness's result of a PyTorch task: the stub's speedups removed, then (a candidate found ok, with timing)
    its speedups over eager and torch.compile and P over eager. Where the baselines cannot be timed the verdict stays
    the harness's and the message says why."""
    hide_stub_speedups(result)
    if not (timing and result.ok and source and result.implementation == "candidate"):
        return result
    try:
        measured = time_torch(task, precision=result.precision, source=source, sizes=sizes, settings=settings, flags=flags, how=how)
    except ReferenceRefused as exc:
        result.message = f"checked ok; the PyTorch baselines were not timed: {exc}"
        return result
    return apply(result, measured, settings.review_speedup)


def baselines_result(task: PyTorchTask, precision: str, settings: HarnessSettings, how: TorchTiming | None = None) -> EvaluationResult:
    """Eager and torch.compile alone at the task's sizes (`bench run` over a suite without candidates: the harness's
    baseline slot is a stub, never run for these). Raises ReferenceRefused where they cannot be timed."""
    sizes = task.size_list("paper")
    rows = []
    for size in sizes:
        floor = task.roofline_floor_us(size, precision, settings)
        rows.append(SizeRow(params=size, complexity=task.complexity_of(size), passed=True, roofline_floor_us=floor))
    result = EvaluationResult(
        task=task.name, precision=precision, verdict=Verdict.ok, rows=rows, baseline_only=True, implementation="baseline"
    )
    measured = time_torch(task, precision, None, sizes, settings, how=how)
    for row, m in zip(result.rows, measured["sizes"], strict=True):
        _fill_baselines(row, m["times"])
        if m.get("compile_error"):
            result.message = f"torch.compile failed in the sandbox: {m['compile_error']}"
    result.torch_baselines = f"PyTorch {measured.get('torch', '')} on {measured.get('device', '')}"
    return result
