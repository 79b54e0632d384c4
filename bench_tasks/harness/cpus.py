"""Cores of its own for the timing driver, away from the harness's host work.

While a driver times a size, the parent draws the next variants' inputs, computes float64 references on
every core (numpy's BLAS threads), checks earlier outputs and runs nvcc. A driver's timing loop shares the
host with all of that: a timed call's launches wait while its thread is descheduled, and a host-pointer call
(cudaMalloc, pageable copies) runs on the CPU itself. On the H200 machine (16 cores) the suite's baselines
timed noisier, and so for longer, with more of that work beside them.

So a machine with enough cores is split: the driver gets `driver_cpus` of them (the plan's `cpus` token:
the driver sets its own affinity before it creates its CUDA context, and its helper threads inherit it),
and every thread of the process that runs drivers moves to the others (threads started later inherit it, and
so do nvcc and the other children). On a small machine (CI's 2 cores) nothing is split by default.
"""

from __future__ import annotations

import os
from pathlib import Path

from settings import HarnessSettings

AUTO_MIN_CORES = 8  # below this many usable cores the automatic split keeps every core shared


_usable: list[int] = []


def usable() -> list[int]:
    """The cores this process may use (its affinity, which a container's cpuset bounds), as they were before it
    first moved its own threads off the driver's cores (after that its threads' affinity is the parent's part)."""
    if not _usable:
        _usable.extend(sorted(os.sched_getaffinity(0)))
    return list(_usable)


def split(settings: HarnessSettings, cores: list[int] | None = None) -> tuple[list[int], list[int]] | None:
    """(the driver's cores, the parent's cores), or None when nothing is split.

    settings.driver_cpus: -1 (auto) reserves a quarter of `cores` (at least 2) when there are at least
    AUTO_MIN_CORES; 0 reserves none; n > 0 reserves n, leaving the parent at least one core."""
    cores = sorted(cores if cores is not None else usable())
    want = settings.driver_cpus
    if want < 0:
        want = max(2, len(cores) // 4) if len(cores) >= AUTO_MIN_CORES else 0
    want = min(want, len(cores) - 1)
    if want <= 0:
        return None
    return cores[-want:], cores[:-want]


def keep_parent_off(parent: list[int]) -> None:
    """Move every thread of this process onto `parent` (the cores not reserved for drivers). Threads started
    from now on inherit it; a thread that ends meanwhile is skipped."""
    cores = set(parent)
    for task in Path("/proc/self/task").iterdir():
        try:
            tid = int(task.name)
            if os.sched_getaffinity(tid) != cores:
                os.sched_setaffinity(tid, cores)
        except (ValueError, ProcessLookupError, FileNotFoundError):
            continue


def driver_cores(settings: HarnessSettings) -> list[int] | None:
    """The cores the next driver is to run on; moves this process's threads off them first. None: no split."""
    parts = split(settings)
    if parts is None:
        return None
    driver, parent = parts
    try:
        keep_parent_off(parent)
    except OSError:
        return None  # affinity cannot be set here (a restricted container): run as before, every core shared
    return driver


def limit_blas(settings: HarnessSettings) -> None:
    """Run each BLAS call of this process on `settings.blas_threads` threads (0: leave the library's default).

    The harness computes float64 references on threads of its own, several at a time (bench run's prefetch and
    the output checks of earlier variants beside them). Under each, numpy's OpenBLAS would start a pool of every
    core: on 16 cores, a dozen calls side by side ask for ~200 busy-waiting threads. Process-wide and left set
    (restoring it when one evaluation ends would undo it under another running beside it). scipy's own OpenBLAS
    is loaded first, so that its pool is limited too."""
    if settings.blas_threads <= 0:
        return
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS, a library of its own beside numpy's)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=settings.blas_threads, user_api="blas")
