"""The typed contract between the agent (graph), the service (app) and their test doubles.

One set of pydantic models for everything that crosses the boundary: the job spec, the events the
graph emits while a job runs (a union discriminated on `type`), and what they carry: an attempt
with its measurements and profile, an LLM call, a question (manual mode) and the job's outcome.
The graph builds these models and keeps their `model_dump(mode="json")` in its checkpointed state;
the service validates every incoming event through `Event` before storing it; the API's response
models derive from them; tests/service/fake_agent.py and gpu/fake.py build them too, so a
field renamed on one side fails the tests on the other.

The job spec is defined here once: its knobs (`Rounds`, `DebugSteps`, `ProfileTokenBudget` with their
defaults, bounds and help), the literals `Precision`, `SizeSet` and `ProfileMode` (the tasks' and the
profiler's own, re-exported from the layers below) and the statuses (`Status` of a run of the graph,
`JobStatus` of a job in the service). The API's submit body, the campaign config, the CLI options and
the dashboard form derive from them (`knob()` reads a field's default, bounds, choices and help);
tests/test_one_spec.py checks that they agree.

Only pydantic here, the literals of the layers below, the profile's model (gpu/protocol.py, which defines
it for the evaluators) and the sanitizer's verdict (bench_tasks/harness/result.py, pydantic only): no graph, app or harness imports, so both sides import it without cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, TypeAdapter, model_validator

from bench_tasks.harness.result import SanitizerStatus, SanitizerVerdict, sanitizer_status
from bench_tasks.spec import DEFAULT_PRECISION, PRECISIONS, SIZE_SETS, Precision, SizeSet
from gpu.protocol import Profile  # what the GPU side returns; re-exported for the service and the tests
from profiling.modes import DEFAULT_MODE as DEFAULT_PROFILE_MODE
from profiling.modes import MODES as PROFILE_MODES
from profiling.modes import ProfileMode

__all__ = [  # re-exported, with the rest (the two defaults are defined with their literals, for the layers below)
    "DEFAULT_PRECISION",
    "DEFAULT_PROFILE_MODE",
    "PRECISIONS",
    "PROFILE_MODES",
    "SIZE_SETS",
    "Precision",
    "Profile",
    "ProfileMode",
    "SanitizerStatus",
    "SanitizerVerdict",
    "SizeSet",
]  # re-exported, with the rest

# How a run of the graph ended (graph.runner); the service maps these onto its job statuses.
Status = Literal["finished", "no_correct_kernel", "waiting_for_input", "stopped", "failed"]
FINAL_STATUSES: tuple[Status, ...] = ("finished", "no_correct_kernel")  # what the graph's `finish` node sets
# Why a job with a final status ended before the work its spec asked for (None: it did all of it).
StopReason = Literal["spending_cap"]
SPENDING_CAP: StopReason = "spending_cap"
# A job's status in the service (app): queued until a runner leases it, running, then waiting for an answer
# or ended (the graph's final statuses, cancelled by a person, failed). Active ones hold a place in the
# per-key in-flight limit (app.db.models names each).
JobStatus = Literal["queued", "running", "waiting_for_input", "finished", "no_correct_kernel", "cancelled", "failed"]
JOB_STATUSES: tuple[JobStatus, ...] = get_args(JobStatus)
LlmCallStatus = Literal["sent", "paid", "failed", "lost_in_flight"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- the job spec ------------------------------------------------------------------------------------
DEFAULT_ROUNDS = 3
DEFAULT_DEBUG = 3
DEFAULT_SIZES: SizeSet = "paper"
# When compute-sanitizer checks a correct kernel (bench_tasks/harness/sanitize.py): `best` each one that would become the
# job's best (a kernel with findings never does), `every` each correct one, `off` never (no kernel is then checked).
SanitizeMode = Literal["best", "every", "off"]
SANITIZE_MODES: tuple[SanitizeMode, ...] = get_args(SanitizeMode)
DEFAULT_SANITIZE: SanitizeMode = "best"
# Strict: a JSON true, "3" or 3.0 is not a count (issue 40); every body and file that sets one sends an integer.
Rounds = Annotated[StrictInt, Field(ge=1, le=10, description="optimization rounds (R)")]
DebugSteps = Annotated[StrictInt, Field(ge=0, le=10, description="debug steps allowed per round (D)")]
ProfileTokenBudget = Annotated[
    StrictInt | None,
    Field(
        ge=64,
        le=1_000_000,
        description="cut each profile the planner is sent to this many tokens (o200k_base), with a line saying so; none: sent whole",
    ),
]


class SpendingCap(_Model):
    """The most a job may spend on LLM calls: US dollars, tokens (input + output), or both.

    Checked before every LLM call: a call starts only while the spending so far is below each cap and
    a call as large as the largest one so far would stay within it. A job that stops at its cap keeps
    its best kernel and ends `finished` (or `no_correct_kernel`) with `stop_reason: "spending_cap"`.
    Calls to models without a price count 0 dollars: give such jobs a token cap."""

    usd: StrictFloat | None = Field(None, gt=0, allow_inf_nan=False, le=1e9, description="US dollars over all LLM calls")
    tokens: StrictInt | None = Field(None, gt=0, le=10**12, description="input + output tokens over all LLM calls")

    @model_validator(mode="after")
    def _some_cap(self) -> SpendingCap:
        if self.usd is None and self.tokens is None:
            raise ValueError("a spending cap needs `usd` (dollars), `tokens` (input + output tokens) or both")
        return self


class JobSpec(_Model):
    """What one optimization job does. R and D are the paper's knobs (R=1, D=0 are its ablations)."""

    task: str
    precision: str = Field(description=f"the kernel's precision: {' or '.join(PRECISIONS)}")  # a task's variant (checked at start)
    rounds: Rounds = DEFAULT_ROUNDS
    debug: DebugSteps = DEFAULT_DEBUG
    sizes: str = Field(DEFAULT_SIZES, description=f"size set: {', '.join(SIZE_SETS)}")  # SizeSet, checked against the task at start
    models: dict[str, str] = Field(default_factory=dict, description="role -> model; key '*' for every role")
    manual: bool = False
    replay_file: str | None = None
    profile_mode: ProfileMode = Field(DEFAULT_PROFILE_MODE, description="the profile the planner is sent")
    profile_token_budget: ProfileTokenBudget = None
    choose_flags: bool | None = Field(None, description="let the compiler role choose nvcc flags; default: the settings' choose_flags")
    spending_cap: SpendingCap | None = None
    sanitize: SanitizeMode = Field(
        DEFAULT_SANITIZE,
        description="compute-sanitizer on correct kernels: best (each that would become the best: only a kernel "
        "without findings does), every (each correct one), off",
    )

    def model_for(self, role: str) -> str | None:
        return self.models.get(role) or self.models.get("*")


@dataclass(frozen=True)
class Knob:
    """One job spec field as a form or a command line option shows it: default, bounds, choices, help."""

    default: Any
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()
    help: str = ""


_CHOICES: dict[str, tuple[str, ...]] = {
    "precision": PRECISIONS,
    "sizes": SIZE_SETS,
    "profile_mode": PROFILE_MODES,
    "sanitize": SANITIZE_MODES,
}


def knob(name: str) -> Knob:
    """JobSpec's field `name` as a Knob (the CLI's options and the dashboard's form are built from it)."""
    field = JobSpec.model_fields[name]
    low = next((int(m.ge) for m in field.metadata if isinstance(m, annotated_types.Ge)), None)  # type: ignore[call-overload]
    high = next((int(m.le) for m in field.metadata if isinstance(m, annotated_types.Le)), None)  # type: ignore[call-overload]
    default = DEFAULT_PRECISION if name == "precision" else field.get_default(call_default_factory=True)
    return Knob(default, low, high, _CHOICES.get(name, ()), field.description or "")


# -- what a job produces -------------------------------------------------------------------------------
class Measurement(_Model):
    """One size of one evaluated attempt (a row of the harness's EvaluationResult, flattened)."""

    size_index: int
    params: dict[str, Any]
    passed: bool
    baseline_median_us: float | None = None
    baseline_iqr_us: float | None = None
    candidate_median_us: float | None = None
    candidate_iqr_us: float | None = None
    speedup: float | None = None
    speedup_iqr: float | None = None
    roofline_floor_us: float | None = None
    candidate_roofline_pct: float | None = None

    @classmethod
    def from_row(cls, index: int, row: dict[str, Any]) -> Measurement:
        base, cand = row.get("baseline") or {}, row.get("candidate") or {}
        return cls(
            size_index=index,
            params=row.get("params") or {},
            passed=bool(row.get("passed")),
            baseline_median_us=base.get("median_us"),
            baseline_iqr_us=base.get("iqr_us"),
            candidate_median_us=cand.get("median_us"),
            candidate_iqr_us=cand.get("iqr_us"),
            speedup=row.get("speedup"),
            speedup_iqr=row.get("speedup_iqr"),
            roofline_floor_us=row.get("roofline_floor_us"),
            candidate_roofline_pct=row.get("candidate_roofline_pct"),
        )


class Attempt(_Model):
    """One kernel source at (round, debug step) with its final verdict."""

    attempt_id: str = Field(min_length=1, max_length=160)
    job_id: str
    round: int
    debug_step: int = 0
    role: str = "coder"
    strategy: str = ""
    source: str = ""
    flags: list[str] = Field(default_factory=list)
    compile_log: str = ""
    verdict: str
    message: str = ""
    score: float | None = None
    evaluation: dict[str, Any] | None = Field(None, description="the harness's EvaluationResult as JSON")
    profile: Profile | None = None
    sanitizer: list[SanitizerVerdict] = Field(
        default_factory=list, description="compute-sanitizer's verdicts, one per tool; empty: the kernel was not sanitized"
    )

    @property
    def sanitizer_status(self) -> SanitizerStatus | None:
        """clean | findings | not_run; None when the kernel was not sanitized (bench_tasks.harness.result.sanitizer_status)."""
        return sanitizer_status(self.sanitizer)

    def measurements(self) -> list[Measurement]:
        return [Measurement.from_row(i, row) for i, row in enumerate((self.evaluation or {}).get("rows") or [])]


class LlmCall(_Model):
    """One LLM call of a job: who asked which model, what it cost, and the response (replay feeds it back)."""

    call_id: str = Field(min_length=1, max_length=160)
    job_id: str
    round: int = 0
    debug_step: int = 0
    role: str
    model: str
    mode: Literal["endpoint", "manual", "replay"] = "endpoint"
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    reasoning_tokens: int = Field(0, ge=0)
    cached_tokens: int = Field(0, ge=0)
    latency_s: float = Field(0.0, ge=0)
    cost_usd: float = Field(0.0, ge=0)
    priced: bool = True
    response: str = ""
    note: str = ""
    # The ledger (graph/llm.py records a call `sent` before it goes out, then `paid` or `failed`;
    # the service marks calls still `sent` when their process died `lost_in_flight`).
    status: LlmCallStatus = "paid"
    send_id: str = Field("", max_length=64, description="the id of one request; a call sent again after a crash is a new request")
    message: str = Field("", description="why a `failed` call failed")
    # What the profile cost in a planner call's prompt (the campaigns' "tokens sent per profile mode").
    profile_mode: ProfileMode | None = None
    profile_tokens: int = Field(0, ge=0)


class Totals(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0
    unpriced_models: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, calls: list[LlmCall] | list[dict[str, Any]]) -> Totals:
        calls = [c if isinstance(c, LlmCall) else LlmCall.model_validate(c) for c in calls]
        return cls(
            input_tokens=sum(c.input_tokens for c in calls),
            output_tokens=sum(c.output_tokens for c in calls),
            reasoning_tokens=sum(c.reasoning_tokens for c in calls),
            cached_tokens=sum(c.cached_tokens for c in calls),
            cost_usd=round(sum(c.cost_usd for c in calls), 8),
            llm_calls=len(calls),
            unpriced_models=sorted({c.model for c in calls if not c.priced}),
        )


class RoundSummary(_Model):
    round: int
    strategy: str = ""
    strategy_title: str = ""
    verdict: str
    message: str = ""
    score: float | None = None
    attempt_id: str | None = None
    debug_steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Question(_Model):
    """What a job in manual mode (or without an LLM endpoint) waits on: one LLM call a person answers.
    An answer is bound to `question_id`: it is fed to this question only, never to a later one."""

    type: Literal["llm_request"] = "llm_request"
    question_id: str = Field(max_length=160, description="the id of the LLM call this question stands for; answers name it")
    role: str
    round: int = 0
    debug_step: int = 0
    question: str
    system: str = ""
    prompt: str = ""


class Answer(_Model):
    """A person's answer to one question (manual mode). It answers `question_id` only: a job waiting on
    another question (it moved on, or was cancelled and resumed) keeps waiting. None: the question
    pending now (the command line answers interactively, right after it printed the question)."""

    question_id: str | None
    text: str


class Outcome(_Model):
    """How a run of a job ended, with everything the job recorded so far."""

    job_id: str
    status: Status
    stop_reason: StopReason | None = None
    best: Attempt | None = None  # the best correct attempt (with its evaluation), or None
    attempts: list[Attempt] = Field(default_factory=list)
    llm_calls: list[LlmCall] = Field(default_factory=list)
    rounds: list[RoundSummary] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    question: Question | None = None  # the pending question when waiting_for_input
    message: str = ""


# -- events ------------------------------------------------------------------------------------------
class NodeEvent(_Model):
    """A graph node finished a step (progress)."""

    type: Literal["node"] = "node"
    job_id: str
    round: int = 0
    node: str
    verdict: str | None = None
    speedup: float | None = None


class AttemptEvent(Attempt):
    type: Literal["attempt"] = "attempt"
    node: str = ""


class LlmCallEvent(LlmCall):
    type: Literal["llm_call"] = "llm_call"
    node: str = ""


class ProfileEvent(Profile):
    """A profile taken (`sent` False: of the round's kernel, or the baseline's) or the one the next planner
    is sent (`sent` True: cut to the job's token budget, with its tokens). The service stores an attempt's
    profile (`profiles` table) from it; the baseline's has `of` == "baseline" and no `attempt_id`."""

    type: Literal["profile"] = "profile"
    job_id: str
    node: str = "profile"
    of: str
    sent: bool = False
    attempt_id: str | None = None

    def profile(self) -> Profile:
        return Profile.model_validate(self.model_dump(include=set(Profile.model_fields)))


class InterruptEvent(_Model):
    """The job paused for a person's answer."""

    type: Literal["interrupt"] = "interrupt"
    job_id: str
    round: int = 0
    node: str = ""
    interrupt_id: str = ""
    question: Question


class FinishedEvent(_Model):
    """A run of the job ended (any status: finished, waiting, stopped, failed)."""

    type: Literal["finished"] = "finished"
    job_id: str
    round: int = 0
    node: str = ""
    status: Status
    stop_reason: StopReason | None = None
    message: str = ""
    best_attempt_id: str | None = None
    speedup: float | None = None
    totals: Totals = Field(default_factory=Totals)


EVENT_MODELS = (NodeEvent, AttemptEvent, LlmCallEvent, ProfileEvent, InterruptEvent, FinishedEvent)
AnyEvent = NodeEvent | AttemptEvent | LlmCallEvent | ProfileEvent | InterruptEvent | FinishedEvent
Event = Annotated[AnyEvent, Field(discriminator="type")]
EVENT_TYPES: tuple[str, ...] = tuple(m.model_fields["type"].default for m in EVENT_MODELS)
event_adapter: TypeAdapter[Any] = TypeAdapter(Event)


def parse_event(data: dict[str, Any] | BaseModel) -> AnyEvent:
    """A dict (or a model) -> the matching event model; raises pydantic.ValidationError on anything else."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    event: AnyEvent = event_adapter.validate_python(data)
    return event
