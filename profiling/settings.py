"""Profiling settings (environment prefix CUDAMASTER_, e.g. CUDAMASTER_NCU=/usr/local/cuda/bin/ncu)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ProfilingSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CUDAMASTER_", env_file=".env", extra="ignore")

    ncu: str = Field("ncu", description="Nsight Compute command line: a name on PATH or a path (CUDAMASTER_NCU)")
    ncu_timeout_s: float = Field(120.0, description="limit for one ncu run, replays included (CUDAMASTER_NCU_TIMEOUT_S)")
    classifier: Literal["published", "sol"] = Field("sol", description="default bottleneck rule (CUDAMASTER_CLASSIFIER)")
    # Thresholds (percent of peak). published: the seed paper's 30 %. sol: below this, neither the SM
    # nor the memory side is busy enough to be the limit, so the kernel waits on latency (ncu uses 60 %).
    published_threshold_pct: float = 30.0
    sol_latency_threshold_pct: float = 60.0
    thresholds_file: Path | None = Field(None, description="JSON from `cudamaster profile fit-thresholds`; overrides the two above")
    # Default profiling size: the largest paper size whose one call stays quick.
    quick_flops: float = 2e10
    quick_bytes: float = 1e9


@cache
def get_profiling_settings() -> ProfilingSettings:
    return ProfilingSettings()
