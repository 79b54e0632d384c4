"""The evaluation result: a documented, versioned JSON document.

Everything downstream (the agent, the database, reports) reads this document. Its schema is
`EvaluationResult.model_json_schema()`; `docs/evaluation-result.md` describes each field.
Bump SCHEMA_VERSION whenever a field changes meaning or disappears.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, model_validator

SCHEMA_VERSION = "1.5"
HARNESS_VERSION = "0.8.0"


class Verdict(StrEnum):
    ok = "ok"
    compile_error = "compile_error"  # nvcc rejected the source
    link_error = "link_error"  # missing or mismatched entry point
    rejected = "rejected"  # forbidden symbol (vendor library, libc I/O, ...) or impossible timing
    runtime_error = "runtime_error"  # CUDA error, crash, bad write detected by guard bands
    timeout = "timeout"  # compile or run exceeded its time limit
    wrong_answer = "wrong_answer"  # output differs from the float64 reference
    # Not the candidate's fault: the worker that ran it died or hung twice (gpu/ray). Never a
    # score, never counted against the kernel.
    infrastructure_error = "infrastructure_error"


class TimeStats(BaseModel):
    """Per-call times of one implementation at one size, in microseconds."""

    median_us: float
    iqr_us: float
    min_us: float
    samples: int
    wall_median_us: float = Field(description="host wall-clock median of the same calls (hidden-work cross-check)")
    tail_median_us: float = Field(
        0.0,
        description="median time from the end event to a second event recorded after a "
        "device-wide synchronise (fixed synchronise cost; more means work ran past the end event)",
    )
    late_work_us: float = Field(0.0, description="median work found running past the end event, already added to these times")


class Check(BaseModel):
    """One correctness check: one implementation, one seed (or timed call), one stage."""

    impl: str  # baseline | candidate
    seed: int  # the dataset's seed; for a timed call, the seed of the inputs that are kept (structure)
    stage: str  # first | second (candidate run twice) | after_timing (fresh inputs) | timed_call
    call: int | None = Field(None, description="timed_call: the index of the timed pair (inputs redrawn on the device)")
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    worst_index: int | None = None
    checked_elements: int = 0
    message: str = ""


class SizeRow(BaseModel):
    params: dict[str, int]
    complexity: int
    passed: bool
    checks: list[Check] = []
    baseline: TimeStats | None = None
    candidate: TimeStats | None = None
    speedup: float | None = Field(None, description="median of paired baseline/candidate ratios")
    speedup_iqr: float | None = None
    roofline_floor_us: float | None = None
    baseline_roofline_pct: float | None = None
    candidate_roofline_pct: float | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    torch_times: dict[str, TimeStats] = Field(
        default_factory=dict,
        description="PyTorch tasks: eager, compile (torch.compile) and candidate times in the PyTorch process that timed them "
        "interleaved (bench_tasks/pytorch/timing.py); `baseline` and `speedup` are then eager's",
    )
    speedup_compile: float | None = Field(None, description="PyTorch tasks: median of paired torch.compile/candidate ratios")
    flags: list[str] = []  # e.g. "launch_bound", "speedup_over_review_threshold", "wall_gap", "late_work", "inputs_not_refreshed"


class GpuInfo(BaseModel):
    name: str = ""
    compute_capability: str = ""
    sm_count: int = 0
    l2_bytes: int = 0
    memory_bytes: int = 0
    driver_version: str = Field("", description="NVIDIA driver version (nvidia-smi)")
    cuda_driver_api: str = Field("", description="CUDA version the driver supports (cudaDriverGetVersion)")
    runtime_version: str = ""
    host: str = Field("", description="the machine the measurement ran on (set by the Ray GPU workers)")


class EvaluationResult(BaseModel):
    schema_version: str = SCHEMA_VERSION
    harness_version: str = HARNESS_VERSION
    task: str
    precision: str
    verdict: Verdict
    message: str = ""
    size_set: str = "paper"
    rows: list[SizeRow] = []
    score: float | None = Field(None, description="P = sum T(N_i) S_i / sum T(N_i); None unless verdict is ok")
    compile_flags: list[str] = []
    nvcc_version: str = ""
    gpu: GpuInfo | None = None
    seeds: list[int] = []
    source_sha256: str = ""
    baseline_only: bool = False
    implementation: str = Field(
        "candidate",
        description="what was measured against the baseline: candidate (a submitted kernel), "
        "vendor (the task's vendor reference) or baseline (nothing: the baseline alone)",
    )
    vendor_libraries: list[str] = Field(default_factory=list, description="the libraries a vendor reference links (cublas, cusparse, ...)")
    driver_cpus: list[int] = Field(
        default_factory=list, description="the host cores the driver ran on (bench_tasks/harness/cpus.py); empty in documents before 1.4"
    )
    wall_seconds: float = 0.0
    stages: dict[str, float] = Field(
        default_factory=dict, description="busy seconds per stage (they overlap); see docs/evaluation-result.md"
    )
    refreshed_inputs: list[str] = Field(default_factory=list, description="inputs redrawn on the device before every timed pair")
    refresh_key: str = Field("", description="the secret key of the redraws (hex), recorded once the run is over")
    target_rse: float | None = Field(
        None,
        description="the relative standard error the timing loop stopped at (target_rse, or target_rse_host_memory for a "
        "variant with host-memory arguments); None where nothing was timed and in documents before 1.5",
    )
    torch_baselines: str = Field("", description="PyTorch tasks: the PyTorch and GPU the eager and torch.compile baselines ran on")
    sanitizer: list[SanitizerVerdict] = Field(
        default_factory=list,
        description="compute-sanitizer's verdicts on the measured kernel, one per tool (bench eval/run --sanitize); empty: not asked",
    )
    log: str = ""  # compile log or driver stderr tail

    @model_validator(mode="before")
    @classmethod
    def _implementation_of_old_documents(cls, data: Any) -> Any:
        """Documents before 1.3 carry no `implementation`: it follows from `baseline_only`."""
        if isinstance(data, dict) and "implementation" not in data:
            data = {**data, "implementation": "baseline" if data.get("baseline_only") else "candidate"}
        return data

    @property
    def ok(self) -> bool:
        return self.verdict == Verdict.ok


# -- compute-sanitizer (bench_tasks/harness/sanitize.py) ---------------------------------------------------------------
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


class SanitizerStatus(StrEnum):
    clean = "clean"  # the tool ran to its summary at every size and reported no error
    findings = "findings"  # the tool reported at least one error (its first report lines are kept)
    not_run = "not_run"  # the tool did not run to its end: `reason` says why (missing, GPU runtime unsupported, time limit)


class SanitizerVerdict(BaseModel):
    """One compute-sanitizer tool's verdict on one kernel, over the sizes it ran at."""

    tool: str = Field(description="memcheck | racecheck | initcheck | synccheck")
    status: SanitizerStatus
    kernel: str = Field("", description="findings: the (first) kernel the report names")
    errors: int = Field(0, ge=0, description="findings: the errors the tool counted (its ERROR or RACECHECK SUMMARY)")
    report: list[str] = Field(default_factory=list, description="findings: the first lines of the report (capped)")
    reason: str = Field("", description="not_run: why the tool did not run to its end")
    sizes: list[dict[str, int]] = Field(default_factory=list, description="the sizes the tool ran at")
    seconds: float = Field(0.0, ge=0, description="the tool's wall time over its sizes")


def sanitizer_status(verdicts: list[SanitizerVerdict] | list[dict[str, Any]] | None) -> SanitizerStatus | None:
    """A kernel's overall standing: findings if any tool found something, else not_run if any tool (or all four) did
    not run, else clean; None when the sanitizer was never asked. The one place this rule lives."""
    if not verdicts:
        return None
    found = [v if isinstance(v, SanitizerVerdict) else SanitizerVerdict.model_validate(v) for v in verdicts]
    statuses = {v.status for v in found}
    if SanitizerStatus.findings in statuses:
        return SanitizerStatus.findings
    if SanitizerStatus.not_run in statuses or {v.tool for v in found} < set(SANITIZER_TOOLS):
        return SanitizerStatus.not_run
    return SanitizerStatus.clean


def sanitizer_findings_text(verdicts: list[SanitizerVerdict] | list[dict[str, Any]]) -> str:
    """The findings as the debugger reads them (as it reads a compile log): per tool, kernel, count and report lines."""
    parts = []
    for v in verdicts:
        v = v if isinstance(v, SanitizerVerdict) else SanitizerVerdict.model_validate(v)
        if v.status == SanitizerStatus.findings:
            head = f"compute-sanitizer --tool {v.tool}: {v.errors} error(s) in {v.kernel or 'a kernel'}"
            parts.append("\n".join([head, *v.report]))
    return "\n\n".join(parts)


EvaluationResult.model_rebuild()  # `sanitizer` names SanitizerVerdict, defined after it


REVIEW_FLAG = "speedup_over_review_threshold"


def flag_review_speedup(row: SizeRow, threshold: float | None) -> None:
    """The one review-speedup rule (settings: harness.review_speedup, off by default): a row whose speedup is over the
    threshold is flagged for a person's review."""
    if threshold is not None and row.speedup is not None and row.speedup > threshold:
        row.flags.append(REVIEW_FLAG)


def weighted_score(rows: list[SizeRow]) -> float | None:
    """P = sum(T(N_i) * S_i) / sum(T(N_i)) over the sizes with a speedup (T: the task's complexity); None: none has one."""
    total = sum(r.complexity for r in rows if r.speedup is not None)
    return sum(r.complexity * r.speedup for r in rows if r.speedup is not None) / total if total else None
