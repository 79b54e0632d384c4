"""Errors for bad input to the harness (as opposed to verdicts about a kernel)."""

from bench_tasks.spec import TaskError


class CandidateError(ValueError):
    """The candidate source is unusable as given (empty, not UTF-8, too large); says what to do."""


class NoGpuError(RuntimeError):
    """No NVIDIA GPU is visible; says what still works."""


class VendorUnavailable(RuntimeError):
    """No vendor reference for the task, or its libraries are not installed here; the message says what to do."""


__all__ = ["CandidateError", "NoGpuError", "TaskError", "VendorUnavailable"]
