"""Campaigns: create, list, detail with progress, cancel, resume, report (JSON, Markdown or HTML).

Permissions are the jobs' (app/permissions.py): reads by the campaign's team or an admin, cancel and
resume by the key that created it or an admin; another team's campaign is a 404 like a missing one.
A campaign's jobs are ordinary jobs of that key: GET /api/v1/jobs/ID shows each one.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from sqlalchemy.orm import Session

from .. import permissions
from ..bounds import INT32_MAX, MAX_OFFSET
from ..campaigns import report as campaign_report
from ..campaigns import store
from ..campaigns.schemas import CampaignDetail, CampaignOut, CampaignPage, CampaignResume, CampaignStatus, CampaignSubmit
from ..db.models import Campaign
from ..permissions import Caller
from .deps import KeyHolder, Reader, RunnerDep, SessionDep, SettingsDep, Submitter, require_actor, require_gpus
from .errors import responses, unprocessable

router = APIRouter(prefix="/campaigns", tags=["campaigns"])

CAMPAIGN_ID_PATTERN = r"^cmp_[0-9a-f]{16}$"
CampaignId = Annotated[str, Path(max_length=64, description="a campaign id, cmp_ and 16 hex digits")]
_READ = responses(401, 403, 404)
_ACT = responses(401, 403, 404, 409)


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
        raise HTTPException(
            404, f"no campaign {campaign_id[:64]!r} visible to this key; list your team's campaigns with GET /api/v1/campaigns"
        )
    return campaign


def actionable_campaign(session: Session, caller: Caller, campaign_id: str, verb: str) -> Campaign:
    campaign = readable_campaign(session, caller, campaign_id)
    require_actor(caller, campaign, f"campaign {campaign.id}", verb)
    return campaign


@router.post(
    "",
    status_code=201,
    response_model=CampaignOut,
    summary="Start a campaign: one job per variant",
    responses=responses(400, 401, 403, 413, 503),
)
def create_campaign(body: CampaignSubmit, request: Request, session: SessionDep, caller: Submitter, runner: RunnerDep) -> CampaignOut:
    """Every variant of the selection runs as one job with `config`, at most `max_in_flight` at a time (and
    within the key's CUDAMASTER_MAX_JOBS_IN_FLIGHT_PER_KEY); the caps stop it when its jobs have spent that much."""
    require_gpus(request)
    try:
        campaign = store.create_campaign(session, body, caller)
    except store.CampaignInvalid as exc:
        raise unprocessable(("body", "selection"), str(exc)) from None
    _wake(request)
    return _out(session, campaign)


def _wake(request: Request) -> None:
    scheduler = getattr(request.app.state, "campaigns", None)
    if scheduler is not None:
        scheduler.wake()


@router.get("", response_model=CampaignPage, summary="List the campaigns this key may read, newest first", responses=responses(401, 403))
def list_campaigns(
    session: SessionDep,
    caller: Reader,
    settings: SettingsDep,
    status: Annotated[CampaignStatus | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=INT32_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> CampaignPage:
    if limit > settings.max_page_size:
        raise unprocessable(
            ("query", "limit"),
            f"limit {limit} is over the page size limit {settings.max_page_size} (CUDAMASTER_MAX_PAGE_SIZE); page with offset",
            limit,
        )
    team = None if permissions.is_admin(caller) else caller.team
    rows, total = store.list_campaigns(session, team=team, status=status, limit=limit, offset=offset)
    return CampaignPage(
        items=[_out(session, c) for c in rows],
        total=total,
        limit=limit,
        offset=offset,
        next_offset=offset + limit if offset + limit < total else None,
    )


@router.get("/{campaign_id}", response_model=CampaignDetail, summary="A campaign with its progress and its variants' jobs", responses=_READ)
def get_campaign(campaign_id: CampaignId, session: SessionDep, caller: Reader) -> CampaignDetail:
    return _detail(session, readable_campaign(session, caller, campaign_id))


@router.post("/{campaign_id}/cancel", response_model=CampaignOut, summary="Cancel a campaign and its active jobs", responses=_ACT)
def cancel_campaign(campaign_id: CampaignId, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> CampaignOut:
    actionable_campaign(session, caller, campaign_id, "cancel")
    try:
        campaign, stopping = store.cancel(session, campaign_id)
    except store.CampaignStateError as exc:
        raise HTTPException(409, str(exc)) from None
    for job_id in stopping:
        runner.request_stop(job_id)
    return _out(session, campaign)


@router.post(
    "/{campaign_id}/resume",
    response_model=CampaignOut,
    responses=_ACT | responses(400, 413, 503),  # it takes an optional body: unreadable (400) or too large (413)
    summary="Resume a cancelled, capped or finished campaign: its cancelled and failed jobs continue",
)
def resume_campaign(
    campaign_id: CampaignId, request: Request, session: SessionDep, caller: KeyHolder, body: CampaignResume | None = None
) -> CampaignOut:
    """A capped campaign needs a higher cap (max_cost_usd, max_tokens) or lift_caps."""
    actionable_campaign(session, caller, campaign_id, "resume")
    require_gpus(request)
    try:
        campaign = store.resume(session, campaign_id, body or CampaignResume())
    except store.CampaignStateError as exc:
        raise HTTPException(409, str(exc)) from None
    _wake(request)
    return _out(session, campaign)


@router.get(
    "/{campaign_id}/report",
    summary="The campaign's report (JSON; or Markdown, HTML), with others side by side",
    responses=_READ | {200: {"content": {"application/json": {}, "text/markdown": {}, "text/html": {}}}},
)
def campaign_report_route(
    campaign_id: CampaignId,
    session: SessionDep,
    caller: Reader,
    compare: Annotated[list[str], Query(max_length=8, description="other campaign ids, side by side")] = [],  # noqa: B006
    format: Annotated[Literal["json", "markdown", "html"], Query()] = "json",
) -> Any:
    ids = [campaign_id, *compare]
    for cid in ids:
        readable_campaign(session, caller, cid)
    summaries = [campaign_report.summarize(session, cid) for cid in ids]
    if format == "markdown":
        return PlainTextResponse(campaign_report.to_markdown(summaries), media_type="text/markdown; charset=utf-8")
    if format == "html":
        return HTMLResponse(campaign_report.to_html(summaries))
    return {"campaigns": [s.to_dict() for s in summaries]}
