"""The MSKernelBench harness: compile, check and time kernels so that they cannot fool us.

The errors load with the package (settings: the `settings` package); the compiler, the evaluator (numpy) and the result models load
on first use, so that what only reads settings (`cudamaster --help`, `bench list`, the settings package) starts without
them. The package exports the function `evaluate`, which shadows its module of that name (as before): the
module is `sys.modules["bench_tasks.harness.evaluate"]` (or importlib.import_module)."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .errors import CandidateError, NoGpuError, TaskError, VendorUnavailable

if TYPE_CHECKING:
    from .compile import CompileOutcome, compile_candidate
    from .evaluate import SingleRun, evaluate, gpu_status, prepare_single_run, require_gpu
    from .result import EvaluationResult, SizeRow, TimeStats, Verdict

_LAZY = {
    "CompileOutcome": "compile",
    "compile_candidate": "compile",
    "SingleRun": "evaluate",
    "evaluate": "evaluate",
    "gpu_status": "evaluate",
    "prepare_single_run": "evaluate",
    "require_gpu": "evaluate",
    "EvaluationResult": "result",
    "SizeRow": "result",
    "TimeStats": "result",
    "Verdict": "result",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


class _Package(types.ModuleType):
    """Importing the submodule `evaluate` binds the package's `evaluate` to it; keep the function there."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "evaluate" and isinstance(value, types.ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "CandidateError",
    "CompileOutcome",
    "EvaluationResult",
    "NoGpuError",
    "SingleRun",
    "SizeRow",
    "TaskError",
    "TimeStats",
    "VendorUnavailable",
    "Verdict",
    "compile_candidate",
    "evaluate",
    "get_harness_settings",
    "gpu_status",
    "prepare_single_run",
    "require_gpu",
]
