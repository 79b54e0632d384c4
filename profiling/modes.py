"""The profile modes: what of a kernel's profile the planner is sent (profiling/filter.py renders each).

Defined here, once: graph.contract re-exports them for the job spec, the API, the CLI and the dashboard."""

from __future__ import annotations

from typing import Literal, get_args

ProfileMode = Literal["filtered", "full", "none"]
MODES: tuple[ProfileMode, ...] = get_args(ProfileMode)
DEFAULT_MODE: ProfileMode = "filtered"  # the job spec's default (graph.contract.DEFAULT_PROFILE_MODE) and the profiler's
