"""The MSKernelBench harness: compile, check and time kernels so that they cannot fool us."""

from .compile import CompileOutcome, compile_candidate
from .errors import CandidateError, NoGpuError, TaskError, VendorUnavailable
from .evaluate import SingleRun, evaluate, gpu_status, prepare_single_run, require_gpu
from .result import EvaluationResult, SizeRow, TimeStats, Verdict
from .settings import HarnessSettings, get_settings

__all__ = [
    "CandidateError",
    "CompileOutcome",
    "EvaluationResult",
    "HarnessSettings",
    "NoGpuError",
    "SingleRun",
    "SizeRow",
    "TaskError",
    "TimeStats",
    "Verdict",
    "compile_candidate",
    "evaluate",
    "get_settings",
    "gpu_status",
    "prepare_single_run",
    "require_gpu",
    "VendorUnavailable",
]
