"""The GPUs: which ones this machine has, whether jobs can run at all, and one evaluation per GPU
at a time (a pool of GPU slots wrapped around the evaluator).

The evaluator interface is graph.evaluator's: compile(...) (CPU only, not locked), evaluate(...)
and profile(...) (each holds one GPU for its whole length). The wait for a GPU of the pool is reported
to the evaluator of that GPU through its optional `gpu_wait(task, precision, seconds)`.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

EvaluationKind = Literal["local_gpus", "remote_gpus", "ray", "injected", "none"]


@dataclass(frozen=True)
class GpuInventory:
    """What nvidia-smi lists: GPU indexes (and their UUIDs and names), or why there is none."""

    indexes: list[str] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    note: str = ""


def detect_gpus(timeout_s: float = 20.0) -> GpuInventory:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return GpuInventory(note="no GPU found: nvidia-smi is not installed (no NVIDIA driver on this machine)")
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"], capture_output=True, text=True, timeout=timeout_s
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GpuInventory(note=f"no GPU found: nvidia-smi failed ({exc})")
    rows = [[part.strip() for part in line.split(",", 2)] for line in out.stdout.splitlines() if line.strip()]
    rows = [r for r in rows if len(r) == 3 and r[0].isdigit()]
    if out.returncode != 0 or not rows:
        why = " ".join((out.stdout + out.stderr).split())[:200]
        return GpuInventory(note=f"no GPU found: nvidia-smi lists none ({why or f'exit status {out.returncode}'})")
    return GpuInventory(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        "found " + ", ".join(f"GPU {i} ({n})" for i, n in zip((r[0] for r in rows), (r[2] for r in rows), strict=True)),
    )


@dataclass(frozen=True)
class Evaluation:
    """Where this service's jobs evaluate kernels, decided at start-up; `kind == "none"` refuses jobs."""

    kind: EvaluationKind
    gpus_found: list[str]
    gpus_missing: list[str]  # configured (CUDAMASTER_SERVICE__GPUS) but not found
    note: str

    @property
    def can_run_jobs(self) -> bool:
        return self.kind != "none"

    @property
    def healthy(self) -> bool:
        return self.can_run_jobs and not self.gpus_missing


NO_GPU_ADVICE = (
    "run the service on a GPU machine (CUDAMASTER_SERVICE__GPUS lists its GPUs), or point it at remote GPU workers "
    "(CUDAMASTER_SERVICE__REMOTE_GPUS); without a GPU, listing tasks and reading stored jobs work, and "
    "`cudamaster bench eval TASK --candidate F --compile-only` checks that a kernel compiles"
)


def ray_evaluation(status: dict, inventory: GpuInventory) -> Evaluation:
    """Jobs run on a Ray cluster's GPUs (graph/cluster): what it has, from its status."""
    gpus = status.get("gpus", [])
    models = sorted({g["gpu_model"] for g in gpus})
    note = (
        f"{len(gpus)} GPU worker(s) on the Ray cluster at {status.get('address')} ({', '.join(models)}) and "
        f"{len(status.get('compile_workers', []))} compile worker(s) run the kernels"
    )
    return Evaluation("ray", inventory.indexes, [], note)


def plan_evaluation(configured: list[str], remote_gpus: int, injected: bool, inventory: GpuInventory) -> Evaluation:
    """Jobs run on the configured local GPUs that were found, else on remote GPU workers, else nowhere.

    An evaluator (or job function) injected by the embedding code, e.g. a test's fake GPU, runs jobs
    whatever GPUs the machine has.
    """
    if injected:
        return Evaluation("injected", inventory.indexes, [], f"an injected evaluator runs the kernels; {inventory.note}")
    usable = [g for g in configured if g in inventory.indexes or g in inventory.uuids]
    missing = [g for g in configured if g not in usable]
    if usable:
        note = f"{inventory.note}; jobs run on GPU {', '.join(usable)}"
        if missing:
            note += f"; configured GPU {', '.join(missing)} not found: fix CUDAMASTER_SERVICE__GPUS (nvidia-smi -L lists the GPUs)"
        return Evaluation("local_gpus", inventory.indexes, missing, note)
    if remote_gpus > 0:
        return Evaluation("remote_gpus", inventory.indexes, [], f"{inventory.note}; {remote_gpus} remote GPU worker(s) run the kernels")
    if inventory.indexes:
        note = (
            f"{inventory.note}, but none of the configured GPUs ({', '.join(configured)}): set CUDAMASTER_SERVICE__GPUS to "
            f"some of {', '.join(inventory.indexes)}; jobs are refused until then"
        )
    else:
        note = f"{inventory.note}; jobs are refused: {NO_GPU_ADVICE}"
    return Evaluation("none", inventory.indexes, missing, note)


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
    from graph.evaluator import LocalEvaluator
    from settings import get_harness_settings

    return LocalEvaluator(get_harness_settings(gpu=gpu))
