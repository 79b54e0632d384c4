"""Run Nsight Compute on one call of a kernel and read its report.

`profile_kernel` stages one call of a task's baseline or a candidate with the harness
(`prepare_single_run`: the driver brackets the call with cudaProfilerStart/Stop), runs

    ncu --clock-control none --profile-from-start off --print-units base \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --csv --page raw --log-file <file> <driver> <plan>

in its own process group with a time limit, and parses the CSV. Clocks are never locked.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

from bench_tasks.harness.child import Child
from settings import ProfilingSettings, get_profiling_settings

from .classify import Thresholds
from .errors import (
    CounterPermissionError,
    NcuNotFoundError,
    NoKernelsProfiledError,
    ProfilerTimeoutError,
    ProfilerUnavailableError,
    TargetCrashedError,
)
from .metrics import SECTIONS
from .parse import parse_raw
from .report import ProfileReport

NCU_INSTALL_HINT = (
    "Install Nsight Compute (it ships with the CUDA toolkit as `ncu`, e.g. /usr/local/cuda/bin/ncu; "
    "on Debian/Ubuntu with NVIDIA's repository: apt-get install cuda-nsight-compute-13-0) and put it on PATH, "
    "or point CUDAMASTER_PROFILING__NCU at it: export CUDAMASTER_PROFILING__NCU=/usr/local/cuda/bin/ncu"
)
PERMISSION_HINT = (
    "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM). Either run as root (e.g. sudo), or allow "
    "all users: load the driver with NVreg_RestrictProfilingToAdminUsers=0 (a line `options nvidia "
    "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reload the module or reboot); in a container, "
    "start it with --cap-add=SYS_ADMIN (or --privileged). See "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
)


def resolve_ncu(settings: ProfilingSettings) -> str:
    found = shutil.which(settings.ncu)
    if found is None:
        raise NcuNotFoundError(
            f"Nsight Compute not found: {settings.ncu!r} is neither an executable path nor a command on PATH. {NCU_INSTALL_HINT}"
        )
    return found


@cache
def ncu_version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else "unknown"


def ncu_command(
    ncu: str,
    target: list[str],
    log_file: Path,
    *,
    page: str = "raw",
    profile_from_start: bool = False,
    sections: tuple[str, ...] = SECTIONS,
    kernel_regex: str | None = None,
    launch_count: int | None = None,
) -> list[str]:
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "on" if profile_from_start else "off", "--print-units", "base"]
    for s in sections:
        cmd += ["--section", s]
    if kernel_regex:
        cmd += ["-k", f"regex:{kernel_regex}"]
    if launch_count is not None:
        cmd += ["-c", str(launch_count)]
    return [*cmd, "--csv", "--page", page, "--log-file", str(log_file), *target]


def run_ncu(
    target: list[str],
    *,
    settings: ProfilingSettings | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    profile_from_start: bool = False,
    start: Callable[[list[str], tuple[str, ...]], Child] | None = None,
) -> tuple[str, list[str], float]:
    """Profile `target` (argv). Returns (raw-page CSV text, the ncu command, wall seconds).

    `start(prefix, tools)` runs ncu with the target inside the target's sandbox (code we did not write;
    see SingleRun.start): the report is then written into `cwd`, its scratch directory."""
    settings = settings or get_profiling_settings()
    ncu = resolve_ncu(settings)
    with tempfile.TemporaryDirectory(prefix="cm-ncu-") as tmp:
        log = (cwd if start is not None and cwd is not None else Path(tmp)) / "ncu-report.csv"
        cmd = ncu_command(ncu, target, log, profile_from_start=profile_from_start)
        started = time.monotonic()
        try:
            child = start(cmd[: len(cmd) - len(target)], (ncu,)) if start is not None else Child(cmd, env=env, cwd=cwd)
        except OSError as exc:
            raise NcuNotFoundError(f"cannot start {ncu}: {exc.strerror}. {NCU_INSTALL_HINT}") from exc
        rc, output = child.wait(settings.ncu_timeout_s)
        if rc is None:
            raise ProfilerTimeoutError(
                f"ncu did not finish within {settings.ncu_timeout_s:.0f} s and was killed (ncu replays each kernel "
                "once per metric pass: profile a smaller size with --size, or raise CUDAMASTER_PROFILING__NCU_TIMEOUT_S)"
            )
        wall = time.monotonic() - started
        text = log.read_text(errors="replace") if log.exists() else ""
    check_ncu_output(rc, output + "\n" + text)
    return text, cmd, wall


def check_ncu_output(rc: int, output: str) -> None:
    """Raise the ProfilerError that explains a failed run, or return when the CSV can be read."""
    if "ERR_NVGPUCTRPERM" in output:
        raise CounterPermissionError(PERMISSION_HINT)
    init = next((line for line in output.splitlines() if "Failed to initialize the profiler" in line), None)
    if init is not None:
        raise ProfilerUnavailableError(
            f"ncu could not start its profiler on this machine ({init.removeprefix('==ERROR==').strip()}): the GPU's "
            "hardware counters cannot be read here (seen in gVisor sandboxes). Profile on a machine where ncu works, "
            "e.g. a VM or bare metal with the NVIDIA driver, as root."
        )
    errors = [line for line in output.splitlines() if line.startswith("==ERROR==") or line.startswith("CMERR ")]
    if rc != 0 or errors:
        detail = " | ".join(errors[:5]) or output.strip()[-600:]
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        raise TargetCrashedError(f"the profiled program failed under ncu ({how}): {detail}")
    if "No kernels were profiled" in output:
        raise NoKernelsProfiledError("ncu profiled no kernel: the implementation launched none inside the profiled call")


def default_params(task: str, precision: str, settings: ProfilingSettings | None = None) -> dict[str, int]:
    """The largest paper size (by FLOPs + bytes of one call) with FLOPs < quick_flops (2e10) and
    bytes < quick_bytes (1 GB); the smallest paper size when none qualifies. One call of such a
    size runs well under a millisecond to a few tens of ms, so ncu's replays stay quick."""
    from bench_tasks import load_task

    settings = settings or get_profiling_settings()
    t = load_task(task)
    t.variant(precision)
    sizes = sorted(t.size_list("paper"), key=lambda p: t.work(p, precision))
    quick = [p for p in sizes if t.work(p, precision)[0] < settings.quick_flops and t.work(p, precision)[1] < settings.quick_bytes]
    return dict(quick[-1] if quick else sizes[0])


def thresholds_from(settings: ProfilingSettings) -> Thresholds:
    if settings.thresholds_file is not None:
        return Thresholds.load(settings.thresholds_file)
    return Thresholds(published_pct=settings.published_threshold_pct, sol_latency_pct=settings.sol_latency_threshold_pct)


def profile_kernel(
    task: str,
    precision: str,
    candidate_source: str | bytes | None = None,
    params: dict[str, int] | None = None,
    *,
    settings: ProfilingSettings | None = None,
    harness_settings=None,
    rule: str | None = None,
) -> ProfileReport:
    """Profile one call of the candidate (None: the baseline) of `task` at `precision` and `params`
    (default: `default_params`). Raises a ProfilerError subclass when ncu cannot produce a report,
    ValueError when the candidate does not compile, TaskError for an unknown task or precision."""
    from bench_tasks.harness import prepare_single_run

    settings = settings or get_profiling_settings()
    resolve_ncu(settings)  # fail before compiling anything
    params = dict(params) if params else default_params(task, precision, settings)
    run = prepare_single_run(task, precision, candidate_source, params, settings=harness_settings)
    return profile_single_run(run, task, precision, settings=settings, rule=rule)


def profile_single_run(
    run, task: str, precision: str, *, settings: ProfilingSettings | None = None, rule: str | None = None
) -> ProfileReport:
    """Profile a staged `bench_tasks.harness.SingleRun` and clean it up."""
    settings = settings or get_profiling_settings()
    try:
        text, cmd, wall = run_ncu(run.argv, settings=settings, env=run.env, cwd=run.workdir, start=run.start)
    finally:
        run.cleanup()
    return ProfileReport.from_kernels(
        parse_raw(text),
        raw_csv=text,
        rule=rule or settings.classifier,
        thresholds=thresholds_from(settings),
        task=task,
        precision=precision,
        impl=run.impl,
        params=run.params,
        ncu_version=ncu_version(cmd[0]),
        command=cmd,
        profile_wall_s=round(wall, 3),
    )


def profile_command(
    argv: list[str],
    *,
    name: str,
    settings: ProfilingSettings | None = None,
    rule: str | None = None,
    precision: str | None = None,
    cwd: Path | None = None,
) -> ProfileReport:
    """Profile a standalone program (e.g. a labelled kernel) that brackets its launch with
    cudaProfilerStart/Stop."""
    settings = settings or get_profiling_settings()
    text, cmd, wall = run_ncu(argv, settings=settings, cwd=cwd)
    return ProfileReport.from_kernels(
        parse_raw(text),
        raw_csv=text,
        rule=rule or settings.classifier,
        thresholds=thresholds_from(settings),
        impl=name,
        precision=precision,
        ncu_version=ncu_version(cmd[0]),
        command=cmd,
        profile_wall_s=round(wall, 3),
    )
