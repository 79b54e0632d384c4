"""What crosses the API for campaigns (the dashboard and `cudamaster campaign` read the same models)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, model_validator

from graph.contract import (
    DEFAULT_DEBUG,
    DEFAULT_PROFILE_MODE,
    DEFAULT_ROUNDS,
    DEFAULT_SANITIZE,
    DEFAULT_SIZES,
    DebugSteps,
    Precision,
    ProfileMode,
    ProfileTokenBudget,
    Rounds,
    SanitizeMode,
    SizeSet,
)

from ..bounds import SUITE_ID_PATTERN, OptionalName, RequestBody
from ..schemas import check_models

MAX_COST_USD = 1e9
MAX_TOKENS = 10**15  # fits the BIGINT column with room
CampaignStatus = Literal["running", "finished", "cancelled", "capped"]


class Selection(BaseModel):
    """Which variants: all (nothing set), a category and/or a precision, an explicit list, or a suite's tasks."""

    model_config = ConfigDict(extra="forbid")
    category: str | None = Field(None, max_length=64, description="e.g. activation, dense/algebra (GET /api/v1/tasks)")
    precision: Precision | None = None
    variants: list[str] | None = Field(
        None,
        min_length=1,
        max_length=1000,
        examples=[["vector_add/fp32", "relu/bf16"]],
        description="TASK/PRECISION names (TASK: a benchmark task, or a stored task of your key: ct_… or pt_…); "
        "not together with category or precision",
    )
    suite: str | None = Field(
        None,
        pattern=SUITE_ID_PATTERN,
        description="a suite of your key (POST /api/v1/suites): every task it made, at the suite's precision; alone",
    )

    @model_validator(mode="after")
    def _list_alone(self) -> Selection:
        if self.variants is not None and (self.category is not None or self.precision is not None):
            raise ValueError("selection: give `variants` alone, or `category` and/or `precision` (nothing: every variant)")
        if self.suite is not None and (self.variants is not None or self.category is not None or self.precision is not None):
            raise ValueError("selection: give `suite` alone (its tasks run at the suite's precision)")
        return self


class AgentConfig(BaseModel):
    """The configuration every job of the campaign runs with (the job fields but the task)."""

    model_config = ConfigDict(extra="forbid")
    rounds: Rounds = DEFAULT_ROUNDS
    debug: DebugSteps = DEFAULT_DEBUG
    sizes: SizeSet = DEFAULT_SIZES
    models: dict[str, str] = Field(default_factory=dict, max_length=16, description="role (or *) -> model name")
    profile_mode: ProfileMode = DEFAULT_PROFILE_MODE
    profile_token_budget: ProfileTokenBudget = None
    choose_flags: StrictBool | None = None  # strict: 0 or "no" is refused, not read as false
    sanitize: SanitizeMode = DEFAULT_SANITIZE

    @model_validator(mode="after")
    def _models(self) -> AgentConfig:
        check_models(self.models)
        return self

    def job_spec(self, task: str, precision: str) -> dict[str, Any]:
        """The graph.runner.JobSpec fields of one variant's job (never manual: nobody answers a campaign)."""
        return {"task": task, "precision": precision, **self.model_dump(), "manual": False}


class CampaignSubmit(RequestBody):
    model_config = ConfigDict(extra="forbid")
    name: OptionalName = Field("", description="a name for people to read (empty: none); no control or bidirectional-override characters")
    selection: Selection = Selection()
    config: AgentConfig = AgentConfig()
    max_in_flight: StrictInt = Field(4, ge=1, le=256, description="jobs of the campaign queued or running at once")
    max_cost_usd: StrictFloat | None = Field(None, gt=0, le=MAX_COST_USD, description="spending cap in US dollars over all its jobs")
    max_tokens: StrictInt | None = Field(None, gt=0, le=MAX_TOKENS, description="spending cap in tokens (input + output) over all its jobs")


class CampaignResume(RequestBody):
    """Optionally raise (or lift, with null) the caps before resuming a capped campaign."""

    model_config = ConfigDict(extra="forbid")
    max_cost_usd: StrictFloat | None = Field(None, gt=0, le=MAX_COST_USD)
    max_tokens: StrictInt | None = Field(None, gt=0, le=MAX_TOKENS)
    lift_caps: StrictBool = Field(False, description="remove both caps")


class Progress(BaseModel):
    variants: int
    not_started: int
    queued: int
    running: int
    waiting_for_input: int
    finished: int
    no_correct_kernel: int
    cancelled: int
    failed: int
    correct: int = Field(description="variants whose job has a correct kernel")
    cost_usd: float
    tokens: int


class VariantOut(BaseModel):
    task: str
    precision: str
    job_id: str | None
    status: str = Field(description="the job's status, or not_started")
    best_score: float | None
    cost_usd: float
    tokens: int


class CampaignOut(BaseModel):
    id: str
    name: str
    status: CampaignStatus
    message: str
    selection: dict[str, Any]
    config: dict[str, Any]
    max_in_flight: int
    max_cost_usd: float | None
    max_tokens: int | None
    api_key_id: str | None
    team: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    progress: Progress


class CampaignDetail(CampaignOut):
    variants: list[VariantOut]


class CampaignPage(BaseModel):
    items: list[CampaignOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None
