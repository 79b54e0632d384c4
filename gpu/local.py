"""The real evaluator on this machine: the harness's compile and evaluate (nvcc, the guarded driver on this
machine's GPU) and the `profiling` package's Nsight Compute profile when it is importable and works.
Evaluations and profiles take turns on the GPU (`gpu_turn`). The per-job cache around any evaluator is
gpu/cache.py; the CPU test double is gpu/fake.py.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from bench_tasks import load_task
from bench_tasks.harness import EvaluationResult, SizeRow, compile_candidate, evaluate
from settings import HarnessSettings, get_harness_settings

from .protocol import CompileReport, CompileRequest, EvaluateRequest, Profile, ProfileRequest, SanitizeRequest, no_profile, profile_of

if TYPE_CHECKING:
    from bench_tasks.harness.result import SanitizerVerdict

log = logging.getLogger(__name__)


@contextmanager
def gpu_turn(settings: HarnessSettings) -> Iterator[float]:
    """This machine's GPU for one evaluation or profile at a time, across threads and processes (an exclusive
    lock on a file under cache_dir, one per CUDA_VISIBLE_DEVICES): two jobs timed on one GPU at once would
    each see the other's kernels in their times. Yields the seconds spent waiting for the turn. Compiles do not
    take it; Ray's GPU workers are one actor per GPU and serialise on their own."""
    devices = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "_").replace("/", "_") or "none"
    path = Path(settings.cache_dir) / "locks" / f"gpu-{devices}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        waited = time.monotonic() - started
        if waited > 1.0:
            log.info("waited %.1f s for the GPU (%s)", waited, path)
        try:
            yield waited
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LocalEvaluator:
    """The real thing: harness compile and evaluate, Nsight Compute profile through `profiling`. Evaluations and
    profiles take turns on the GPU (`gpu_turn`): the service runs several jobs at once."""

    def __init__(self, settings: HarnessSettings | None = None, on_gpu_wait: Callable[[str, str, float], None] | None = None):
        self.settings = settings or get_harness_settings()
        self.on_gpu_wait = on_gpu_wait  # (task, precision, seconds waited for the GPU turn): figures keep it apart

    def gpu_wait(self, task: str, precision: str, seconds: float) -> None:
        """A wait for this GPU before a call (the service's GPU pool, gpu.locked.GpuLockedEvaluator, reports its waits
        here) or inside one (`gpu_turn`): both go to `on_gpu_wait`."""
        if self.on_gpu_wait is not None:
            self.on_gpu_wait(task, precision, seconds)

    def compile(self, request: CompileRequest) -> CompileReport:
        variant = load_task(request.task).variant(request.precision)
        out = compile_candidate(variant, request.source, self.settings, list(request.flags))
        key = out.object_path.parent.name if out.ok and out.object_path is not None else ""
        return CompileReport(None if out.ok else out.verdict.value, out.message, out.log[-20000:], out.flags, key)  # type: ignore[union-attr]

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        task, precision = request.task, request.precision
        with gpu_turn(self.settings) as waited:
            self.gpu_wait(task, precision, waited)
            return evaluate(task, precision, request.source, request.sizes, settings=self.settings, extra_flags=list(request.flags) or None)

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        """compute-sanitizer's four tools on the kernel, in its turn on the GPU (bench_tasks/harness/sanitize.py)."""
        from bench_tasks.harness.sanitize import sanitize

        with gpu_turn(self.settings) as waited:
            self.gpu_wait(request.task, request.precision, waited)
            return sanitize(request.task, request.precision, request.source, settings=self.settings, tools=request.tools)

    def profile(self, request: ProfileRequest) -> Profile:
        task, precision, mode = request.task, request.precision, request.mode
        if mode == "none":
            return no_profile("profiling switched off for this job")
        try:
            from profiling.ncu import profile_kernel
        except ImportError as exc:
            return no_profile(f"profiler unavailable: {exc}", mode)
        try:
            with gpu_turn(self.settings) as waited:
                self.gpu_wait(task, precision, waited)
                report = profile_kernel(task, precision, candidate_source=request.source, harness_settings=self.settings)
            # The harness's row at the profiled size gives the roofline position.
            row = next((SizeRow.model_validate(r) for r in request.rows or () if r.get("params") == report.params), None)
            return profile_of(report, mode, row, f"Nsight Compute, {mode} metrics")
        except Exception as exc:  # noqa: BLE001 - a missing or failing profiler must not end the job
            log.warning("profile of %s/%s failed: %s", task, precision, exc)
            return no_profile(f"no profile ({type(exc).__name__}: {exc})", mode)
