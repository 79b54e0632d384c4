"""The one protocol of GPU work: compile, evaluate, profile, each taking ONE typed request.

Requests: `CompileRequest`, `EvaluateRequest`, `ProfileRequest`, `SanitizeRequest` (the task and precision by name, the candidate's
source or None for the baseline alone, and what the call needs besides). Results: `CompileReport` (a compile's
verdict and log), `EvaluationResult` (the harness's), a list of `SanitizerVerdict` (compute-sanitizer's, one per
tool) and `Profile` (what the profiler said and what of it the
planner saw; the graph's contract re-exports it). Every evaluator of this package implements `Evaluator`; a Ray
worker receives the self-contained `bench_tasks.work.WorkItem` and turns it back into these requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from bench_tasks.harness.result import SANITIZER_TOOLS
from profiling.modes import DEFAULT_MODE
from profiling.modes import ProfileMode as ProfileMode  # defined once, in the layer below; graph.contract re-exports it

if TYPE_CHECKING:
    from bench_tasks.harness import EvaluationResult, SizeRow
    from bench_tasks.harness.result import SanitizerVerdict
    from profiling.report import ProfileReport


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
    mode: ProfileMode = DEFAULT_MODE
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


class KernelRequest(BaseModel):
    """What every request names: the task, the precision and the kernel (the candidate, or None: the baseline)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str = Field(description="the task's name (bench_tasks.load_task)")
    precision: str
    source: str | None = Field(None, description="the candidate's source; None: the baseline alone")


class CompileRequest(KernelRequest):
    """Compile a candidate (CPU only) with these extra nvcc flags."""

    source: str
    flags: tuple[str, ...] = ()


class EvaluateRequest(KernelRequest):
    """Check and time the candidate (or the baseline alone) on the GPU at one size set."""

    sizes: str = "paper"
    flags: tuple[str, ...] = ()


class ProfileRequest(KernelRequest):
    """Profile the candidate (or the baseline); `rows` are its evaluation's rows (the roofline position)."""

    mode: ProfileMode = DEFAULT_MODE
    rows: tuple[dict[str, Any], ...] | None = None


class SanitizeRequest(KernelRequest):
    """Run compute-sanitizer's tools on the candidate (or the baseline) at the harness's sanitizer sizes."""

    tools: tuple[str, ...] = SANITIZER_TOOLS


@runtime_checkable
class Evaluator(Protocol):
    def compile(self, request: CompileRequest) -> CompileReport: ...

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult: ...

    def profile(self, request: ProfileRequest) -> Profile: ...

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]: ...
