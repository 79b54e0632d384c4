"""The one protocol of GPU work: compile, evaluate, profile, and what they return.

`CompileReport` (a compile's verdict and log), `Profile` (what the profiler said and what of it the planner
saw; the graph's contract re-exports it), `EvaluationResult` (the harness's). Every evaluator of this package
implements `Evaluator`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from bench_tasks.harness import EvaluationResult, SizeRow
    from profiling.report import ProfileReport

ProfileMode = Literal["filtered", "full", "none"]


@dataclass
class CompileReport:
    verdict: str | None  # None: compiled and passed the symbol checks; else a harness Verdict value
    message: str = ""
    log: str = ""
    flags: list[str] | None = None
    object_key: str = ""  # the compile cache entry (cache_dir/objects/KEY) holding the object; "" when none

    @property
    def ok(self) -> bool:
        return self.verdict is None


class Profile(BaseModel):
    """What the profiler said about one kernel, and what of it the planner saw."""

    model_config = ConfigDict(extra="forbid")

    bottleneck_class: str = Field("", description="compute | memory_latency | memory_bandwidth; '' when not classified")
    metrics: dict[str, float | None] = Field(default_factory=dict, description="the metrics the planner was shown (raw ncu names)")
    text: str = Field("", description="the profile text the planner was shown")
    mode: ProfileMode = "filtered"
    tokens: int = Field(0, ge=0, description="tokens of `text` (o200k_base, or an estimate of 1 per 4 bytes)")
    note: str = Field("", description="what was profiled, or why there is no profile")
    budget: int | None = Field(None, description="the token budget `text` was cut to (JobSpec.profile_token_budget); None: whole")
    lines_cut: int = Field(0, ge=0, description="lines of the rendered profile the budget cut")


def profile_of(report: ProfileReport, mode: ProfileMode, row: SizeRow | None, note: str) -> Profile:
    """A profiling.ProfileReport as the contract keeps it: the text the planner sees in `mode`, its class
    and the metrics that text shows (the real profiler and the test double share this)."""
    from profiling import filter as profile_filter

    return Profile(
        text=profile_filter.render(report, mode=mode, row=row),
        note=note,
        mode=mode,
        bottleneck_class=report.bottleneck.value if report.bottleneck else "",
        metrics=profile_filter.shown_values(report, mode),
    )


def no_profile(note: str, mode: ProfileMode = "none") -> Profile:
    return Profile(text="", note=note, mode=mode)


@runtime_checkable
class Evaluator(Protocol):
    def compile(self, task: str, precision: str, source: str, flags: list[str]) -> CompileReport: ...

    def evaluate(self, task: str, precision: str, source: str | None, sizes: str, flags: list[str]) -> EvaluationResult: ...

    def profile(
        self, task: str, precision: str, source: str | None, mode: ProfileMode = "filtered", rows: list[dict] | None = None
    ) -> Profile: ...
