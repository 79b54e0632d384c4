"""One GPU evaluation per GPU at a time: a pool of GPU slots wrapped around the evaluator."""

from __future__ import annotations

import os
import queue
import threading
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
    """Wraps an evaluator (a callable, or an object with .evaluate) so each call holds one GPU.

    If the wrapped evaluator accepts a `gpu` keyword it gets the GPU id; otherwise, with more than
    one GPU, CUDA_VISIBLE_DEVICES cannot be set per thread, so calls are still serialised per slot.
    """

    def __init__(self, inner: Any, pool: GpuPool):
        self.inner = inner
        self.pool = pool

    def _call(self, fn, *args, **kwargs):
        with self.pool.slot():
            return fn(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._call(self.inner, *args, **kwargs)

    def evaluate(self, *args, **kwargs):
        return self._call(self.inner.evaluate, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # everything else (compile-only checks, names) passes through
        return getattr(self.inner, name)


def default_gpus() -> list[str]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return [g for g in visible.split(",") if g.strip()] if visible else ["0"]
