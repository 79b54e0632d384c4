"""The dashboard's comparison pages: jobs or attempts of one task and precision side by side, and
campaigns side by side. They call the same service functions as GET /api/v1/compare/* (app/services/compare.py)
with the signed-in key; a refusal is the API's message on the styled error page.

The jobs list's checkboxes send `ids` once per ticked job; a link may also give them comma-separated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from ..api.deps import SessionDep
from ..services import compare as compare_service
from ..services.compare import MAX_COMPARED
from ..services.errors import Invalid, NotFound
from . import base as pages
from .base import Web
from .session import WebSession

router = APIRouter(include_in_schema=False)
Ids = Annotated[list[str], Query(max_length=4 * MAX_COMPARED)]


def _page(request: Request, web: WebSession, back: str, compare: Callable[[], Any], template: str, **context: Any) -> HTMLResponse:
    try:
        data = compare()
    except NotFound as exc:
        return pages.problem(request, web, 404, str(exc), back=back)
    except Invalid as exc:
        return pages.problem(request, web, 422, str(exc), back=back)
    return pages.render(request, template, web, data=data, data_json=data.model_dump_json(), **context)


@router.get("/compare/jobs", response_class=HTMLResponse)
def jobs_page(request: Request, web: Web, session: SessionDep, ids: Ids = []) -> HTMLResponse:  # noqa: B006
    return _page(request, web, "/jobs", lambda: compare_service.jobs(session, web.caller, ids), "compare_runs.html")


@router.get("/compare/attempts", response_class=HTMLResponse)
def attempts_page(request: Request, web: Web, session: SessionDep, ids: Ids = []) -> HTMLResponse:  # noqa: B006
    return _page(request, web, "/jobs", lambda: compare_service.attempts(session, web.caller, ids), "compare_runs.html")


@router.get("/compare/campaigns", response_class=HTMLResponse)
def campaigns_page(request: Request, web: Web, session: SessionDep, ids: Ids = []) -> HTMLResponse:  # noqa: B006
    return _page(request, web, "/campaigns", lambda: compare_service.campaigns(session, web.caller, ids), "compare_campaigns.html")
