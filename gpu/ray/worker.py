"""The worker side: one long-lived process per GPU (or per compile slot) running work items.

`WorkerEngine` is plain Python (a Ray actor class is made from it in gpu/ray/evaluator.py). It
rebuilds the task from the item, installs the compile node's object in its own cache, and runs the
item with the evaluator it keeps for the whole of its life (its compile cache and data/reference
caches stay warm). An evaluation's result is stamped with the GPU model, driver and host it ran on.
"""

from __future__ import annotations

import importlib
import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from bench_tasks.harness import EvaluationResult
from bench_tasks.harness import compile as harness_compile
from bench_tasks.harness.result import GpuInfo, SanitizerVerdict
from bench_tasks.spec import register_task
from bench_tasks.work import CompiledObject, WorkItem, build_task
from settings import HarnessSettings, get_harness_settings

from ..protocol import CompileReport, CompileRequest, EvaluateRequest, Evaluator, Profile, ProfileMode, ProfileRequest, SanitizeRequest


@dataclass
class WorkOutcome:
    """What a worker sends back for one item."""

    worker: str
    host: str
    compile: CompileReport | None = None
    compiled: CompiledObject | None = None  # the compile's cache entry, for the evaluation of the same source
    evaluation: EvaluationResult | None = None
    profile: Profile | None = None
    sanitizer: list[SanitizerVerdict] | None = None  # a sanitize item's verdicts, one per tool
    nvcc_runs: dict[str, int] = field(default_factory=dict)  # this worker's nvcc runs so far, per kind


def load_factory(spec: str | Callable[..., Any]) -> Callable[..., Any]:
    """`module:Name` -> the callable (an evaluator class taking HarnessSettings)."""
    if callable(spec):
        return spec
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"worker evaluator {spec!r}: write it as module:Class, e.g. gpu.local:LocalEvaluator")
    return getattr(importlib.import_module(module), name)


def compile_request(item: WorkItem, task: str) -> CompileRequest:
    """The evaluator's request for a compile item (`task`: the name the item's definition is registered under)."""
    return CompileRequest(task=task, precision=item.precision, source=item.source or "", flags=tuple(item.flags))


def evaluate_request(item: WorkItem, task: str) -> EvaluateRequest:
    return EvaluateRequest(task=task, precision=item.precision, source=item.source, sizes=item.sizes, flags=tuple(item.flags))


def profile_request(item: WorkItem, task: str) -> ProfileRequest:
    rows = tuple(item.rows) if item.rows is not None else None
    return ProfileRequest(task=task, precision=item.precision, source=item.source, mode=cast(ProfileMode, item.profile_mode), rows=rows)


def _assigned_gpus() -> list[str]:
    try:
        import ray

        return [str(g) for g in ray.get_gpu_ids()] if ray.is_initialized() else []
    except Exception:  # noqa: BLE001 - outside Ray (tests of the engine itself)
        return []


def _smi_gpu(index: str | None) -> tuple[str, str]:
    """(model, driver) of GPU `index` as nvidia-smi names them; ("", "") without one."""
    smi = shutil.which("nvidia-smi")
    if smi is None or index is None:
        return "", ""
    try:
        out = subprocess.run(
            [smi, "-i", index, "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "", ""
    parts = [p.strip() for p in out.stdout.strip().split(",")]
    return (parts[0], parts[1]) if out.returncode == 0 and len(parts) == 2 else ("", "")


class WorkerEngine:
    def __init__(self, name: str, role: str, evaluator: str | Callable[..., Any], local: dict[str, Any] | None = None):
        self.name, self.role = name, role
        self.settings = get_harness_settings(**(local or {}))  # this machine's harness section, with the given overrides
        self.factory = load_factory(evaluator)
        self._evaluators: dict[str, Evaluator] = {}
        self.host = socket.gethostname()
        self.gpu_ids = _assigned_gpus()
        model, driver = _smi_gpu(self.gpu_ids[0] if self.gpu_ids else None) if role == "gpu" else ("", "")
        fake = getattr(self.factory, "gpu_info", None)  # a test double names its FAKE GPU
        self.gpu_model = model or (fake.name if role == "gpu" and isinstance(fake, GpuInfo) else "")
        self.driver = driver
        self.done = 0

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "host": self.host,
            "pid": os.getpid(),
            "gpu_ids": self.gpu_ids,
            "gpu_model": self.gpu_model,
            "driver": self.driver,
            "done": self.done,
            "nvcc_runs": dict(harness_compile.NVCC_RUNS),
            "cache_dir": str(self.settings.cache_dir),
        }

    def _evaluator(self, settings: HarnessSettings) -> Evaluator:
        key = settings.model_dump_json()
        if key not in self._evaluators:
            self._evaluators[key] = self.factory(settings)
        return self._evaluators[key]

    def run(self, item: WorkItem) -> WorkOutcome:
        settings = item.settings_on(self.settings)
        task = build_task(item.task, settings.cache_dir)
        register_task(task)  # the evaluator loads it by name: the item's definition, not this checkout's
        if item.compiled is not None:
            item.compiled.install(settings.cache_dir)
        evaluator = self._evaluator(settings)
        out = WorkOutcome(worker=self.name, host=self.host)
        if item.kind == "compile":
            out.compile = evaluator.compile(compile_request(item, task.name))
            if out.compile.ok:
                out.compiled = CompiledObject.read(settings.cache_dir, out.compile.object_key)
        elif item.kind == "evaluate":
            if item.implementation == "vendor":
                from bench_tasks.harness import evaluate

                out.evaluation = evaluate(task, item.precision, None, item.sizes, settings=settings, implementation="vendor")
            else:
                out.evaluation = evaluator.evaluate(evaluate_request(item, task.name))
            self._stamp(out.evaluation)
        elif item.kind == "sanitize":
            out.sanitizer = evaluator.sanitize(
                SanitizeRequest(task=task.name, precision=item.precision, source=item.source, tools=item.tools)
            )
        else:
            out.profile = evaluator.profile(profile_request(item, task.name))
        self.done += 1
        out.nvcc_runs = dict(harness_compile.NVCC_RUNS)
        return out

    def _stamp(self, result: EvaluationResult) -> None:
        gpu = result.gpu or GpuInfo()
        # nvidia-smi's name, the one the cluster schedules and pins jobs by (the same text as the CUDA device name
        # on NVIDIA's GPUs; one spelling cluster-wide either way).
        gpu.name = self.gpu_model or gpu.name
        gpu.driver_version = gpu.driver_version or self.driver
        gpu.host = self.host
        result.gpu = gpu
