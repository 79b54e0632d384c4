"""The dashboard's campaign pages: the list, one campaign (progress, its variants' jobs, the report's
tables and its success chart), cancel and resume.

Everything is read and done through the campaigns API's own functions (app/api/campaigns.py) with the
signed-in key: the same permission rules, the same 404 for another team's campaign as for a missing one,
the same 403 message for a key that may not act. The report's tables are app/campaigns/report.py's.

Live updates: while a campaign runs, dashboard.js fetches `/campaigns/{id}/live` (the detail page) or
`/campaigns/rows` (the list) every few seconds and swaps in the HTML the server renders with the same
macros as the page (a campaign changes when its jobs do, which the jobs' own event streams do not cover).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from settings import ServiceSettings

from .. import permissions
from ..api.deps import RunnerDep, SessionDep, SettingsDep
from ..api.errors import as_http
from ..campaigns import report
from ..campaigns.schemas import CampaignDetail, CampaignPage, CampaignResume, Progress
from ..services import campaigns as campaigns_service
from ..services.dashboard import CAMPAIGN_CANCELLED, CAMPAIGN_CAPPED, CAMPAIGN_FINISHED, CAMPAIGN_RUNNING, CAMPAIGN_STATUSES
from . import base as pages
from .base import Csrf, Web
from .session import WebSession

router = APIRouter(include_in_schema=False)
PAGE_SIZE = pages.PAGE_SIZE
RESUMABLE = (CAMPAIGN_CANCELLED, CAMPAIGN_CAPPED, CAMPAIGN_FINISHED)
NO_STORE = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def progress_view(p: Progress) -> dict[str, Any]:
    """The progress bar's numbers: ended jobs (with and without a correct kernel), active ones, the rest."""
    ended = p.finished + p.no_correct_kernel + p.cancelled + p.failed
    active = p.queued + p.running + p.waiting_for_input
    total = p.variants or 1
    return {
        "ended": ended,
        "active": active,
        "total": p.variants,
        "correct": p.correct,
        "pct": {
            "correct": 100 * min(p.correct, ended) / total,
            "ended": 100 * max(0, ended - p.correct) / total,
            "active": 100 * active / total,
        },
    }


def is_live(c: Any) -> bool:
    """Whether the campaign may still change: it runs, or some of its jobs are still active."""
    p = c.progress
    return bool(c.status == CAMPAIGN_RUNNING or p.queued or p.running or p.waiting_for_input)


def success_chart(s: report.CampaignSummary) -> dict[str, Any]:
    """The chart's data: cumulative success at each tau, over all variants and per precision (report.py's numbers)."""
    groups = [("all variants", s.lines), *((f"precision {k}", g) for k, g in s.groups("precision").items())]
    return {
        "taus": list(report.TAUS),
        "series": [{"label": f"{name} ({len(g)})", "share": list(s.success(g).values())} for name, g in groups],
    }


pages.templates.env.globals.update(progress_view=progress_view, is_live=is_live)


def _macros() -> Any:
    return pages.templates.env.get_template("_campaign.html").module


# --- the list ----------------------------------------------------------------------------------------------


def _page(session: Session, web: WebSession, settings: ServiceSettings, status: str, offset: int) -> CampaignPage:
    pages.check_filter("status", status, allowed=CAMPAIGN_STATUSES)
    pages.check_offset(offset)
    with as_http():
        return campaigns_service.page(session, web.caller, settings, status=status or None, limit=PAGE_SIZE, offset=offset)  # type: ignore[arg-type]


@router.get("/campaigns", response_class=HTMLResponse)
def campaigns_page(
    request: Request, web: Web, session: SessionDep, settings: SettingsDep, status: str = "", offset: int = 0
) -> HTMLResponse:
    try:
        page = _page(session, web, settings, status, offset)
    except HTTPException as exc:
        return pages.problem(request, web, exc.status_code, str(exc.detail), back="/campaigns")

    def link(**change: Any) -> str:
        return "/campaigns?" + urlencode({k: v for k, v in ({"status": status} | change).items() if v})

    return pages.render(
        request,
        "campaigns.html",
        web,
        page=page,
        status=status,
        statuses=CAMPAIGN_STATUSES,
        link=link,
        rows_query=urlencode({"status": status, "offset": offset}),
        page_size=PAGE_SIZE,
        live=any(is_live(c) for c in page.items),
    )


@router.get("/campaigns/rows")
def campaign_rows(web: Web, session: SessionDep, settings: SettingsDep, status: str = "", offset: int = 0) -> JSONResponse:
    """The list's rows as the page renders them (HTML), for its live updates."""
    page = _page(session, web, settings, status, offset)
    body = {"rows": str(_macros().campaign_rows(page.items)), "total": page.total, "live": any(is_live(c) for c in page.items)}
    return JSONResponse(body, headers=NO_STORE)


# --- one campaign ------------------------------------------------------------------------------------------


def _detail(session: Session, web: WebSession, campaign_id: str) -> tuple[CampaignDetail, report.CampaignSummary]:
    with as_http():  # 404 for a missing or another team's campaign
        detail = campaigns_service.detail(session, web.caller, campaign_id)
    return detail, report.summarize(session, detail.id)


def _parts(web: WebSession, detail: CampaignDetail, summary: report.CampaignSummary) -> dict[str, Any]:
    can_act = permissions.can_act(web.caller, detail)
    return {
        "campaign": detail,
        "progress": progress_view(detail.progress),
        "tables": report.all_tables([summary]),
        "chart": success_chart(summary),
        "can_act": can_act,
        "can_cancel": can_act and detail.status == CAMPAIGN_RUNNING,
        "can_resume": can_act and detail.status in RESUMABLE,
        "live": is_live(detail),
    }


@router.get("/campaigns/{campaign_id}/live")
def campaign_live(campaign_id: str, web: Web, session: SessionDep) -> JSONResponse:
    """The campaign page's changing parts as the page renders them (HTML), its status and chart data."""
    detail, summary = _detail(session, web, campaign_id)
    parts, m = _parts(web, detail, summary), _macros()
    body = {
        "status": detail.status,
        "message": detail.message,
        "live": parts["live"],
        "can_cancel": parts["can_cancel"],
        "can_resume": parts["can_resume"],
        "progress": str(m.progress_block(detail, parts["progress"])),
        "variants": str(m.variant_rows(detail.variants)),
        "tables": str(m.report_tables(parts["tables"])),
        "chart": parts["chart"],
    }
    return JSONResponse(body, headers=NO_STORE)


@router.get("/campaigns/{campaign_id}", response_class=HTMLResponse)
def campaign_page(request: Request, campaign_id: str, web: Web, session: SessionDep) -> HTMLResponse:
    try:
        detail, summary = _detail(session, web, campaign_id)
    except HTTPException as exc:
        return pages.problem(request, web, exc.status_code, str(exc.detail), back="/campaigns")
    parts = _parts(web, detail, summary)
    return pages.render(request, "campaign.html", web, chart_json=json.dumps(parts["chart"]), **parts)


def _act(request: Request, web: WebSession, campaign_id: str, csrf: str, action: Callable[[], Any]) -> Response:
    if (refused := pages.csrf_or_403(request, web, csrf)) is not None:
        return refused
    back = f"/campaigns/{quote(campaign_id)}"
    try:
        with as_http():
            action()
    except HTTPException as exc:
        return pages.problem(request, web, exc.status_code, str(exc.detail), back=back)
    return RedirectResponse(back, status_code=303)


@router.post("/campaigns/{campaign_id}/cancel")
def cancel(request: Request, campaign_id: str, web: Web, session: SessionDep, runner: RunnerDep, csrf: Csrf) -> Response:
    return _act(request, web, campaign_id, csrf, lambda: campaigns_service.cancel(session, web.caller, campaign_id, runner))


@router.post("/campaigns/{campaign_id}/resume")
def resume(
    request: Request, campaign_id: str, web: Web, session: SessionDep, csrf: Csrf, lift_caps: Annotated[str, Form(max_length=4)] = ""
) -> Response:
    body = CampaignResume(lift_caps=lift_caps == "on")
    evaluation, scheduler = request.app.state.evaluation, getattr(request.app.state, "campaigns", None)
    return _act(
        request, web, campaign_id, csrf, lambda: campaigns_service.resume(session, web.caller, campaign_id, body, evaluation, scheduler)
    )
