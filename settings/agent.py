"""Agent settings (the `agent` section of the settings tree, settings/tree.py). The job specification is graph.contract.JobSpec.

    CUDAMASTER_AGENT__BASE_URL=https://api.deepseek.com/v1 CUDAMASTER_AGENT__API_KEY=... CUDAMASTER_AGENT__MODEL=deepseek-chat
    CUDAMASTER_AGENT__ROLES__CODER__MODEL=deepseek-reasoner CUDAMASTER_AGENT__ROLES__CODER__STRUCTURED_OUTPUT=json_mode
    CUDAMASTER_AGENT__PRICES='{"my-model": {"input": 1.0, "output": 4.0, "cached_input": 0.25}}'
    CUDAMASTER_CHECKPOINT_URL=postgresql://user@host/db   (the checkpoint store: a root setting, shared with the service)

Each role (planner, coder, compiler, debugger) takes its model, endpoint, key, reasoning effort and
structured-output method from its own block, falling back to the top-level ones. A role with no
endpoint (neither base_url nor api_key, at role or top level) runs in manual mode: the job pauses
and a person answers for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

ROLES = ("planner", "coder", "compiler", "debugger")
Role = Literal["planner", "coder", "compiler", "debugger"]
StructuredMethod = Literal["json_schema", "json_mode", "function_calling", "none"]


class RoleSettings(BaseModel):
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    structured_output: StructuredMethod | None = Field(
        None,
        description="how the compiler role's JSON answer is requested; 'none' asks in the prompt only "
        "(DeepSeek: json_mode; deepseek-reasoner: none)",
    )
    temperature: float | None = None
    timeout_s: float | None = None


class RolesSettings(BaseModel):
    planner: RoleSettings = RoleSettings()
    coder: RoleSettings = RoleSettings()
    compiler: RoleSettings = RoleSettings()
    debugger: RoleSettings = RoleSettings()


class Price(BaseModel):
    """US dollars per 1M tokens. Reasoning tokens are billed as output (they are part of it)."""

    input: float
    output: float
    cached_input: float | None = None  # None: cached input tokens cost the same as input


class TargetGpu(BaseModel):
    name: str = "NVIDIA H200"
    compute_capability: str = "9.0"
    sm_count: int = 132
    l2_mib: int = 60
    memory_bandwidth_tbs: float = 4.8


class RetrySettings(BaseModel):
    """Backoff for transient LLM errors (timeouts, connection errors, 429, 5xx)."""

    max_attempts: int = Field(5, ge=1, le=20)
    initial_interval_s: float = Field(2.0, ge=0)
    backoff_factor: float = Field(2.0, ge=1)
    max_interval_s: float = Field(60.0, ge=0)
    jitter: bool = True


# List prices (USD per 1M tokens) as published by the vendors at the time of writing; override them
# with CUDAMASTER_AGENT__PRICES for your contract. A model missing here is recorded with cost 0 and priced=False.
DEFAULT_PRICES: dict[str, Price] = {
    "o4-mini": Price(input=1.10, output=4.40, cached_input=0.275),
    "o3": Price(input=2.00, output=8.00, cached_input=0.50),
    "gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50),
    "gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10),
    "deepseek-chat": Price(input=0.27, output=1.10, cached_input=0.07),
    "deepseek-reasoner": Price(input=0.55, output=2.19, cached_input=0.14),
}


class AgentSettings(BaseModel):
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "o4-mini"
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    structured_output: StructuredMethod = "none"
    llm_timeout_s: float = 600.0
    roles: RolesSettings = RolesSettings()
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    retry: RetrySettings = RetrySettings()

    state_dir: Path = Path.home() / ".cache" / "cudamaster"
    target: TargetGpu = TargetGpu()
    choose_flags: bool = Field(False, description="ask the compiler role for nvcc flags (from the allowlist) each round")
    recursion_limit: int = 1000
    min_output_tokens: int = Field(
        64,
        ge=1,
        le=1_000_000,
        description="under a spending cap, a call is sent only when what is left allows its prompt and at least this many output tokens",
    )
    max_output_tokens: int = Field(
        8192,
        ge=1,
        le=1_000_000,
        description="under a spending cap, the most output tokens a call is sent with (its `max_tokens`): what the call "
        "reserves of the cap while it is unanswered, and what it is charged when it fails after reaching the endpoint",
    )

    def role(self, role: str, model_override: str | None = None) -> ResolvedRole:
        r: RoleSettings = getattr(self.roles, role)
        return ResolvedRole(
            role=role,
            model=model_override or r.model or self.model,
            base_url=r.base_url or self.base_url,
            api_key=r.api_key or self.api_key,
            reasoning_effort=r.reasoning_effort or self.reasoning_effort,
            structured_output=r.structured_output or self.structured_output,
            temperature=r.temperature,
            timeout_s=r.timeout_s or self.llm_timeout_s,
        )

    def price(self, model: str) -> Price | None:
        return self.prices.get(model)

    def jobs_dir(self) -> Path:
        return self.state_dir / "jobs"


class ResolvedRole(BaseModel):
    role: str
    model: str
    base_url: str | None
    api_key: SecretStr | None
    reasoning_effort: str | None
    structured_output: StructuredMethod
    temperature: float | None
    timeout_s: float

    @property
    def has_endpoint(self) -> bool:
        return self.base_url is not None or self.api_key is not None
