"""Sign in and out of the dashboard (an API key exchanged for a session: app/web/session.py), and the addresses a
person guesses first: `/`, `/dashboard`, `/ui` lead to the jobs list; `/docs` and `/redoc` to the API's docs."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..api.deps import SettingsDep
from ..services import keys
from ..services.errors import Forbidden, TooMany
from . import session as web_session
from .base import Csrf, Web, csrf_or_403, local_path, render

router = APIRouter(include_in_schema=False)


@router.get("/")
@router.get("/dashboard")
@router.get("/ui")
def home() -> RedirectResponse:
    return RedirectResponse("/jobs", status_code=303)


def _login_page(
    request: Request, *, status: int = 200, error: str = "", next_url: str = "/jobs", retry_after: int | None = None
) -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", None, http_status=status, error=error, login_csrf=token, next_url=local_path(next_url))
    web_session.set_login_cookie(request, response, token)
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


@router.get("/login")
def login_form(request: Request, next: str = "/jobs") -> Response:
    if web_session.current(request) is not None:
        return RedirectResponse(local_path(next), status_code=303)
    return _login_page(request, next_url=next)


@router.post("/login")
def login(
    request: Request,
    settings: SettingsDep,
    key: Annotated[str, Form(max_length=200)],
    csrf: Csrf,
    next: Annotated[str, Form(max_length=2000)] = "/jobs",
) -> Response:
    """The key is checked by the API's own rule (keys.authenticate): failures throttled per key id and per address,
    and logged; a throttled sign-in is a 429 with Retry-After, shown on the sign-in page."""
    if not web_session.login_token_ok(request, csrf):
        return _login_page(request, status=400, error="the sign-in form expired: send your key again", next_url=next)
    address = request.client.host if request.client else None
    with request.app.state.sessions() as session:
        try:
            caller = keys.authenticate(session, key.strip(), address, settings)
        except TooMany as exc:
            return _login_page(request, status=429, error=str(exc), next_url=next, retry_after=exc.retry_after)
        except Forbidden as exc:
            return _login_page(request, status=403, error=str(exc), next_url=next)
    response = RedirectResponse(local_path(next), status_code=303)
    web_session.sign_in(request, response, caller.key_id or "")
    return response


@router.post("/logout")
def logout(request: Request, web: Web, csrf: Csrf) -> Response:
    if (refused := csrf_or_403(request, web, csrf)) is not None:
        return refused
    response = RedirectResponse("/login", status_code=303)
    web_session.sign_out(request, response, web)
    return response
