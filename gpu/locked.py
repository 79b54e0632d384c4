"""One evaluation per GPU at a time: a pool of GPU slots wrapped around the evaluator (the service's).

compile(...) is CPU only and not locked; evaluate(...) and profile(...) each hold one GPU of the pool for their
whole length. The wait for a GPU of the pool is reported to the evaluator of that GPU through its optional
`gpu_wait(task, precision, seconds)`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from .protocol import CompileReport, CompileRequest, EvaluateRequest, Evaluator, KernelRequest, Profile, ProfileRequest, SanitizeRequest

if TYPE_CHECKING:
    from bench_tasks.harness import EvaluationResult
    from bench_tasks.harness.result import SanitizerVerdict


class GpuPool:
    """Hands out GPU ids; a caller holds one for the length of one evaluation."""

    def __init__(self, gpus: list[str]) -> None:
        if not gpus:
            raise ValueError("no GPUs configured: set CUDAMASTER_SERVICE__GPUS, e.g. '[\"0\"]'")
        self.gpus = list(gpus)
        self._free: queue.Queue[str] = queue.Queue()
        for g in self.gpus:
            self._free.put(g)
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[str]:
        gpu = self._free.get()
        with self._lock:
            self._busy.add(gpu)
        try:
            yield gpu
        finally:
            with self._lock:
                self._busy.discard(gpu)
            self._free.put(gpu)

    def busy(self) -> list[str]:
        with self._lock:
            return sorted(self._busy)


class GpuLockedEvaluator:
    """An evaluator whose GPU calls (evaluate, profile) each hold one GPU of the pool.

    `per_gpu(gpu_id)` gives the evaluator bound to that GPU (e.g. a LocalEvaluator whose harness
    settings set CUDA_VISIBLE_DEVICES); a single evaluator object may be given for every GPU.

    GPU waits: when the GPU's evaluator has a callable `gpu_wait(task, precision, seconds)`, each evaluate/profile
    call reports there, before it runs, the seconds it waited for its GPU of the pool (time outside the call, so a
    figure can tell queueing from evaluation). This wrapper forwards every other attribute but not `gpu_wait`:
    a wait reported to it from outside would have no GPU, hence no evaluator, to go to.
    """

    def __init__(self, inner: Evaluator | Callable[[str], Evaluator], pool: GpuPool, *, per_gpu: bool = False) -> None:
        self.pool = pool
        if per_gpu:
            make = cast(Callable[[str], Evaluator], inner)
            self._per_gpu = {g: make(g) for g in pool.gpus}
        else:
            self._per_gpu = {g: cast(Evaluator, inner) for g in pool.gpus}
        self._any = self._per_gpu[pool.gpus[0]]

    def compile(self, request: CompileRequest) -> CompileReport:
        return self._any.compile(request)

    @contextmanager
    def _gpu_for(self, request: KernelRequest) -> Iterator[Evaluator]:
        """The evaluator of a GPU of the pool, held until the block ends; its wait reported first."""
        asked = time.monotonic()
        with self.pool.slot() as gpu:
            waited = time.monotonic() - asked
            evaluator = self._per_gpu[gpu]
            report = getattr(evaluator, "gpu_wait", None)
            if callable(report):
                report(request.task, request.precision, waited)
            yield evaluator

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        with self._gpu_for(request) as evaluator:
            return evaluator.evaluate(request)

    def profile(self, request: ProfileRequest) -> Profile:
        with self._gpu_for(request) as evaluator:
            return evaluator.profile(request)

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        with self._gpu_for(request) as evaluator:
            return evaluator.sanitize(request)

    def __getattr__(self, name: str) -> Any:
        if name == "gpu_wait":
            raise AttributeError(name)
        return getattr(self._any, name)


def local_evaluator(gpu: str) -> Evaluator:
    """The real evaluator (harness + Nsight Compute) pinned to one GPU."""
    from settings import get_harness_settings

    from .local import LocalEvaluator

    return LocalEvaluator(get_harness_settings(gpu=gpu))
