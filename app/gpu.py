"""One GPU evaluation per GPU at a time: a pool of GPU slots wrapped around the evaluator.

The evaluator interface is graph.evaluator's: compile(...) (CPU only, not locked), evaluate(...)
and profile(...) (each holds one GPU for its whole length).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any


class GpuPool:
    """Hands out GPU ids; a caller holds one for the length of one evaluation."""

    def __init__(self, gpus: list[str]):
        if not gpus:
            raise ValueError("no GPUs configured: set CUDAMASTER_GPUS, e.g. '[\"0\"]'")
        self.gpus = list(gpus)
        self._free: queue.Queue[str] = queue.Queue()
        for g in self.gpus:
            self._free.put(g)
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self):
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
    """

    def __init__(self, inner: Any | Callable[[str], Any], pool: GpuPool, *, per_gpu: bool = False):
        self.pool = pool
        self._per_gpu = {g: inner(g) for g in pool.gpus} if per_gpu else {g: inner for g in pool.gpus}
        self._any = self._per_gpu[pool.gpus[0]]

    def compile(self, *args, **kwargs):
        return self._any.compile(*args, **kwargs)

    def evaluate(self, *args, **kwargs):
        with self.pool.slot() as gpu:
            return self._per_gpu[gpu].evaluate(*args, **kwargs)

    def profile(self, *args, **kwargs):
        with self.pool.slot() as gpu:
            return self._per_gpu[gpu].profile(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._any, name)


def local_evaluator(gpu: str) -> Any:
    """The real evaluator (harness + Nsight Compute) pinned to one GPU."""
    from bench_tasks.harness.settings import HarnessSettings
    from graph.evaluator import LocalEvaluator

    return LocalEvaluator(HarnessSettings(gpu=gpu))
