"""What every dashboard page shares: the templates and their filters, the navigation, the security headers,
sign-in required (Web), the CSRF check, the styled error page, the query checks. The pages themselves are split by
area: auth_pages (sign in/out), jobs_pages (the list, submit, live rows), job_pages (one job), insight_pages
(leaderboard, costs, reviews), campaign_pages, compare_pages.

They read and act through the service layer only (app/services/*: the same functions and permission rules as
/api/v1; a refusal is shown with the API's status and message, app/api/errors.py). No page imports a store or a
model (an import-linter contract in pyproject.toml). Every POST carries the session's CSRF token; every page
needs a signed-in session (app/web/session.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graph.contract import PRECISIONS

from ..api import errors
from ..bounds import MAX_OFFSET
from ..streams import open_stream
from . import fmt
from . import session as web_session
from .session import WebSession
from .static_files import static_url

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
templates.env.globals["precisions"] = PRECISIONS  # the filters' choices (graph.contract)

# The navigation bar: (label, path). A new page adds itself here.
NAV: list[tuple[str, str]] = [
    ("Jobs", "/jobs"),
    ("Campaigns", "/campaigns"),
    ("Leaderboard", "/leaderboard"),
    ("Costs", "/costs"),
    ("Reviews", "/reviews"),
]

# Everything the pages load comes from this service: no CDN, no inline script.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
PAGE_SIZE = 50


class SignInRequired(Exception):
    def __init__(self, next_url: str) -> None:
        super().__init__(next_url)
        self.next_url = next_url


def _web(request: Request) -> WebSession:
    web = web_session.current(request)
    if web is None:
        raise SignInRequired(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return web


Web = Annotated[WebSession, Depends(_web)]
Csrf = Annotated[str, Form(max_length=128)]


def _stream_slot(request: Request, web: Web) -> Iterator[None]:
    # One of the signed-in key's event stream slots (the API's rule, app/streams.py), held until the stream ends
    # (a dependency's exit runs after the response); past CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY a 429 with Retry-After.
    with errors.as_http(), open_stream(request.app.state.settings, web.caller.key_id or ""):
        yield


# Every dashboard event stream takes this: its stream counts against the signed-in key's cap.
StreamSlot = Annotated[None, Depends(_stream_slot)]


def is_page(request: Request) -> bool:
    """Whether a request is a browser's for a page (not the API, a static file or a page's JSON/stream)."""
    path = request.url.path
    return not path.startswith(API_PATHS) and "text/html" in request.headers.get("accept", "text/html")


API_PATHS = ("/api/", "/static/")


def _where_to(path: str) -> str:
    return f"no page at {path[:120]}: the dashboard's pages and the API's docs are linked below"


# What a 404 page offers instead: the dashboard's pages and the API's docs (links, not text).
ELSEWHERE = [*NAV, ("API docs (swagger-ui)", "/api/v1/docs"), ("API reference (Redoc)", "/api/v1/redoc")]


def install_handlers(app: FastAPI) -> None:
    """A browser asking for a page gets the styled error page (the API keeps its JSON): an unknown path, a bad query
    value (`/costs?days=abc`), any other HTTP error a page raises."""

    async def sign_in_first(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInRequired)
        return RedirectResponse("/login?" + urlencode({"next": exc.next_url}), status_code=303)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if not is_page(request):
            return await http_exception_handler(request, exc)
        unknown = exc.status_code == 404 and exc.detail == "Not Found"
        message = _where_to(request.url.path) if unknown else str(exc.detail)
        back = request.url.path if isinstance(exc, BadQuery) else "/jobs"
        links = ELSEWHERE if unknown else []
        response = problem(request, web_session.current(request), exc.status_code, message, back=back, links=links)
        for name, value in (exc.headers or {}).items():
            response.headers.setdefault(name, value)
        return response

    async def bad_query(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        if not is_page(request):
            return await errors.validation_error(request, exc)
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'] if p not in ('query', 'body', 'path'))}: {e['msg']}" for e in exc.errors())
        message = f"{wrong[:400]}: fix the address (or the form) and try again"
        return problem(request, web_session.current(request), 422, message, back=request.url.path)

    app.add_exception_handler(SignInRequired, sign_in_first)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, bad_query)


def _when(value: Any) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _script_json(text: str) -> Markup:
    """JSON text made safe inside <script type="application/json"> (no "</script>" can close it)."""
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


templates.env.filters.update(fmt.FILTERS, when=_when, script_json=_script_json)
templates.env.globals["static_url"] = static_url


def render(request: Request, name: str, web: WebSession | None, *, http_status: int = 200, **context: Any) -> HTMLResponse:
    base = {"nav": NAV, "web": web, "caller": web.caller if web else None, "csrf": web.csrf if web else "", "path": request.url.path}
    response = templates.TemplateResponse(request, name, base | context, status_code=http_status)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def problem(
    request: Request, web: WebSession | None, status: int, message: str, back: str = "/jobs", links: list[tuple[str, str]] | None = None
) -> HTMLResponse:
    return render(request, "error.html", web, http_status=status, status_code=status, message=message, back=back, links=links or [])


def csrf_or_403(request: Request, web: WebSession, token: str) -> HTMLResponse | None:
    if web_session.csrf_ok(web, token):
        return None
    return problem(request, web, 403, "this form's security token is missing or stale: reload the page and send it again")


def local_path(next_url: str | None) -> str:
    """Only a path of this site (no scheme, no //host) is followed after sign-in."""
    if next_url and next_url.startswith("/") and not next_url.startswith("//") and "\\" not in next_url:
        return next_url
    return "/jobs"


class BadQuery(HTTPException):
    """A page's query value out of bounds (check_filter, check_offset): a 422 whose error page links back to the page
    itself (install_handlers), so a page raises it and needs no handling of its own."""

    def __init__(self, detail: str) -> None:
        super().__init__(422, detail)


def check_offset(offset: int) -> None:
    """A page's offset within the API's bounds (the pages call the API's functions, past FastAPI's own checks)."""
    if not 0 <= offset <= MAX_OFFSET:
        raise BadQuery(f"offset {offset}: page with offset 0 to {MAX_OFFSET}")


def check_filter(name: str, value: str, pattern: str | None = None, allowed: tuple[str, ...] | None = None) -> str:
    if not value:
        return ""
    if (allowed is not None and value not in allowed) or (pattern is not None and not re.fullmatch(pattern, value)):
        choices = f"one of {', '.join(allowed)}" if allowed else "a valid value"
        raise BadQuery(f"filter {name}={value[:60]!r} is not {choices}: clear it and try again")
    return value


def errors_of(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'form'}: {e['msg']}" for e in exc.errors()]
