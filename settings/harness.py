"""Harness settings: the `harness` section of the settings tree (settings/tree.py), e.g. CUDAMASTER_HARNESS__NVCC_ARCH=sm_90."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class HarnessSettings(BaseModel):
    nvcc: str = "nvcc"
    nvcc_arch: str = Field("sm_90", description="GPU target; sm_90 for the H100/H200")
    nvcc_flags: list[str] = ["-O3"]
    cache_dir: Path = Path.home() / ".cache" / "cudamaster"
    gpu: str | None = Field(None, description="CUDA_VISIBLE_DEVICES for evaluations; None keeps the environment's")
    vendor_paths: list[Path] = Field(
        [],
        description="where to look first for vendor libraries (cuBLAS, cuSPARSE, cuFFT, cuDNN): "
        "roots with include/ and lib/, or those directories (CUDAMASTER_HARNESS__VENDOR_PATHS, a JSON list)",
    )

    # The OS sandbox for every compile, link, binutils pass, run and profile of code we did not write
    # (see sandbox.py and the README). Running without one needs allow_unsandboxed=true.
    sandbox: Literal["auto", "bwrap", "none"] = Field(
        "auto",
        description="auto: bubblewrap if it works, else refuse (unless allow_unsandboxed); bwrap: bubblewrap or refuse; "
        "none: no sandbox (needs allow_unsandboxed)",
    )
    sandbox_bwrap: str = Field("bwrap", description="bubblewrap: a command on PATH or a path (CUDAMASTER_HARNESS__SANDBOX_BWRAP)")
    allow_unsandboxed: bool = Field(
        False,
        description="single-user local use only: run untrusted kernels without a sandbox "
        "when none can be set up (CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED)",
    )
    sandbox_uid: int = Field(65534, ge=1, description="when the service runs as root, the sandbox runs as this uid and gid")
    sandbox_max_processes: int = Field(512, ge=16, description="RLIMIT_NPROC inside one sandbox (threads count)")
    sandbox_max_open_files: int = Field(1024, ge=64)
    sandbox_max_file_bytes: int = Field(16 << 30, ge=1 << 20, description="RLIMIT_FSIZE: the largest file a sandboxed process may write")
    sandbox_max_cpu_s: int = Field(900, ge=10, description="RLIMIT_CPU per sandboxed process (the wall-clock limits still apply)")
    sandbox_scratch_bytes: int = Field(
        2 << 30,
        ge=1 << 20,
        description="what one compile or link may add to its scratch directory; a run may add its expected outputs plus this",
    )
    sandbox_max_files: int = Field(10000, ge=100, description="files and directories one sandboxed step may create")
    sandbox_tmp_bytes: int = Field(512 << 20, ge=1 << 20, description="size of the sandbox's private /tmp and /dev/shm (memory)")
    # Memory (issue 30): a compile once took 8 GB and more before its time limit; three at once took a host down.
    sandbox_max_memory_bytes: int = Field(
        4 << 30,
        ge=0,
        description="address space (RLIMIT_AS) of each process of a sandboxed step that does not use the GPU: nvcc, cicc, "
        "ptxas, the host compiler, the linker, binutils; one that needs more fails and the step is refused as 'the compiler "
        "used more than N GiB'. An honest compile of thrust::sort (cub, thrust) peaked at 0.68 GB resident and builds "
        "within 1 GiB; 0: no limit",
    )
    sandbox_max_run_memory_bytes: int = Field(
        32 << 30,
        ge=0,
        description="resident memory of a sandboxed GPU step (the timing driver, with its datasets and the baseline that "
        "is a custom task's oracle; ncu), all its processes together, polled every 50 ms and stopped past it. Not "
        "RLIMIT_AS: the CUDA driver reserves huge virtual ranges, which an address-space limit breaks; 0: no limit",
    )
    sandbox_ro_paths: list[Path] = Field([], description="extra read-only paths (a toolkit or GPU driver outside /usr)")
    scratch_root: Path | None = Field(
        None,
        description="where scratch directories are made (default: the system temp directory); the sandbox user must be able to traverse it",
    )

    compile_timeout_s: float = 120.0
    max_object_bytes: int = Field(
        64 << 20,
        ge=1 << 16,
        description="largest object file or linked driver built from code we did "
        "not write (a candidate, a custom baseline); larger is rejected",
    )
    compile_cache_max_bytes: int = Field(
        8 << 30,
        ge=0,
        description="compiled objects and drivers kept under cache_dir (objects/, drivers/); least recently used removed first",
    )
    run_timeout_s: float = Field(300.0, description="the whole driver run (every size, seed and timed pair) at most; the backstop")
    call_timeout_floor_s: float = Field(
        10.0,
        ge=0,
        description="one candidate call (with its synchronise) may take max(this, call_timeout_factor x the baseline's call at "
        "the same size) before the driver stops the run as `timeout`: a kernel that never ends costs seconds, not "
        "run_timeout_s; 0 turns the per-call limit off",
    )
    call_timeout_factor: float = Field(20.0, ge=1, description="see call_timeout_floor_s")
    max_source_bytes: int = 256 * 1024
    compute_sanitizer: str = Field(
        "compute-sanitizer",
        description="compute-sanitizer: a name on PATH or a path; when not found, <nvcc's toolkit>/bin/compute-sanitizer "
        "(bench_tasks/harness/sanitize.py)",
    )
    sanitizer_tool_timeout_s: float = Field(
        15.0,
        gt=0,
        description="one compute-sanitizer tool on one kernel, both of its sizes, at most (racecheck is the slow one): past it the "
        "tool's verdict is not_run (time limit); four tools stay within a minute",
    )

    seeds: list[int] = [1, 2, 3]
    # Timing: interleaved pairs until the relative standard error of the reported median (of the paired
    # ratios; of the baseline's times when it runs alone) is below target_rse, with at least min_pairs
    # pairs and min_seconds, at most max_pairs or max_seconds per size; after warmup_calls calls of each
    # implementation and at least warmup_seconds (warmup_seconds_first at a driver's first timed size).
    # The rule and why its target, not the seconds, bounds the spread: bench_tasks/harness/stoprule.py.
    min_pairs: int = Field(10, description="timed pairs per size at least (the two consecutive checked pairs are among them)")
    max_pairs: int = 2000
    min_seconds_per_size: float = Field(0.05, ge=0, description="seconds of timed pairs per size at least (a floor; the RSE decides)")
    max_seconds_per_size: float = 2.0
    target_rse: float = Field(
        0.002,
        gt=0,
        description="stop once the median's relative standard error (robust, from the IQR) is below this; "
        "five evaluations then spread by ~2.3x this on average",
    )
    input_checks_on_host: bool = Field(
        False,
        description="compare the device inputs with the dataset on the host after every call (copied back), as the driver "
        "does for a buffer whose pristine device copy does not fit in device memory: for testing that fallback; slower",
    )
    pinned_staging: bool = Field(
        True,
        description="the driver stages datasets, input comparisons and saved outputs in page-locked host memory, which the "
        "GPU copies at the bus's speed (pageable memory goes through a bounce buffer); a kernel's own host-memory "
        "arguments stay malloc'd either way",
    )
    target_rse_host_memory: float = Field(
        0.01,
        gt=0,
        description='target_rse for a variant with host-memory arguments (a task\'s `memory = "host"`): its calls allocate and '
        "copy pageable memory, whose time varies by 2-9 % from call to call (matrix_power FP32 on the H200), so their median is "
        "timed to 1 %; at 0.2 % each of its sizes ran to max_seconds_per_size",
    )
    warmup_calls: int = 3
    warmup_seconds: float = Field(0.02, ge=0, description="warm-up seconds at every timed size (after warmup_calls calls)")
    warmup_seconds_first: float = Field(
        0.2, ge=0, description="warm-up seconds at the first size a driver times (the GPU's clocks come up from idle)"
    )

    driver_cpus: int = Field(
        -1,
        ge=-1,
        description="cores reserved for the timing driver, which the harness's own threads leave alone "
        "(bench_tasks/harness/cpus.py): -1 a quarter of the usable cores (at least 2) on a machine with 8 or more, "
        "else none; 0 none",
    )

    # References are computed in full below these; above, on a random sample of output elements.
    reference_full_flops: float = 2e9
    reference_full_elements: int = 1 << 24
    reference_sample: int = 1 << 14
    # Threads that draw inputs and compute references (0: min(8, CPUs)).
    data_workers: int = Field(0, ge=0, le=64)
    blas_threads: int = Field(
        1,
        ge=0,
        le=256,
        description="threads each BLAS call of the harness process uses (its float64 references run side by side on "
        "the harness's own threads, several at a time: a BLAS pool of every core under each of them oversubscribes the "
        "machine); 0 leaves the BLAS library's own default (bench_tasks/harness/cpus.py)",
    )
    prefetch_workers: int = Field(
        0,
        ge=0,
        le=64,
        description="bench run: threads drawing the next variants' check datasets and references while the GPU works (0: CPUs/4, 2 to 8)",
    )
    prefetch_bytes: int = Field(
        8 << 30,
        ge=0,
        description="bench run: check datasets (and full references) drawn ahead of the GPU, at most this many bytes "
        "for the variants not yet evaluated (the next variant is always drawn ahead)",
    )
    # Check datasets and full references are cached on disk under cache_dir/data, at most this many
    # bytes (least recently used entries go first); 0 turns the cache off.
    data_cache_bytes: int = Field(16 << 30, ge=0)
    data_cache_min_free_bytes: int = Field(
        8 << 30,
        ge=0,
        description="nothing is added to the data cache while its file system has "
        "less free space than this (evaluations then draw into scratch)",
    )

    # Roofline ceilings (H200, measured: 4.3 TB/s device copy; fp32 FMA ~67 TFLOP/s; bf16 dense
    # tensor ~790 TFLOP/s). A time under the floor they imply is rejected as impossible.
    peak_flops_fp32: float = 67e12
    peak_flops_bf16: float = 790e12
    peak_bytes_per_s: float = 4.8e12
    review_speedup: float | None = Field(
        None,
        gt=0,
        description="opt-in, the one speedup threshold: a size row whose speedup is above it gets the flag "
        "`speedup_over_review_threshold` and the review queue flags the attempt (off by default: over the "
        "deliberately naive baselines a large speedup is ordinary, not evidence of a measurement problem)",
    )
    # Work that runs past the end event beyond the baseline's synchronise cost by more than this
    # (µs, or this fraction of the call) is added to the candidate's time and flagged `late_work`.
    late_work_slack_us: float = 3.0
    late_work_slack_fraction: float = 0.02
