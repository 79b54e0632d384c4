"""Campaigns: start, list, read, cancel and resume, for the API's routes and the dashboard's pages alike.

Reads follow the jobs' rules (a key sees its team's campaigns, an admin every team's); cancel and resume
need the key that started the campaign, or an admin."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.orm import Session

from settings import ServiceSettings

from .. import permissions
from ..campaigns import report as campaign_report
from ..campaigns import store
from ..campaigns.scheduler import CampaignScheduler
from ..campaigns.schemas import CampaignDetail, CampaignOut, CampaignPage, CampaignResume, CampaignStatus, CampaignSubmit
from ..db.models import Campaign
from ..evaluation import Evaluation
from ..permissions import Caller
from ..runner import JobRunner
from .access import check_page_size, require_actor, require_gpus
from .errors import Conflict, Invalid, NotFound

CAMPAIGN_ID_PATTERN = r"^cmp_[0-9a-f]{16}$"


def _fields(session: Session, campaign: Campaign) -> tuple[dict[str, Any], Any]:
    snap = store.snapshot(session, campaign.id)
    fields = {name: getattr(campaign, name) for name in CampaignOut.model_fields if name != "progress"}
    fields["progress"] = store.progress(snap)
    return fields, snap


def _out(session: Session, campaign: Campaign) -> CampaignOut:
    fields, _ = _fields(session, campaign)
    return CampaignOut(**fields)


def _detail(session: Session, campaign: Campaign) -> CampaignDetail:
    fields, snap = _fields(session, campaign)
    return CampaignDetail(**fields, variants=store.variant_rows(snap))


def readable_campaign(session: Session, caller: Caller, campaign_id: str) -> Campaign:
    campaign = store.get_campaign(session, campaign_id) if re.fullmatch(CAMPAIGN_ID_PATTERN, campaign_id) else None
    if campaign is None or not permissions.can_read(caller, campaign):
        raise NotFound(f"no campaign {campaign_id[:64]!r} visible to this key; list your team's campaigns with GET /api/v1/campaigns")
    return campaign


def actionable_campaign(session: Session, caller: Caller, campaign_id: str, verb: str) -> Campaign:
    campaign = readable_campaign(session, caller, campaign_id)
    require_actor(caller, campaign, f"campaign {campaign.id}", verb)
    return campaign


def create(
    session: Session, caller: Caller, body: CampaignSubmit, evaluation: Evaluation, scheduler: CampaignScheduler | None
) -> CampaignOut:
    """Every variant of the selection as one job with the campaign's config, `max_in_flight` at a time."""
    require_gpus(evaluation.can_run_jobs, evaluation.note)
    try:
        campaign = store.create_campaign(session, body, caller)
    except store.CampaignInvalid as exc:
        raise Invalid(("body", "selection"), str(exc)) from None
    if scheduler is not None:
        scheduler.wake()
    return _out(session, campaign)


def page(
    session: Session, caller: Caller, settings: ServiceSettings, *, status: CampaignStatus | None = None, limit: int = 50, offset: int = 0
) -> CampaignPage:
    """The campaigns the caller may read, newest first."""
    check_page_size(limit, settings.max_page_size)
    team = None if permissions.is_admin(caller) else caller.team
    rows, total = store.list_campaigns(session, team=team, status=status, limit=limit, offset=offset)
    return CampaignPage(
        items=[_out(session, c) for c in rows],
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


def detail(session: Session, caller: Caller, campaign_id: str) -> CampaignDetail:
    return _detail(session, readable_campaign(session, caller, campaign_id))


def cancel(session: Session, caller: Caller, campaign_id: str, runner: JobRunner) -> CampaignOut:
    """Cancel a campaign and its active jobs."""
    actionable_campaign(session, caller, campaign_id, "cancel")
    try:
        campaign, stopping = store.cancel(session, campaign_id)
    except store.CampaignStateError as exc:
        raise Conflict(str(exc)) from None
    for job_id in stopping:
        runner.request_stop(job_id)
    return _out(session, campaign)


def resume(
    session: Session,
    caller: Caller,
    campaign_id: str,
    body: CampaignResume | None,
    evaluation: Evaluation,
    scheduler: CampaignScheduler | None,
) -> CampaignOut:
    """Resume a cancelled, capped or finished campaign; a capped one needs a higher cap or lift_caps."""
    actionable_campaign(session, caller, campaign_id, "resume")
    require_gpus(evaluation.can_run_jobs, evaluation.note)
    try:
        campaign = store.resume(session, campaign_id, body or CampaignResume())
    except store.CampaignStateError as exc:
        raise Conflict(str(exc)) from None
    if scheduler is not None:
        scheduler.wake()
    return _out(session, campaign)


def report(session: Session, caller: Caller, campaign_ids: list[str], format: str) -> dict[str, Any] | str:
    """The report of campaigns the caller may read, side by side: JSON-ready (`json`), Markdown or an HTML page."""
    for campaign_id in campaign_ids:
        readable_campaign(session, caller, campaign_id)
    summaries = [campaign_report.summarize(session, cid) for cid in campaign_ids]
    if format == "markdown":
        return campaign_report.to_markdown(summaries)
    if format == "html":
        return campaign_report.to_html(summaries)
    return {"campaigns": [s.to_dict() for s in summaries]}
