"""Campaigns: create, list, detail with progress, cancel, resume, report (JSON, Markdown or HTML).

Permissions are the jobs' (app/permissions.py): reads by the campaign's team or an admin, cancel and
resume by the key that created it or an admin; another team's campaign is a 404 like a missing one.
A campaign's jobs are ordinary jobs of that key: GET /api/v1/jobs/ID shows each one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

from ..bounds import INT32_MAX, MAX_OFFSET
from ..campaigns.schemas import CampaignDetail, CampaignOut, CampaignPage, CampaignResume, CampaignStatus, CampaignSubmit
from ..headers import REPORT_CSP
from ..services import campaigns
from .deps import KeyHolder, Reader, RunnerDep, SessionDep, SettingsDep, Submitter
from .errors import as_http, responses

router = APIRouter(prefix="/campaigns", tags=["campaigns"])

CampaignId = Annotated[str, Path(max_length=64, description="a campaign id, cmp_ and 16 hex digits")]
_READ = responses(401, 403, 404)
_ACT = responses(401, 403, 404, 409)


def _state(request: Request) -> tuple[Any, Any]:
    """The service's evaluation (can it run jobs?) and the campaign scheduler (None when it has none)."""
    return request.app.state.evaluation, getattr(request.app.state, "campaigns", None)


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
    with as_http():
        return campaigns.create(session, caller, body, *_state(request))


@router.get("", response_model=CampaignPage, summary="List the campaigns this key may read, newest first", responses=responses(401, 403))
def list_campaigns(
    session: SessionDep,
    caller: Reader,
    settings: SettingsDep,
    status: Annotated[CampaignStatus | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=INT32_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> CampaignPage:
    with as_http():
        return campaigns.page(session, caller, settings, status=status, limit=limit, offset=offset)


@router.get("/{campaign_id}", response_model=CampaignDetail, summary="A campaign with its progress and its variants' jobs", responses=_READ)
def get_campaign(campaign_id: CampaignId, session: SessionDep, caller: Reader) -> CampaignDetail:
    with as_http():
        return campaigns.detail(session, caller, campaign_id)


@router.post("/{campaign_id}/cancel", response_model=CampaignOut, summary="Cancel a campaign and its active jobs", responses=_ACT)
def cancel_campaign(campaign_id: CampaignId, session: SessionDep, caller: KeyHolder, runner: RunnerDep) -> CampaignOut:
    with as_http():
        return campaigns.cancel(session, caller, campaign_id, runner)


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
    with as_http():
        return campaigns.resume(session, caller, campaign_id, body, *_state(request))


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
    with as_http():
        report = campaigns.report(session, caller, [campaign_id, *compare], format)
    if format == "markdown":
        return PlainTextResponse(report, media_type="text/markdown; charset=utf-8")
    if format == "html":
        return HTMLResponse(report, headers={"Content-Security-Policy": REPORT_CSP})
    return report
