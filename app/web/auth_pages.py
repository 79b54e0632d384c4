"""Sign in and out of the dashboard (an API key exchanged for a session: app/web/session.py), and the addresses a
person guesses first: `/`, `/dashboard`, `/ui` lead to the jobs list; `/docs` and `/redoc` to the API's docs."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..auth import KeyRejected
from ..services import web_sessions
from . import session as web_session
from .base import Csrf, Web, csrf_or_403, local_path, render

router = APIRouter(include_in_schema=False)


@router.get("/")
@router.get("/dashboard")
@router.get("/ui")
def home() -> RedirectResponse:
    return RedirectResponse("/jobs", status_code=303)


def _login_page(request: Request, *, status: int = 200, error: str = "", next_url: str = "/jobs") -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", None, http_status=status, error=error, login_csrf=token, next_url=local_path(next_url))
    web_session.set_login_cookie(request, response, token)
    return response


@router.get("/login")
def login_form(request: Request, next: str = "/jobs") -> Response:
    if web_session.current(request) is not None:
        return RedirectResponse(local_path(next), status_code=303)
    return _login_page(request, next_url=next)


@router.post("/login")
def login(
    request: Request, key: Annotated[str, Form(max_length=200)], csrf: Csrf, next: Annotated[str, Form(max_length=2000)] = "/jobs"
) -> Response:
    if not web_session.login_token_ok(request, csrf):
        return _login_page(request, status=400, error="the sign-in form expired: send your key again", next_url=next)
    with request.app.state.sessions() as session:
        try:
            caller = web_sessions.check_key(session, key.strip())
        except KeyRejected as exc:
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
