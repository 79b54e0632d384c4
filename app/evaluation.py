"""Where this service's jobs evaluate kernels, decided at start-up from the configured GPUs, the GPUs found
(gpu/inventory.py), remote GPU workers, a Ray cluster or an injected evaluator; `kind == "none"` refuses jobs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpu.inventory import GpuInventory

EvaluationKind = Literal["local_gpus", "remote_gpus", "ray", "injected", "none"]


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
    """Jobs run on a Ray cluster's GPUs (gpu/ray): what it has, from its status."""
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
