"""What a comparison sends: the API's response bodies and the pages' data (one set of models)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class SizePoint(BaseModel):
    """One measured size of a run's attempt."""

    params: dict[str, Any]
    size: float = Field(description="the product of the size parameters (the charts' x axis)")
    label: str = Field(description="the size parameters as text, e.g. N=1024")
    passed: bool
    speedup: float | None
    roofline_pct: float | None = Field(description="roofline floor / candidate time, in %")
    baseline_us: float | None
    candidate_us: float | None


class RunProfile(BaseModel):
    bottleneck_class: str = Field(description="'' when the profile did not classify it")
    mode: str = Field(description="the profile mode the job ran with: none, full or filtered")
    tokens: int = Field(description="tokens of the profile text the planner was sent")
    metrics: dict[str, Any]


DiffKind = Literal["add", "del", "hunk", "ctx"]


class DiffLine(BaseModel):
    kind: DiffKind
    text: str


class TokenUse(BaseModel):
    """The job's LLM use (all its calls, whichever attempt is compared)."""

    input: int
    output: int
    reasoning: int
    cached: int
    total: int = Field(description="input + output")
    llm_calls: int
    cost_usd: float


class ComparedRun(BaseModel):
    """A job and the attempt of it that is compared (its best; else its latest; none before its first attempt)."""

    job_id: str
    status: str
    models: list[str] = Field(description="the models its LLM calls used (or, before any call, the ones it asked for)")
    rounds: int | None
    debug: int | None
    profile_mode: str
    best_score: float | None = Field(description="the job's best P")
    attempt_id: int | None
    attempt_number: int | None = Field(description="the attempt's place in its job: 1 for the job's first attempt")
    round: int | None
    debug_step: int | None
    verdict: str
    score: float | None = Field(description="P of the compared attempt")
    gpu_model: str | None
    source_sha256: str
    source_bytes: int
    source_url: str | None = Field(description="the attempt's source (GET)")
    sizes: list[SizePoint]
    profile: RunProfile | None
    tokens: TokenUse
    diff_from_first: list[DiffLine] = Field(description="unified diff of this run's source against the first run's ([] for the first)")
    diff_truncated: bool = Field(description="the diff was cut to its first lines")


class MetricRow(BaseModel):
    """One profile metric (or the bottleneck class), one value per run (null: not measured)."""

    metric: str
    values: list[Any]


class SizeRow(BaseModel):
    """One size, the runs' speedups and roofline % at it (null: not measured)."""

    label: str
    size: float
    speedup: list[float | None]
    roofline_pct: list[float | None]


class RunComparison(BaseModel):
    kind: Literal["jobs", "attempts"]
    task: str
    precision: str
    runs: list[ComparedRun]
    sizes: list[SizeRow]
    metrics: list[MetricRow]


class ProfileTokens(BaseModel):
    mode: str
    budget: int | None
    tokens_sent: int
    planner_calls: int
    per_call: float
    per_variant: float


class ComparedCampaign(BaseModel):
    id: str
    name: str
    status: str
    configuration: str = Field(description="R, D, profile mode, sizes, models, flag choice")
    variants: int
    correct: int = Field(description="variants with a correct kernel")
    success: list[float] = Field(description="share of variants reaching each tau of `taus` (tau 0: a correct kernel)")
    geomean_p: float | None
    cost_usd: float
    tokens: int
    cost_per_variant: float
    tokens_per_variant: float
    profile_tokens: ProfileTokens


class TransitionRow(BaseModel):
    """Variants (with a correct kernel) whose baseline had class `baseline` and whose best kernel has class `best`."""

    baseline: str
    best: str
    variants: list[int] = Field(description="one count per campaign")


class ModeUse(BaseModel):
    """The compared campaigns of one profile mode, together."""

    mode: str
    campaigns: list[str]
    variants: int
    tokens_per_variant: float
    cost_per_variant: float
    profile_tokens_per_planner_call: float
    correct_share: float


class CampaignComparison(BaseModel):
    taus: list[int]
    campaigns: list[ComparedCampaign]
    transitions: list[TransitionRow]
    by_profile_mode: list[ModeUse]
    common_variants: int = Field(description="variants (task/precision) that every compared campaign ran")
