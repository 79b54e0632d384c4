"""Errors for bad input to the harness (as opposed to verdicts about a kernel)."""

from bench_tasks.spec import TaskError


class CandidateError(ValueError):
    """The candidate source is unusable as given (empty, not UTF-8, too large); says what to do."""


class NoGpuError(RuntimeError):
    """No NVIDIA GPU is visible; says what still works."""


class VendorUnavailable(RuntimeError):
    """No vendor reference for the task, or its libraries are not installed here; the message says what to do."""


class MachineError(RuntimeError):
    """The machine failed the harness (a full disk, a file it could not write), not the kernel: bench run reports
    it for that variant and goes on."""


class HarnessError(RuntimeError):
    """The harness itself failed on one variant (a bug: neither the kernel's fault nor the machine's): bench run
    reports it for that variant, with where it happened, and goes on."""


__all__ = ["CandidateError", "HarnessError", "MachineError", "NoGpuError", "TaskError", "VendorUnavailable"]
