"""The service's tables: jobs and what they produced (attempts, measurements, profiles, LLM calls,
events), API keys and stored custom tasks. Alembic migrations in migrations/versions build exactly
this schema; tests/service/test_migrations.py checks that on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Final

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from graph.contract import DEFAULT_PROFILE_MODE, JOB_STATUSES, JobStatus

from .types import UTCDateTime, utcnow

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime(), dict[str, Any]: JSON(), list[Any]: JSON()}


# Job statuses (graph.contract.JobStatus, named). Active ones hold a place in the per-key in-flight limit.
QUEUED: Final[JobStatus] = "queued"
RUNNING: Final[JobStatus] = "running"
WAITING: Final[JobStatus] = "waiting_for_input"
FINISHED: Final[JobStatus] = "finished"
NO_CORRECT: Final[JobStatus] = "no_correct_kernel"
CANCELLED: Final[JobStatus] = "cancelled"
FAILED: Final[JobStatus] = "failed"
ACTIVE_STATUSES: tuple[JobStatus, ...] = (QUEUED, RUNNING, WAITING)
TERMINAL_STATUSES: tuple[JobStatus, ...] = (FINISHED, NO_CORRECT, CANCELLED, FAILED)
ALL_STATUSES: tuple[JobStatus, ...] = JOB_STATUSES  # ACTIVE_STATUSES + TERMINAL_STATUSES, in that order


# An LLM call's record: stored `sent` before the request, `paid` with its tokens after it, `failed` when the
# endpoint answered an error; a `sent` call whose process died is `lost_in_flight` (its estimated input
# cost counted, a lower bound: it was probably paid).
LLM_SENT, LLM_PAID, LLM_FAILED, LLM_LOST = "sent", "paid", "failed", "lost_in_flight"
LLM_CALL_STATUSES = (LLM_SENT, LLM_PAID, LLM_FAILED, LLM_LOST)


# Key roles (app/permissions.py says what each may do) and the team a key belongs to by default.
ADMIN, MEMBER, REVIEWER, VIEWER = "admin", "member", "reviewer", "viewer"
ROLES = (ADMIN, MEMBER, REVIEWER, VIEWER)
DEFAULT_TEAM = "default"


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # the public prefix of the key
    name: Mapped[str] = mapped_column(String(128))
    key_hash: Mapped[str] = mapped_column(String(64))  # sha256 hex of the whole key
    role: Mapped[str] = mapped_column(String(16), default=MEMBER, server_default=MEMBER)
    team: Mapped[str] = mapped_column(String(64), default=DEFAULT_TEAM, server_default=DEFAULT_TEAM, index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]
    # Written at each submission, first thing in its transaction: the row lock that makes the per-key
    # in-flight limit atomic (app/limits.py), and a "last used" date for `keys list`.
    last_submit_at: Mapped[datetime | None]


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_created_at", "status", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task: Mapped[str] = mapped_column(String(128), index=True)
    precision: Mapped[str] = mapped_column(String(8))
    settings: Mapped[dict[str, Any]]  # the agent's JobSpec, as submitted
    status: Mapped[str] = mapped_column(String(24), default=QUEUED)
    message: Mapped[str] = mapped_column(Text, default="")
    api_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    team: Mapped[str] = mapped_column(String(64), default=DEFAULT_TEAM, server_default=DEFAULT_TEAM, index=True)  # the submitting key's

    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    # Totals, kept current as events arrive.
    attempts_count: Mapped[int] = mapped_column(Integer, default=0)
    llm_calls_count: Mapped[int] = mapped_column(Integer, default=0)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    reasoning_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cached_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    llm_latency_s: Mapped[float] = mapped_column(Float, default=0.0)

    # The best attempt so far (highest score among correct ones).
    best_attempt_id: Mapped[int | None] = mapped_column(
        ForeignKey("attempts.id", ondelete="SET NULL", use_alter=True, name="fk_jobs_best_attempt_id_attempts")
    )
    best_score: Mapped[float | None] = mapped_column(Float)

    # One runner holds a running job; the holder renews the lease while it works.
    lease_holder: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None]
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    question: Mapped[dict[str, Any] | None]  # what a manual-mode job is waiting for
    pending_answer: Mapped[str | None] = mapped_column(Text)  # answer handed to the agent on its next run
    answer_for: Mapped[str | None] = mapped_column(String(200))  # the question id pending_answer answers
    stop_reason: Mapped[str | None] = mapped_column(String(32))  # graph.contract.StopReason of a finished job

    attempts: Mapped[list[Attempt]] = relationship(
        back_populates="job",
        foreign_keys="Attempt.job_id",
        order_by="[Attempt.round, Attempt.debug_step, Attempt.id]",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )
    llm_calls: Mapped[list[LlmCall]] = relationship(
        back_populates="job", order_by="LlmCall.id", cascade="all, delete-orphan", passive_deletes=True
    )


class Attempt(Base):
    __tablename__ = "attempts"
    __table_args__ = (UniqueConstraint("job_id", "attempt_key", name="uq_attempts_job_id_attempt_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    attempt_key: Mapped[str] = mapped_column(String(160))  # the agent's deterministic attempt id
    round: Mapped[int] = mapped_column(Integer, default=0)
    debug_step: Mapped[int] = mapped_column(Integer, default=0)
    role: Mapped[str] = mapped_column(String(32), default="")
    strategy: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(Text, default="")
    source_sha256: Mapped[str] = mapped_column(String(64), default="")
    flags: Mapped[list[Any]] = mapped_column(default=list)
    compile_log: Mapped[str] = mapped_column(Text, default="")
    verdict: Mapped[str] = mapped_column(String(32), default="")
    message: Mapped[str] = mapped_column(Text, default="")
    score: Mapped[float | None] = mapped_column(Float)
    evaluation: Mapped[dict[str, Any] | None]  # EvaluationResult JSON
    # The GPU model it was measured on (nvidia-smi's name; None: not measured). A job's attempts share one
    # model (gpu/ray pins a job to the model of its first measurement); speedups of different models
    # are never compared.
    gpu_model: Mapped[str | None] = mapped_column(String(128), index=True)
    # compute-sanitizer's verdicts (graph.contract.Attempt.sanitizer: one per tool) and the kernel's standing from them
    # (clean | findings | not_run; None: not sanitized), kept apart for the leaderboard's filter.
    sanitizer: Mapped[list[Any] | None]
    sanitizer_status: Mapped[str | None] = mapped_column(String(16), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    job: Mapped[Job] = relationship(back_populates="attempts", foreign_keys=[job_id])
    measurements: Mapped[list[Measurement]] = relationship(
        back_populates="attempt", order_by="Measurement.size_index", cascade="all, delete-orphan", passive_deletes=True
    )
    profile: Mapped[Profile | None] = relationship(back_populates="attempt", cascade="all, delete-orphan", passive_deletes=True)


class Measurement(Base):
    """One size of one evaluated attempt."""

    __tablename__ = "measurements"
    __table_args__ = (UniqueConstraint("attempt_id", "size_index", name="uq_measurements_attempt_id_size_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"), index=True)
    size_index: Mapped[int] = mapped_column(Integer)
    params: Mapped[dict[str, Any]]
    passed: Mapped[bool] = mapped_column(Boolean, default=False)
    baseline_median_us: Mapped[float | None] = mapped_column(Float)
    baseline_iqr_us: Mapped[float | None] = mapped_column(Float)
    candidate_median_us: Mapped[float | None] = mapped_column(Float)
    candidate_iqr_us: Mapped[float | None] = mapped_column(Float)
    speedup: Mapped[float | None] = mapped_column(Float)
    speedup_iqr: Mapped[float | None] = mapped_column(Float)
    roofline_floor_us: Mapped[float | None] = mapped_column(Float)
    candidate_roofline_pct: Mapped[float | None] = mapped_column(Float)
    gpu_model: Mapped[str | None] = mapped_column(String(128), index=True)  # as its attempt's: leaderboards group by it

    attempt: Mapped[Attempt] = relationship(back_populates="measurements")


class Profile(Base):
    __tablename__ = "profiles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"), unique=True)
    bottleneck_class: Mapped[str] = mapped_column(String(64), default="")
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    text: Mapped[str] = mapped_column(Text, default="")  # the filtered profile the agent saw
    mode: Mapped[str] = mapped_column(String(16), default=DEFAULT_PROFILE_MODE, server_default=DEFAULT_PROFILE_MODE)
    tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    note: Mapped[str | None] = mapped_column(Text, default="")  # None: stored before notes were
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    attempt: Mapped[Attempt] = relationship(back_populates="profile")


class LlmCall(Base):
    __tablename__ = "llm_calls"
    __table_args__ = (UniqueConstraint("job_id", "call_key", name="uq_llm_calls_job_id_call_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    call_key: Mapped[str] = mapped_column(String(160))  # the agent's call id (#send id: one row per request sent)
    status: Mapped[str] = mapped_column(String(16), default=LLM_PAID, server_default=LLM_PAID)
    round: Mapped[int | None] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(32), default="")
    model: Mapped[str] = mapped_column(String(128), default="")
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    reasoning_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    job: Mapped[Job] = relationship(back_populates="llm_calls")


class JobEvent(Base):
    """The agent's progress events, in order; the SSE stream replays them (Last-Event-ID = id)."""

    __tablename__ = "job_events"
    __table_args__ = (UniqueConstraint("job_id", "dedupe_key", name="uq_job_events_job_id_dedupe_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(32))
    dedupe_key: Mapped[str | None] = mapped_column(String(200))  # set for events that must appear once
    payload: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CustomTask(Base):
    """A team's own kernel submitted as a task; its oracle is its baseline's output (app/custom_tasks.py)."""

    __tablename__ = "custom_tasks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    api_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    precision: Mapped[str] = mapped_column(String(8))
    spec: Mapped[dict[str, Any]]  # prototype, args, sizes
    baseline_source: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class StoredPyTorchTask(Base):
    """A PyTorch reference submitted as a task (app/pytorch_tasks.py): its text and what its sandboxed run reported
    (bench_tasks/pytorch/record.py: shapes, dtypes, constants, counted FLOPs; the float64 references as an .npz), from
    which every process rebuilds the task without running the reference."""

    __tablename__ = "pytorch_tasks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    api_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    name: Mapped[str] = mapped_column(String(128))  # the submitter's label
    precision: Mapped[str] = mapped_column(String(8))
    reference_py: Mapped[str] = mapped_column(Text)
    probe: Mapped[dict[str, Any]]  # bench_tasks.pytorch.record.probe_meta
    reference_arrays: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)  # probe_arrays; read only when asked for
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Suite(Base):
    """A folder of PyTorch references stored as tasks (app/suites.py): the tasks made, in the folder's order
    (suite_tasks), and the references refused with their reasons. Private to its key, like its tasks."""

    __tablename__ = "suites"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    api_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    precision: Mapped[str] = mapped_column(String(8))
    refused: Mapped[list[Any]] = mapped_column(default=list)  # [{"name", "reason"}], in the folder's order
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SuiteTask(Base):
    __tablename__ = "suite_tasks"

    suite_id: Mapped[str] = mapped_column(ForeignKey("suites.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("pytorch_tasks.id", ondelete="CASCADE"), index=True)


# Review of a flagged attempt (app/reviews.py): pending until a reviewer accepts or rejects it. The
# leaderboard counts an attempt only when it has no review row or an accepted one.
PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
REVIEW_STATUSES = (PENDING, ACCEPTED, REJECTED)


class Review(Base):
    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"), unique=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=PENDING, index=True)
    reasons: Mapped[list[Any]] = mapped_column(default=list)  # why the attempt was flagged, one line each
    flagged_at: Mapped[datetime] = mapped_column(default=utcnow)
    reviewer_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    decided_at: Mapped[datetime | None]
    note: Mapped[str] = mapped_column(Text, default="")

    attempt: Mapped[Attempt] = relationship()
    job: Mapped[Job] = relationship()


class ServiceSecret(Base):
    """Secrets the service generates once and shares between its replicas (the dashboard's cookie key)."""

    __tablename__ = "service_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class DashboardSession(Base):
    """A dashboard sign-in (app/web/session.py): the cookie names its row, by a token whose sha256 is the id.
    Logout deletes the row, so a replayed cookie is signed out; revoking the key ends all of its sessions."""

    __tablename__ = "dashboard_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 hex of the cookie's session token
    api_key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(index=True)


# Campaign statuses (app/campaigns): running until every variant's job has ended (finished), or until
# cancelled, or until its spending cap is reached (capped); cancelled and capped campaigns resume.
CAMPAIGN_RUNNING, CAMPAIGN_FINISHED, CAMPAIGN_CANCELLED, CAMPAIGN_CAPPED = "running", "finished", "cancelled", "capped"
CAMPAIGN_STATUSES = (CAMPAIGN_RUNNING, CAMPAIGN_FINISHED, CAMPAIGN_CANCELLED, CAMPAIGN_CAPPED)


class Campaign(Base):
    """One agent configuration over a set of variants: one job per variant, `max_in_flight` at a time."""

    __tablename__ = "campaigns"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(128), default="")
    selection: Mapped[dict[str, Any]]  # how the variants were chosen (all, category, precision, list)
    config: Mapped[dict[str, Any]]  # the agent settings every job gets (JobSpec fields but task and precision)
    max_in_flight: Mapped[int] = mapped_column(Integer, default=4)
    max_cost_usd: Mapped[float | None] = mapped_column(Float)
    max_tokens: Mapped[int | None] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(24), default=CAMPAIGN_RUNNING, index=True)
    message: Mapped[str] = mapped_column(Text, default="")
    api_key_id: Mapped[str | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"), index=True)
    team: Mapped[str] = mapped_column(String(64), default=DEFAULT_TEAM, server_default=DEFAULT_TEAM, index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]

    variants: Mapped[list[CampaignVariant]] = relationship(
        back_populates="campaign", order_by="CampaignVariant.position", cascade="all, delete-orphan", passive_deletes=True
    )


class CampaignVariant(Base):
    """A variant of a campaign and the job that runs it (none until the campaign starts it; set once,
    in the transaction that creates the job, so no variant ever gets two jobs)."""

    __tablename__ = "campaign_variants"
    __table_args__ = (UniqueConstraint("campaign_id", "task", "precision", name="uq_campaign_variants_campaign_id_task"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[str] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    task: Mapped[str] = mapped_column(String(128))
    precision: Mapped[str] = mapped_column(String(8))
    job_id: Mapped[str | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"), unique=True)
    resume_requested: Mapped[bool] = mapped_column(Boolean, default=False)  # the campaign's resume re-queues this job

    campaign: Mapped[Campaign] = relationship(back_populates="variants")
    job: Mapped[Job | None] = relationship()
