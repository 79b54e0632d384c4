"""Request and response bodies of the HTTP API (they make the OpenAPI document).

What the agent produces is served in the contract's shapes (graph.contract): measurements and
profiles are the contract's models read from the stored rows, a job's question is the contract's
InterruptEvent, a submission becomes a contract JobSpec, and its spending cap is the contract's."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, computed_field, field_validator, model_validator

from bench_tasks.pytorch.runner import MAX_FILE_BYTES as MAX_REFERENCE_BYTES
from graph.contract import (
    DEFAULT_DEBUG,
    DEFAULT_PRECISION,
    DEFAULT_PROFILE_MODE,
    DEFAULT_ROUNDS,
    DEFAULT_SANITIZE,
    DEFAULT_SIZES,
    DebugSteps,
    InterruptEvent,
    JobSpec,
    JobStatus,
    LlmCallStatus,
    Measurement,
    Precision,
    Profile,
    ProfileMode,
    ProfileTokenBudget,
    Rounds,
    SanitizeMode,
    SanitizerStatus,
    SanitizerVerdict,
    SizeSet,
    SpendingCap,
    StopReason,
)
from settings.service import MAX_CUSTOM_SIZES

from .bounds import MODEL_PATTERN, TEAM_PATTERN, Name, RequestBody, TaskName
from .db.models import DEFAULT_TEAM


def check_models(models: dict[str, str]) -> None:
    for k, v in models.items():
        if k not in ("planner", "coder", "compiler", "debugger", "*") or not re.fullmatch(MODEL_PATTERN, v):
            raise ValueError(
                f"models: {k[:40]!r} -> {v[:140]!r}: roles are planner, coder, compiler, debugger or *; "
                "model names 1-128 characters: letters, digits and _ . : / @ + -"
            )


class CustomArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["input", "output", "accumulate", "inout", "scalar"]
    length: str | None = Field(None, max_length=200, description="buffers: element count as an expression of the size parameters")
    value: str | None = Field(None, max_length=200, description="scalars: value as an expression of the size parameters")
    draw: str | None = Field(None, max_length=100, description='input draw, e.g. "uniform(-1, 1)"')


class CustomTaskIn(BaseModel):
    """The team's own kernel: its correctness oracle is the baseline's output."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z_][a-z0-9_]{0,63}$")
    prototype: str = Field(max_length=2000, examples=['extern "C" void my_op(const float* A, float* B, int N)'])
    args: dict[str, CustomArg] = Field(min_length=1, max_length=32)
    sizes: list[dict[str, StrictInt]] = Field(
        min_length=1,
        max_length=MAX_CUSTOM_SIZES,
        examples=[[{"N": 1024}, {"N": 65536}]],
        description=f"at most {MAX_CUSTOM_SIZES}, or CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES when it is lower",
    )
    baseline_cu: str = Field(min_length=1, description="the baseline .cu defining the prototype's function")


REFERENCE_NAME_PATTERN = r"^[a-z_][a-z0-9_]{0,63}$"


class _ReferenceIn(BaseModel):
    """A PyTorch reference file: a name, its text, and sizes over its constants (a job's `pytorch`, a suite's entry)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=REFERENCE_NAME_PATTERN, description="a label for the reference (the task gets an id pt_...)")
    reference_py: str = Field(min_length=1, max_length=MAX_REFERENCE_BYTES, description="the reference file's text")
    sizes: list[dict[str, StrictInt]] = Field(
        default_factory=list,
        max_length=MAX_CUSTOM_SIZES,
        description="each overrides the file's module-level integer constants; empty: the file's own; "
        f"at most {MAX_CUSTOM_SIZES}, or CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES when it is lower",
        examples=[[{"batch_size": 16, "dim": 16384}]],
    )


class PyTorchTaskIn(_ReferenceIn):
    """A PyTorch reference (KernelBench's format: class Model, get_inputs, get_init_inputs, sizes as module-level
    integer constants) as the task. It runs only in the sandbox (app/pytorch_tasks.py, docs/pytorch-tasks.md)."""

    precision: Precision | None = Field(None, description="the candidate's buffers (fp32 or bf16); default: the job's precision")


class SuiteReferenceIn(_ReferenceIn):
    """One reference file of a suite: its name (`cudamaster suite push` derives it from the file's name) and text."""

    model_config = ConfigDict(extra="forbid", strict=True)


class SuiteSubmit(RequestBody):
    """A folder of PyTorch references as a suite: each is probed in the sandbox like a job's `pytorch` field."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: Name = Field(description="a name for people to read, e.g. the folder's")
    precision: Precision = DEFAULT_PRECISION
    references: list[SuiteReferenceIn] = Field(
        min_length=1, description="at most CUDAMASTER_SERVICE__MAX_SUITE_REFERENCES, CUDAMASTER_SERVICE__MAX_SUITE_BYTES of text in all"
    )


class SuiteTaskOut(BaseModel):
    id: str = Field(description="the task's id (pt_...): a campaign's `selection.suite` runs every one")
    name: str
    prototype: str = Field(description="the C prototype a candidate defines")
    sizes: list[dict[str, int]]


class SuiteRefusal(BaseModel):
    name: str
    reason: str


class SuiteOut(BaseModel):
    id: str
    name: str
    precision: str
    created_at: datetime
    tasks: int = Field(description="tasks made")
    refused: int = Field(description="references refused")


class SuiteDetail(BaseModel):
    id: str
    name: str
    precision: str
    created_at: datetime
    tasks: list[SuiteTaskOut]
    refused: list[SuiteRefusal] = Field(description="the references that could not be made a task, with the reason")


class JobSubmit(RequestBody):
    """A job: a benchmark task (see GET /api/v1/tasks) or a custom task, and the agent's settings."""

    model_config = ConfigDict(extra="forbid")
    task: TaskName | None = None
    custom: CustomTaskIn | None = None
    pytorch: PyTorchTaskIn | None = None
    precision: Precision = DEFAULT_PRECISION
    rounds: Rounds = DEFAULT_ROUNDS
    debug: DebugSteps = DEFAULT_DEBUG
    sizes: SizeSet = DEFAULT_SIZES
    models: dict[str, str] = Field(
        default_factory=dict, max_length=16, description="role (planner, coder, compiler, debugger, or * for all) -> model name"
    )
    manual: StrictBool = Field(False, description="ask a human (POST /jobs/{id}/answer) at each decision")
    profile_mode: ProfileMode = DEFAULT_PROFILE_MODE
    profile_token_budget: ProfileTokenBudget = None
    choose_flags: StrictBool | None = Field(None, description="let the compiler role choose nvcc flags; default: the service's setting")
    sanitize: SanitizeMode = DEFAULT_SANITIZE
    spending_cap: SpendingCap | None = Field(
        None,
        description="stop the job cleanly, keeping its best kernel, before an LLM call would pass this many dollars "
        "and/or tokens (input + output); the job then ends with stop_reason `spending_cap`",
    )

    @model_validator(mode="after")
    def _one_task(self) -> JobSubmit:
        if [self.task, self.custom, self.pytorch].count(None) != 2:
            raise ValueError(
                "give exactly one of `task` (a benchmark task name, see GET /api/v1/tasks), `custom` (your own kernel) "
                "or `pytorch` (a PyTorch reference in KernelBench's format)"
            )
        if self.pytorch is not None and self.pytorch.precision is not None:
            if "precision" in self.model_fields_set and self.precision != self.pytorch.precision:
                raise ValueError(f"precision {self.precision} and pytorch.precision {self.pytorch.precision} differ: give one")
            self.precision = self.pytorch.precision
        check_models(self.models)
        return self

    def agent_spec(self, task: str) -> JobSpec:
        """The job spec the agent runs (`task`: the benchmark or stored custom task's name)."""
        return JobSpec(
            task=task,
            precision=self.precision,
            rounds=self.rounds,
            debug=self.debug,
            sizes=self.sizes,
            models=dict(self.models),
            manual=self.manual,
            profile_mode=self.profile_mode,
            profile_token_budget=self.profile_token_budget,
            choose_flags=self.choose_flags,
            spending_cap=self.spending_cap,
            sanitize=self.sanitize,
        )


class AnswerIn(RequestBody):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, max_length=20000)
    question_id: str | None = Field(
        None,
        max_length=160,
        description="the question answered (`question.question.question_id` of the job); 409 when the job waits on another one",
    )


class _Orm(BaseModel):
    model_config = ConfigDict(from_attributes=True)


def _question(value: Any) -> Any:
    """A stored question in the contract's shape; one stored before questions had ids reads as none."""
    try:
        return None if value is None else InterruptEvent.model_validate(value)
    except ValueError:
        return None


class JobTotals(_Orm):
    attempts_count: int
    llm_calls_count: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_tokens: int
    cost_usd: float
    llm_latency_s: float


class JobOut(_Orm):
    id: str
    task: str
    precision: str
    status: JobStatus
    message: str
    settings: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    best_attempt_id: int | None
    best_score: float | None
    stop_reason: StopReason | None = Field(
        None, description="why a finished job stopped before its rounds were done: `spending_cap` (it kept its best kernel)"
    )
    question: Annotated[InterruptEvent | None, BeforeValidator(_question)] = Field(
        None, description="what a waiting job asks: answer `question.question_id` with POST /jobs/{id}/answer"
    )
    cancel_requested: bool
    lease_holder: str | None
    totals: JobTotals
    api_key_id: str | None = Field(None, description="the key that submitted the job (it, or an admin, may act on it)")
    team: str = Field("default", description="the submitting key's team: its keys can read the job")

    @model_validator(mode="before")
    @classmethod
    def _totals(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            data = {name: getattr(data, name) for name in cls.model_fields if name != "totals" and hasattr(data, name)} | {
                "totals": JobTotals.model_validate(data)
            }
        return data


class JobPage(BaseModel):
    items: list[JobOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class MeasurementOut(Measurement):
    model_config = ConfigDict(from_attributes=True)

    gpu_model: str | None = Field(None, description="the GPU model it was measured on; speedups of different models never compare")


class ProfileOut(Profile):
    model_config = ConfigDict(from_attributes=True)

    @field_validator("note", mode="before")
    @classmethod
    def _no_note(cls, value: Any) -> Any:
        return "" if value is None else value  # stored before profiles had notes


class AttemptOut(_Orm):
    id: int
    attempt_key: str
    round: int
    debug_step: int
    role: str
    strategy: str
    source_sha256: str
    flags: list[Any]
    compile_log: str
    verdict: str
    message: str
    score: float | None
    gpu_model: str | None = Field(None, description="the GPU model it was measured on (all of a job's attempts share one)")
    sanitizer: list[SanitizerVerdict] | None = Field(None, description="compute-sanitizer's verdicts, one per tool; null: not sanitized")
    sanitizer_status: SanitizerStatus | None = Field(
        None, description="clean (all four tools ran, none found anything), findings or not_run (with the reason in `sanitizer`)"
    )
    created_at: datetime
    measurements: list[MeasurementOut]
    profile: ProfileOut | None


class LlmCallOut(_Orm):
    call_key: str
    status: LlmCallStatus = Field(
        description="sent: requested, no answer yet; paid: answered (tokens as the endpoint reported them); failed: the "
        "endpoint answered an error; lost_in_flight: its process died before the answer (estimated input "
        "cost counted: a lower bound)"
    )
    round: int | None
    role: str
    model: str
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_tokens: int
    latency_s: float
    cost_usd: float

    @computed_field(  # type: ignore[prop-decorator]
        description="how its tokens and cost count toward the job's spend: `paid` as the endpoint reported them; `estimate` "
        "charged without a usable answer (a call that reached the provider and failed, or one lost in flight: its prompt, "
        "plus its max_tokens where the provider may have generated); `none` nothing charged (it never reached the provider)"
    )
    @property
    def charge(self) -> Literal["paid", "estimate", "none"]:
        if self.status == "paid":
            return "paid"
        return "estimate" if self.input_tokens or self.output_tokens else "none"


class JobDetail(JobOut):
    attempts: list[AttemptOut]
    llm_calls: list[LlmCallOut]


class TaskOut(BaseModel):
    name: str
    category: str
    summary: str
    precisions: list[str]
    prototypes: dict[str, str]
    sizes: dict[str, list[dict[str, int]]]


class ClusterWorkerOut(BaseModel):
    name: str
    host: str
    gpu_model: str = Field(description="nvidia-smi's name of its GPU; '' for a compile worker")
    driver: str = ""
    alive: bool
    busy: bool
    replaced: int = Field(description="how many times its process died or hung and was replaced")


class ClusterOut(BaseModel):
    """The Ray cluster's workers and queues (CUDAMASTER_RAY__ADDRESS)."""

    address: str
    gpus: list[ClusterWorkerOut]
    compile_workers: list[ClusterWorkerOut]
    queued: dict[str, int] = Field(description="items waiting, per queue (gpu: evaluations and profiles; cpu: compiles)")
    jobs_waiting: int = Field(description="jobs with items in a queue (they take turns)")


class GpuOut(BaseModel):
    id: str
    name: str = ""
    busy: bool


class GpusOut(BaseModel):
    evaluation: Literal["local_gpus", "remote_gpus", "ray", "injected", "none"]
    gpus: list[GpuOut] = Field(description="this machine's GPUs (local evaluation); the cluster's are under `cluster`")
    cluster: ClusterOut | None = None
    queue: dict[str, int] = Field(
        default_factory=dict,
        description="Ray: items waiting per job, the next job first (only the jobs the caller may read; others are under `other`)",
    )


class HealthOut(BaseModel):
    status: Literal["ok", "degraded"]
    database: str
    running_jobs: int
    max_running_jobs: int
    gpus_configured: list[str] = Field(
        description="the local GPU ids jobs may use (CUDAMASTER_SERVICE__GPUS); used only when `evaluation` is local_gpus"
    )
    gpus_on_this_host: list[str] = Field(
        description="GPU indexes nvidia-smi listed on the service's own machine at start-up; remote workers' and Ray's GPUs are "
        "not here (see remote_gpu_workers, cluster)"
    )
    remote_gpu_workers: int = Field(description="remote GPU workers the service sends kernels to (CUDAMASTER_SERVICE__REMOTE_GPUS)")
    busy_gpus: list[str] = Field(description="configured local GPU ids evaluating a kernel right now")
    gpus: list[str] = Field(description="deprecated: the same as gpus_configured", json_schema_extra={"deprecated": True})
    gpus_found: list[str] = Field(description="deprecated: the same as gpus_on_this_host", json_schema_extra={"deprecated": True})
    evaluation: Literal["local_gpus", "remote_gpus", "ray", "injected", "none"] = Field(
        description="where kernels run: the configured local GPUs that were found, remote GPU workers, a Ray cluster "
        "(CUDAMASTER_RAY__ADDRESS), an evaluator the embedding code injected, or nowhere (jobs are refused with 503)"
    )
    can_run_jobs: bool
    gpu_note: str = Field(description="one line on the GPUs: what was found, or why none and what to do")
    runner_id: str
    draining: bool
    sandbox: str = Field("", description="the OS sandbox untrusted kernels run in, or why they are refused")
    cluster: ClusterOut | None = Field(None, description="with Ray on: the cluster's GPUs and queues")


class LeaderboardEntry(BaseModel):
    task: str
    precision: str
    gpu: str = Field(description="GPU model the attempt was measured on (entries of different GPU models are never compared)")
    score: float = Field(description="P of the best countable attempt: correct, and not held by the review queue")
    attempt_id: int
    job_id: str
    job_cost_usd: float
    models: list[str] = Field(description="models the job's LLM calls used")
    sanitizer: SanitizerStatus | None = Field(
        None, description="the kernel's compute-sanitizer standing: clean, not_run (it could not run on that GPU), null (not sanitized)"
    )


class LeaderboardShare(BaseModel):
    precision: str
    gpu: str
    tasks: int = Field(description="benchmark tasks tried at this precision (tasks without a countable kernel count as P < 1)")
    at_least: dict[str, float] = Field(description='threshold ("1", "2", "4", "8") -> share of those tasks whose best P is at least it')


class LeaderboardOut(BaseModel):
    entries: list[LeaderboardEntry]
    shares: list[LeaderboardShare]
    models: list[str] = Field(description="models seen in the jobs this key may read (for the model filter)")


class CostPerModelDay(BaseModel):
    day: str = Field(description="UTC date, YYYY-MM-DD")
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


class CostPerJob(BaseModel):
    job_id: str
    task: str
    precision: str
    status: str
    cost_usd: float
    tokens: int = Field(description="input + output tokens")
    best_score: float | None
    usd_per_speedup: float | None = Field(description="cost_usd / best P: dollars per unit of the best speedup (null without one)")


class CostsOut(BaseModel):
    days: int
    per_model_day: list[CostPerModelDay]
    per_job: list[CostPerJob]


ReviewStatus = Literal["pending", "accepted", "rejected"]


class ReviewOut(_Orm):
    attempt_id: int
    job_id: str
    task: str
    precision: str
    status: ReviewStatus
    reasons: list[str] = Field(description="why the attempt was flagged, one line per finding")
    flagged_at: datetime
    reviewer_key_id: str | None
    decided_at: datetime | None
    note: str
    score: float | None
    measurements: list[MeasurementOut] = Field(description="the evidence: per-size times, speedups and roofline %")
    profile: ProfileOut | None
    source_url: str = Field(description="the attempt's source (GET, same key)")


class ReviewPage(BaseModel):
    items: list[ReviewOut]
    total: int
    limit: int
    offset: int


class ReviewDecision(RequestBody):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["accept", "reject"]
    note: str = Field("", max_length=2000, description="why (shown in the queue)")


KeyRole = Literal["admin", "member", "reviewer", "viewer"]


class KeyCreate(RequestBody):
    model_config = ConfigDict(extra="forbid")
    name: Name = Field(description="who the key is for (no control or bidirectional-override characters)")
    role: KeyRole = Field(
        "member",
        description="admin: everything, every team; member: its team's jobs, acts on its own; "
        "reviewer: a member that also accepts or rejects its team's flagged attempts; viewer: reads its team's jobs",
    )
    team: str = Field(DEFAULT_TEAM, max_length=64, pattern=TEAM_PATTERN, description="keys of a team read the team's jobs")


class KeyOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: str = Field(description="the public part of the key (cm_<id>_…)")
    name: str
    role: KeyRole
    team: str
    created_at: datetime
    revoked_at: datetime | None
    last_submit_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="the key itself: shown once, stored only as a hash")
