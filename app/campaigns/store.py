"""Campaigns in the database: create, the scheduler's tick, cancel, resume, progress.

Every change to a campaign's jobs happens in a transaction that first locks the campaign's row (an
UPDATE: a row lock on PostgreSQL, the write lock on SQLite), so two schedulers (two replicas, or a
restarted one) never start more than `max_in_flight` jobs, and a variant's job is created and linked
in one commit: after a kill -9 a variant has its job or has none, never two.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, selectinload

from bench_tasks import TaskError, all_tasks, load_task
from bench_tasks.spec import Task

from .. import permissions, stored_tasks, suites
from ..bounds import is_stored_task_id
from ..db.models import (
    ACTIVE_STATUSES,
    CAMPAIGN_CANCELLED,
    CAMPAIGN_CAPPED,
    CAMPAIGN_FINISHED,
    CAMPAIGN_RUNNING,
    CANCELLED,
    FAILED,
    RUNNING,
    TERMINAL_STATUSES,
    Campaign,
    CampaignVariant,
    Job,
)
from ..db.types import utcnow
from ..limits import InFlightLimit, take_job_slot
from ..permissions import Caller
from ..store import jobs as job_store
from .schemas import AgentConfig, CampaignResume, CampaignSubmit, Progress, Selection, VariantOut

NOT_STARTED = "not_started"
RESUMABLE_JOB_STATUSES = (CANCELLED, FAILED)


class CampaignInvalid(ValueError):
    """A selection or configuration that cannot make a campaign; the message says what to change."""


class CampaignStateError(Exception):
    """The campaign is not in a state that allows this; the message says what is possible."""


def new_campaign_id() -> str:
    return "cmp_" + secrets.token_hex(8)


def resolve_variants(selection: Selection, session: Session | None = None, caller: Caller | None = None) -> list[tuple[str, str]]:
    """(task, precision) pairs, in task order then precision order. A listed variant may name a stored task of the
    caller's key (`ct_…/fp32`, a PyTorch reference `pt_…/fp32`): it is rebuilt from its row (app/stored_tasks.py).
    A suite of the caller's key is its tasks, each at the suite's precision, through the same check."""
    if selection.suite is not None:
        return _suite_variants(session, caller, selection.suite)
    if selection.variants is not None:
        out: list[tuple[str, str]] = []
        for name in selection.variants:
            task, _, precision = name.partition("/")
            if not precision:
                raise CampaignInvalid(f"variant {name[:100]!r}: write TASK/PRECISION, e.g. vector_add/fp32")
            try:
                _variant_task(session, caller, task).variant(precision)
            except (TaskError, stored_tasks.StoredTaskInvalid) as exc:
                raise CampaignInvalid(f"variant {name[:100]!r}: {exc}") from None
            if (task, precision) in out:
                raise CampaignInvalid(f"variant {name!r} is listed twice")
            out.append((task, precision))
        return out
    tasks = all_tasks()
    if selection.category is not None and selection.category not in {t.category for t in tasks}:
        known = ", ".join(sorted({t.category for t in tasks}))
        raise CampaignInvalid(f"no category {selection.category!r}: choose one of {known}")
    out = [(t.name, p) for t in tasks if selection.category in (None, t.category) for p in t.prototypes if selection.precision in (None, p)]
    if not out:
        raise CampaignInvalid("the selection holds no variant: widen the category or the precision")
    return out


def _suite_variants(session: Session | None, caller: Caller | None, suite_id: str) -> list[tuple[str, str]]:
    suite = suites.get(session, suite_id) if session is not None else None
    if suite is None or caller is None or not permissions.can_use_custom_task(caller, suite):
        who = caller.label if caller else "this key"
        raise CampaignInvalid(f"no suite {suite_id} made by {who}: a suite is private to its key (GET /api/v1/suites lists yours)")
    assert session is not None
    names = [f"{task_id}/{suite.precision}" for task_id in suites.task_ids(session, suite.id)]
    if not names:
        raise CampaignInvalid(f"suite {suite_id} holds no task (every reference was refused: GET /api/v1/suites/{suite_id} says why)")
    return resolve_variants(Selection(variants=names), session, caller)


def _variant_task(session: Session | None, caller: Caller | None, task: str) -> Task:
    """A benchmark task, or a stored task of the caller's key (the same answer for another key's as for none)."""
    if not is_stored_task_id(task):
        return load_task(task)
    row = stored_tasks.row_of(session, task) if session is not None else None
    if row is None or caller is None or not permissions.can_use_custom_task(caller, row):
        raise TaskError(
            f"no stored task {task} created by {caller.label if caller else 'this key'}: a custom task or PyTorch reference "
            "is private to the key that submitted it (its id is the `task` of the job that submitted it)"
        )
    return stored_tasks.register(row)


def create_campaign(session: Session, body: CampaignSubmit, caller: Caller) -> Campaign:
    variants = resolve_variants(body.selection, session, caller)
    now = utcnow()
    campaign = Campaign(
        id=new_campaign_id(),
        name=body.name,
        selection=body.selection.model_dump(exclude_none=True),
        config=body.config.model_dump(),
        max_in_flight=body.max_in_flight,
        max_cost_usd=body.max_cost_usd,
        max_tokens=body.max_tokens,
        status=CAMPAIGN_RUNNING,
        message=f"{len(variants)} variants; starting",
        api_key_id=caller.key_id,
        team=caller.team,
        created_at=now,
        updated_at=now,
    )
    session.add(campaign)
    for i, (task, precision) in enumerate(variants):
        session.add(CampaignVariant(campaign_id=campaign.id, position=i, task=task, precision=precision, resume_requested=False))
    session.commit()
    return campaign


def get_campaign(session: Session, campaign_id: str) -> Campaign | None:
    return session.get(Campaign, campaign_id)


def list_campaigns(session: Session, *, team: str | None, status: str | None, limit: int, offset: int) -> tuple[list[Campaign], int]:
    query, count = select(Campaign), select(func.count(Campaign.id))
    if team is not None:
        query, count = query.where(Campaign.team == team), count.where(Campaign.team == team)
    if status is not None:
        query, count = query.where(Campaign.status == status), count.where(Campaign.status == status)
    rows = session.scalars(query.order_by(Campaign.created_at.desc(), Campaign.id.desc()).limit(limit).offset(offset)).all()
    return list(rows), session.scalar(count) or 0


def _variants_with_jobs(session: Session, campaign_id: str) -> list[CampaignVariant]:
    return list(
        session.scalars(
            select(CampaignVariant)
            .where(CampaignVariant.campaign_id == campaign_id)
            .options(selectinload(CampaignVariant.job))
            .order_by(CampaignVariant.position)
            .execution_options(populate_existing=True)
        )
    )


def _tokens(job: Job) -> int:
    return int(job.input_tokens or 0) + int(job.output_tokens or 0)


@dataclass
class Snapshot:
    variants: list[CampaignVariant]
    statuses: Counter = field(default_factory=Counter)
    cost_usd: float = 0.0
    tokens: int = 0
    correct: int = 0

    @classmethod
    def of(cls, variants: list[CampaignVariant]) -> Snapshot:
        snap = cls(variants)
        for v in variants:
            job = v.job
            snap.statuses[job.status if job is not None else NOT_STARTED] += 1
            if job is not None:
                snap.cost_usd += float(job.cost_usd or 0.0)
                snap.tokens += _tokens(job)
                snap.correct += job.best_score is not None
        return snap

    @property
    def in_flight(self) -> int:
        return sum(self.statuses[s] for s in ACTIVE_STATUSES)


def snapshot(session: Session, campaign_id: str) -> Snapshot:
    return Snapshot.of(_variants_with_jobs(session, campaign_id))


def progress(snap: Snapshot) -> Progress:
    s = snap.statuses
    return Progress(
        variants=len(snap.variants),
        not_started=s[NOT_STARTED],
        queued=s["queued"],
        running=s["running"],
        waiting_for_input=s["waiting_for_input"],
        finished=s["finished"],
        no_correct_kernel=s["no_correct_kernel"],
        cancelled=s["cancelled"],
        failed=s["failed"],
        correct=snap.correct,
        cost_usd=round(snap.cost_usd, 8),
        tokens=snap.tokens,
    )


def variant_rows(snap: Snapshot) -> list[VariantOut]:
    return [
        VariantOut(
            task=v.task,
            precision=v.precision,
            job_id=v.job_id,
            status=v.job.status if v.job else NOT_STARTED,
            best_score=v.job.best_score if v.job else None,
            cost_usd=float(v.job.cost_usd or 0.0) if v.job else 0.0,
            tokens=_tokens(v.job) if v.job else 0,
        )
        for v in snap.variants
    ]


def cap_reached(campaign: Campaign, snap: Snapshot) -> str | None:
    """Why the spending cap stops the campaign, or None."""
    if campaign.max_cost_usd is not None and snap.cost_usd >= campaign.max_cost_usd:
        return f"spent ${snap.cost_usd:.4f} of its ${campaign.max_cost_usd:.4f} cap"
    if campaign.max_tokens is not None and snap.tokens >= campaign.max_tokens:
        return f"used {snap.tokens} of its {campaign.max_tokens} token cap"
    return None


def _lock(session: Session, campaign_id: str, *statuses: str) -> Campaign | None:
    """Take the campaign's lock for this transaction; None when it is not in one of `statuses`."""
    result = session.execute(update(Campaign).where(Campaign.id == campaign_id, Campaign.status.in_(statuses)).values(updated_at=utcnow()))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        return None
    campaign = session.get(Campaign, campaign_id)
    session.refresh(campaign)
    return campaign


def _stop_active(session: Session, snap: Snapshot) -> list[str]:
    """Cancel the campaign's active jobs (queued ones at once, running ones at their next step); no commit."""
    stopping = []
    now = utcnow()
    for v in snap.variants:
        job = v.job
        v.resume_requested = False
        if job is None or job.status not in ACTIVE_STATUSES:
            continue
        if job.status == RUNNING:
            job.cancel_requested, job.message = True, "campaign stopped; stopping at the next step"
        else:
            job.status, job.message, job.finished_at, job.cancel_requested = CANCELLED, "campaign stopped before it ran", now, False
        job.updated_at = now
        stopping.append(job.id)
    return stopping


@dataclass
class TickResult:
    started: list[str] = field(default_factory=list)  # job ids queued by this tick (new or resumed)
    stopping: list[str] = field(default_factory=list)  # job ids the runner should stop now
    status: str | None = None


def tick(session: Session, campaign_id: str, key_limit: int) -> TickResult:
    """One scheduling step of a running campaign: stop it at its cap, start jobs up to `max_in_flight`
    (and the key's in-flight limit), mark it finished when every variant's job has ended."""
    out = TickResult()
    while True:
        campaign = _lock(session, campaign_id, CAMPAIGN_RUNNING)
        if campaign is None:
            return out
        snap = snapshot(session, campaign_id)
        why = cap_reached(campaign, snap)
        if why is not None:
            out.stopping = _stop_active(session, snap)
            campaign.status, campaign.finished_at = CAMPAIGN_CAPPED, utcnow()
            campaign.message = (
                f"capped: {why}; no new job starts and its {len(out.stopping)} active job(s) were cancelled. "
                f"Raise the cap to continue: POST /api/v1/campaigns/{campaign_id}/resume with max_cost_usd "
                "or max_tokens (or lift_caps)"
            )
            session.commit()
            out.status = campaign.status
            return out
        todo = [v for v in snap.variants if v.job is None or (v.resume_requested and v.job.status in RESUMABLE_JOB_STATUSES)]
        for v in snap.variants:  # a resume already done (e.g. by hand through the jobs API)
            if v.resume_requested and v.job is not None and v.job.status not in RESUMABLE_JOB_STATUSES:
                v.resume_requested = False
        if not todo:
            if all(v.job is not None and v.job.status in TERMINAL_STATUSES for v in snap.variants):
                counts = ", ".join(f"{n} {s}" for s, n in sorted(snap.statuses.items()))
                campaign.status, campaign.finished_at = CAMPAIGN_FINISHED, utcnow()
                campaign.message = f"every variant's job has ended: {counts}"
                out.status = campaign.status
            session.commit()
            return out
        if snap.in_flight >= campaign.max_in_flight:
            session.commit()
            return out
        v = todo[0]
        if campaign.api_key_id is not None:
            try:  # the key's lock, after the campaign's: the jobs API takes the key's alone
                take_job_slot(session, campaign.api_key_id, key_limit)
            except InFlightLimit:
                return out  # rolled back; the key's other jobs must end first
        if v.job is None:
            job = job_store.create_job(
                session,
                task=v.task,
                precision=v.precision,
                settings=AgentConfig.model_validate(campaign.config).job_spec(v.task, v.precision),
                api_key_id=campaign.api_key_id,
                team=campaign.team,
                commit=False,
            )
            session.flush()
            v.job_id = job.id
        else:
            job = v.job
            v.resume_requested = False
            job_store.request_resume(session, job)  # commits
        session.commit()
        out.started.append(job.id)


def running_campaign_ids(session: Session) -> list[str]:
    return list(session.scalars(select(Campaign.id).where(Campaign.status == CAMPAIGN_RUNNING).order_by(Campaign.created_at)))


def cancel(session: Session, campaign_id: str) -> tuple[Campaign, list[str]]:
    campaign = _lock(session, campaign_id, CAMPAIGN_RUNNING)
    if campaign is None:
        current = session.get(Campaign, campaign_id)
        raise CampaignStateError(
            f"campaign {campaign_id} is {current.status if current else 'gone'}; only a running campaign can be cancelled"
        )
    stopping = _stop_active(session, snapshot(session, campaign_id))
    campaign.status, campaign.finished_at = CAMPAIGN_CANCELLED, utcnow()
    campaign.message = (
        f"cancelled: no new job starts and its {len(stopping)} active job(s) were cancelled; resume with "
        f"POST /api/v1/campaigns/{campaign_id}/resume"
    )
    session.commit()
    return campaign, stopping


def resume(session: Session, campaign_id: str, body: CampaignResume) -> Campaign:
    """A cancelled, capped or finished campaign runs again: its cancelled and failed jobs resume from
    their checkpoints and its variants without a job start, within `max_in_flight`."""
    campaign = _lock(session, campaign_id, CAMPAIGN_CANCELLED, CAMPAIGN_CAPPED, CAMPAIGN_FINISHED)
    if campaign is None:
        raise CampaignStateError(f"campaign {campaign_id} is running; cancel it first or wait for it")
    if body.lift_caps:
        campaign.max_cost_usd, campaign.max_tokens = None, None
    if body.max_cost_usd is not None:
        campaign.max_cost_usd = body.max_cost_usd
    if body.max_tokens is not None:
        campaign.max_tokens = body.max_tokens
    snap = snapshot(session, campaign_id)
    why = cap_reached(campaign, snap)
    if why is not None:
        session.rollback()
        raise CampaignStateError(
            f"campaign {campaign_id} has {why}: send a higher max_cost_usd or max_tokens (or lift_caps: true) to resume it"
        )
    again = 0
    for v in snap.variants:
        if v.job is not None and v.job.status in RESUMABLE_JOB_STATUSES:
            v.resume_requested = True
            again += 1
    pending = sum(v.job is None for v in snap.variants)
    if again + pending == 0:
        session.rollback()
        raise CampaignStateError(f"campaign {campaign_id} has no cancelled or failed job and no variant left to start")
    campaign.status, campaign.finished_at = CAMPAIGN_RUNNING, None
    campaign.message = f"resumed: {again} job(s) resume from their checkpoints, {pending} variant(s) still to start"
    session.commit()
    return campaign
