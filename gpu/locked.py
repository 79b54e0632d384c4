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
from typing import Any


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


def _variant_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, str]:
    """(task, precision) of an evaluate/profile call: its first two arguments, given by position or by name."""
    task = args[0] if len(args) > 0 else kwargs["task"]
    precision = args[1] if len(args) > 1 else kwargs["precision"]
    return str(task), str(precision)


class GpuLockedEvaluator:
    """An evaluator whose GPU calls (evaluate, profile) each hold one GPU of the pool.

    `per_gpu(gpu_id)` gives the evaluator bound to that GPU (e.g. a LocalEvaluator whose harness
    settings set CUDA_VISIBLE_DEVICES); a single evaluator object may be given for every GPU.

    GPU waits: when the GPU's evaluator has a callable `gpu_wait(task, precision, seconds)`, each evaluate/profile
    call reports there, before it runs, the seconds it waited for its GPU of the pool (time outside the call, so a
    figure can tell queueing from evaluation). This wrapper forwards every other attribute but not `gpu_wait`:
    a wait reported to it from outside would have no GPU, hence no evaluator, to go to.
    """

    def __init__(self, inner: Any | Callable[[str], Any], pool: GpuPool, *, per_gpu: bool = False) -> None:
        self.pool = pool
        self._per_gpu = {g: inner(g) for g in pool.gpus} if per_gpu else {g: inner for g in pool.gpus}
        self._any = self._per_gpu[pool.gpus[0]]

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        return self._any.compile(*args, **kwargs)  # type: ignore[union-attr]

    def _on_a_gpu(self, call: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        asked = time.monotonic()
        with self.pool.slot() as gpu:
            waited = time.monotonic() - asked
            evaluator = self._per_gpu[gpu]
            report = getattr(evaluator, "gpu_wait", None)
            if callable(report):
                report(*_variant_of(args, kwargs), waited)
            return getattr(evaluator, call)(*args, **kwargs)

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        return self._on_a_gpu("evaluate", args, kwargs)

    def profile(self, *args: Any, **kwargs: Any) -> Any:
        return self._on_a_gpu("profile", args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name == "gpu_wait":
            raise AttributeError(name)
        return getattr(self._any, name)


def local_evaluator(gpu: str) -> Any:
    """The real evaluator (harness + Nsight Compute) pinned to one GPU."""
    from settings import get_harness_settings

    from .local import LocalEvaluator

    return LocalEvaluator(get_harness_settings(gpu=gpu))
