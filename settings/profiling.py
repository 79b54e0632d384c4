"""Profiling settings: the `profiling` section of the settings tree (settings/tree.py), e.g.
CUDAMASTER_PROFILING__NCU=/usr/local/cuda/bin/ncu."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class ProfilingSettings(BaseModel):
    ncu: str = Field("ncu", description="Nsight Compute command line: a name on PATH or a path (CUDAMASTER_PROFILING__NCU)")
    ncu_timeout_s: float = Field(120.0, description="limit for one ncu run, replays included (CUDAMASTER_PROFILING__NCU_TIMEOUT_S)")
    classifier: Literal["published", "sol"] = Field("sol", description="default bottleneck rule (CUDAMASTER_PROFILING__CLASSIFIER)")
    # Thresholds (percent of peak). published: the seed paper's 30 %. sol: below this, neither the SM
    # nor the memory side is busy enough to be the limit, so the kernel waits on latency (ncu uses 60 %).
    published_threshold_pct: float = 30.0
    sol_latency_threshold_pct: float = 60.0
    thresholds_file: Path | None = Field(None, description="JSON from `cudamaster profile fit-thresholds`; overrides the two above")
    # Default profiling size: the largest paper size whose one call stays quick.
    quick_flops: float = 2e10
    quick_bytes: float = 1e9
