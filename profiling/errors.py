"""Errors of the profiler and the report reader; each message says what to do."""

from __future__ import annotations


class ProfilerError(RuntimeError):
    """Profiling did not produce a report."""


class NcuNotFoundError(ProfilerError):
    """The ncu executable is missing."""


class CounterPermissionError(ProfilerError):
    """ERR_NVGPUCTRPERM: the driver does not let this user read the GPU performance counters."""


class ProfilerUnavailableError(ProfilerError):
    """ncu started but could not initialise its profiler on this machine (e.g. in a gVisor sandbox)."""


class ProfilerTimeoutError(ProfilerError):
    """ncu (with its replays) ran past the time limit and was killed."""


class TargetCrashedError(ProfilerError):
    """The profiled program failed (CUDA error, crash, non-zero exit)."""


class NoKernelsProfiledError(ProfilerError):
    """ncu ran but profiled no kernel (the implementation launched none, or the filter matched none)."""


class ReportFormatError(ValueError):
    """A CSV or JSON given as an Nsight Compute report is not in the expected format."""


class ClassificationError(ValueError):
    """A profile lacks the metrics a classification rule needs."""
