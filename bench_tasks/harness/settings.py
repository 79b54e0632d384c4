"""Harness settings (environment prefix CUDAMASTER_, e.g. CUDAMASTER_NVCC_ARCH=sm_90)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class HarnessSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CUDAMASTER_", env_file=".env", extra="ignore")

    nvcc: str = "nvcc"
    nvcc_arch: str = Field("sm_90", description="GPU target; sm_90 for the H100/H200")
    nvcc_flags: list[str] = ["-O3"]
    cache_dir: Path = Path.home() / ".cache" / "cudamaster"
    gpu: str | None = Field(None, description="CUDA_VISIBLE_DEVICES for evaluations; None keeps the environment's")
    vendor_paths: list[Path] = Field([], description="where to look first for vendor libraries (cuBLAS, cuSPARSE, cuFFT, cuDNN): "
                                     "roots with include/ and lib/, or those directories (CUDAMASTER_VENDOR_PATHS, a JSON list)")

    compile_timeout_s: float = 120.0
    run_timeout_s: float = 300.0
    max_source_bytes: int = 256 * 1024

    seeds: list[int] = [1, 2, 3]
    # Timing: interleaved pairs until the relative standard error of the paired ratios is below
    # target_rse, with at least min_pairs pairs and min_seconds, at most max_pairs or max_seconds
    # per size; after warmup_calls calls of each implementation and at least warmup_seconds.
    min_pairs: int = 10
    max_pairs: int = 2000
    min_seconds_per_size: float = 0.3
    max_seconds_per_size: float = 2.0
    target_rse: float = 0.005
    warmup_calls: int = 3
    warmup_seconds: float = 0.1

    # References are computed in full below these; above, on a random sample of output elements.
    reference_full_flops: float = 2e9
    reference_full_elements: int = 1 << 24
    reference_sample: int = 1 << 14
    # Threads that draw inputs and compute references (0: min(8, CPUs)).
    data_workers: int = Field(0, ge=0, le=64)

    # Roofline ceilings (H200, measured: 4.3 TB/s device copy; fp32 FMA ~67 TFLOP/s; bf16 dense
    # tensor ~790 TFLOP/s). A time under the floor they imply is rejected as impossible.
    peak_flops_fp32: float = 67e12
    peak_flops_bf16: float = 790e12
    peak_bytes_per_s: float = 4.8e12
    review_speedup: float = 10.0
    # Work that runs past the end event beyond the baseline's synchronise cost by more than this
    # (µs, or this fraction of the call) is added to the candidate's time and flagged `late_work`.
    late_work_slack_us: float = 3.0
    late_work_slack_fraction: float = 0.02


@cache
def get_settings() -> HarnessSettings:
    return HarnessSettings()
