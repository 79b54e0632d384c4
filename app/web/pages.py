"""The dashboard's pages. They read and act through the same service layer as /api/v1 (app/services/*,
app/store/*; a refusal is shown with the API's status and message, app/api/errors.py) and the same permission rules (app/permissions.py): a page shows what the signed-in key may read, and
a form does only what that key may do (a refused action answers with the API's own message).

Every POST carries the session's CSRF token; every page needs a signed-in session (app/web/session.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from pydantic import ValidationError
from sqlalchemy import func, select
from starlette.exceptions import HTTPException as StarletteHTTPException

from bench_tasks import all_tasks
from graph.contract import DEFAULT_DEBUG, DEFAULT_PRECISION, DEFAULT_ROUNDS, DEFAULT_SIZES, PRECISIONS, knob

from .. import permissions
from ..api import deps, errors
from ..api.deps import RunnerDep, SessionDep, SettingsDep
from ..api.errors import as_http
from ..auth import KeyRejected, verify_key
from ..bounds import JOB_ID_PATTERN, KEY_ID_PATTERN, MAX_OFFSET, MODEL_PATTERN, TASK_PATTERN
from ..compare.runs import source_diff
from ..db.models import ACTIVE_STATUSES, ALL_STATUSES, CANCELLED, FAILED, REVIEW_STATUSES, WAITING, Attempt, Job, Review
from ..db.types import utcnow
from ..reviews import flagged_share, list_reviews
from ..schemas import AnswerIn, JobDetail, JobSubmit, ReviewDecision
from ..services import insights
from ..services import jobs as jobs_service
from ..services.reviews import decide, review_out
from ..store import aggregates
from ..store import jobs as store
from ..streams import service_stopping, until_service_stops
from . import fmt, names
from . import session as web_session
from .session import WebSession
from .static_files import static_url

router = APIRouter(include_in_schema=False)
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
ROLE_MODELS = ("*", "planner", "coder", "compiler", "debugger")
# The submit form's fields from the job spec (graph.contract): defaults, bounds and choices.
FORM_KNOBS = {name: knob(name) for name in ("precision", "rounds", "debug", "sizes", "sanitize")}


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


def is_page(request: Request) -> bool:
    """Whether a request is a browser's for a page (not the API, a static file or a page's JSON/stream)."""
    path = request.url.path
    return not path.startswith(API_PATHS) and "text/html" in request.headers.get("accept", "text/html")


API_PATHS = ("/api/", "/static/")


def _where_to(path: str) -> str:
    return f"no page at {path[:120]}: the dashboard's pages are " + ", ".join(href for _, href in NAV)


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
        message = _where_to(request.url.path) if exc.status_code == 404 and exc.detail == "Not Found" else str(exc.detail)
        response = problem(request, web_session.current(request), exc.status_code, message)
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


_num, _usd = fmt.num, fmt.usd  # the pages' number formats: app/web/fmt.py (and cmFormat in static/dashboard.js)


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


def problem(request: Request, web: WebSession | None, status: int, message: str, back: str = "/jobs") -> HTMLResponse:
    return render(request, "error.html", web, http_status=status, status_code=status, message=message, back=back)


def _csrf_or_403(request: Request, web: WebSession, token: str) -> HTMLResponse | None:
    if web_session.csrf_ok(web, token):
        return None
    return problem(request, web, 403, "this form's security token is missing or stale: reload the page and send it again")


def _local(next_url: str | None) -> str:
    """Only a path of this site (no scheme, no //host) is followed after sign-in."""
    if next_url and next_url.startswith("/") and not next_url.startswith("//") and "\\" not in next_url:
        return next_url
    return "/jobs"


# --- sign in / out ---------------------------------------------------------------------------------------------


@router.get("/")
@router.get("/dashboard")
@router.get("/ui")
def home() -> RedirectResponse:
    return RedirectResponse("/jobs", status_code=303)


def _login_page(request: Request, *, status: int = 200, error: str = "", next_url: str = "/jobs") -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    response = render(request, "login.html", None, http_status=status, error=error, login_csrf=token, next_url=_local(next_url))
    web_session.set_login_cookie(request, response, token)
    return response


@router.get("/login")
def login_form(request: Request, next: str = "/jobs") -> Response:
    if web_session.current(request) is not None:
        return RedirectResponse(_local(next), status_code=303)
    return _login_page(request, next_url=next)


@router.post("/login")
def login(
    request: Request, key: Annotated[str, Form(max_length=200)], csrf: Csrf, next: Annotated[str, Form(max_length=2000)] = "/jobs"
) -> Response:
    if not web_session.login_token_ok(request, csrf):
        return _login_page(request, status=400, error="the sign-in form expired: send your key again", next_url=next)
    with request.app.state.sessions() as session:
        try:
            row = verify_key(session, key.strip())
        except KeyRejected as exc:
            return _login_page(request, status=403, error=str(exc), next_url=next)
    response = RedirectResponse(_local(next), status_code=303)
    web_session.sign_in(request, response, row)
    return response


@router.post("/logout")
def logout(request: Request, web: Web, csrf: Csrf) -> Response:
    if (refused := _csrf_or_403(request, web, csrf)) is not None:
        return refused
    response = RedirectResponse("/login", status_code=303)
    web_session.sign_out(request, response, web)
    return response


# --- jobs ----------------------------------------------------------------------------------------------------


def _benchmark_tasks() -> list[tuple[str, list[str]]]:
    return [(t.name, list(t.prototypes)) for t in all_tasks()]


def rounds_used(session: Any, job_ids: list[str]) -> dict[str, int]:
    if not job_ids:
        return {}
    rows = session.execute(select(Attempt.job_id, func.max(Attempt.round)).where(Attempt.job_id.in_(job_ids)).group_by(Attempt.job_id))
    return {job_id: int(r or 0) for job_id, r in rows}


def row_labels(session: Any, jobs: list[Job]) -> dict[str, dict[str, Any]]:
    """Per job: its title (a custom kernel's own name), its owner (the key's name) and its campaign (id, name)."""
    titles = names.task_titles(session, (j.task for j in jobs))
    owners = names.key_names(session, (j.api_key_id for j in jobs))
    campaigns = names.campaigns_of(session, (j.id for j in jobs))
    return {
        j.id: {
            "title": titles.get(j.task, j.task),
            "owner": owners.get(j.api_key_id or "", ""),
            "campaign_id": campaigns.get(j.id, ("", ""))[0],
            "campaign": campaigns.get(j.id, ("", ""))[1],
        }
        for j in jobs
    }


def job_row(job: Job, models: list[str], rounds: int, labels: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row of the jobs table: what the page renders and what the live stream sends."""
    requested = [f"{role}: {m}" for role, m in (job.settings.get("models") or {}).items()]
    labels = labels or {}
    return {
        "id": job.id,
        "task": job.task,
        "title": labels.get("title", job.task),
        "owner": labels.get("owner", ""),
        "campaign_id": labels.get("campaign_id", ""),
        "campaign": labels.get("campaign", ""),
        "precision": job.precision,
        "status": job.status,
        "message": job.message,
        "models": ", ".join(models or requested) or "default",
        "best_score": job.best_score,
        "rounds_used": rounds,
        "rounds": (job.settings or {}).get("rounds"),
        "tokens": job.input_tokens + job.output_tokens,
        "cost_usd": job.cost_usd,
        "api_key_id": job.api_key_id,
        "created_at": job.created_at.isoformat(),
    }


def check_offset(offset: int) -> None:
    """A page's offset within the API's bounds (the pages call the API's functions, past FastAPI's own checks)."""
    if not 0 <= offset <= MAX_OFFSET:
        raise HTTPException(422, f"offset {offset}: page with offset 0 to {MAX_OFFSET}")


def _check_filter(name: str, value: str, pattern: str | None = None, allowed: tuple[str, ...] | None = None) -> str:
    if not value:
        return ""
    if (allowed is not None and value not in allowed) or (pattern is not None and not re.fullmatch(pattern, value)):
        choices = f"one of {', '.join(allowed)}" if allowed else "a valid value"
        raise HTTPException(422, f"filter {name}={value[:60]!r} is not {choices}: clear it and try again")
    return value


SORT_CHOICES = tuple(f"{sign}{name}" for name in store.SORTS for sign in ("", "-"))


@router.get("/jobs", response_class=HTMLResponse)
def jobs_page(
    request: Request,
    web: Web,
    session: SessionDep,
    status: str = "",
    task: str = "",
    precision: str = "",
    model: str = "",
    key: str = "",
    sort: str = "-created",
    offset: int = 0,
) -> HTMLResponse:
    return _jobs_page(
        request,
        web,
        session,
        {"status": status, "task": task, "precision": precision, "model": model, "key": key, "sort": sort or "-created"},
        offset,
    )


def _check_jobs_query(filters: dict[str, str], offset: int) -> None:
    """The jobs page's filters, sort and offset within the API's bounds: HTTPException(422) for the first that is not."""
    _check_filter("status", filters["status"], allowed=ALL_STATUSES)
    _check_filter("task", filters["task"], TASK_PATTERN)
    _check_filter("precision", filters["precision"], allowed=PRECISIONS)
    _check_filter("model", filters["model"], MODEL_PATTERN)
    _check_filter("key", filters["key"], KEY_ID_PATTERN)
    _check_filter("sort", filters["sort"], allowed=SORT_CHOICES)
    check_offset(offset)


def _job_rows(session: Any, caller: permissions.Caller, filters: dict[str, str], offset: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the jobs `caller` may read that match `filters`, as table rows (job_row), and how many match in all."""
    team = None if permissions.is_admin(caller) else caller.team
    rows, total = store.list_jobs(
        session,
        status=filters["status"] or None,
        task=filters["task"] or None,
        limit=PAGE_SIZE,
        offset=offset,
        team=team,
        precision=filters["precision"] or None,
        model=filters["model"] or None,
        key=filters["key"] or None,
        sort=filters["sort"],
    )
    ids = [j.id for j in rows]
    models, rounds = aggregates.models_of(session, ids), rounds_used(session, ids)
    labels = row_labels(session, rows)
    return [job_row(j, models[j.id], rounds.get(j.id, 0), labels[j.id]) for j in rows], total


def _jobs_page(
    request: Request,
    web: WebSession,
    session: Any,
    filters: dict[str, str],
    offset: int,
    *,
    form_errors: list[str] | None = None,
    form: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """The jobs page: the table (filtered, sorted, paged), its live updates' start and the submit form."""
    try:
        _check_jobs_query(filters, offset)
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail))
    caller = web.caller
    live_since = utcnow().isoformat()  # read before the rows: the live table adds the jobs created since (jobs_live)
    rendered, total = _job_rows(session, caller, filters, offset)
    active = {k: v for k, v in filters.items() if v and not (k == "sort" and v == "-created")}

    def link(**change: Any) -> str:
        return "/jobs?" + urlencode({**active, **change})

    return render(
        request,
        "jobs.html",
        web,
        http_status=status_code,
        rows=rendered,
        live_since=live_since,
        live_filters=urlencode({k: v for k, v in filters.items() if v and k != "sort"}),
        total=total,
        offset=offset,
        page_size=PAGE_SIZE,
        filters=filters,
        link=link,
        statuses=ALL_STATUSES,
        sorts=store.SORTS,
        tasks=_benchmark_tasks(),
        known_models=aggregates.known_models(session, permissions.visible_jobs(caller)),
        can_submit=permissions.can_submit(caller),
        form_errors=form_errors or [],
        form=form or {},
        role_models=ROLE_MODELS,
        knobs=FORM_KNOBS,
    )


def _submission(form: dict[str, Any], upload: bytes | None) -> dict[str, Any]:
    """The JobSubmit body a submit form describes (validated by JobSubmit itself)."""
    models = {
        role: form[f"model_{'all' if role == '*' else role}"].strip()
        for role in ROLE_MODELS
        if form.get(f"model_{'all' if role == '*' else role}", "").strip()
    }
    body: dict[str, Any] = {
        "precision": form.get("precision") or DEFAULT_PRECISION,
        "rounds": form.get("rounds") or DEFAULT_ROUNDS,
        "debug": form.get("debug") or DEFAULT_DEBUG,  # the spec's default (it was 0 here, 3 in the API)
        "sizes": form.get("sizes") or DEFAULT_SIZES,
        "sanitize": form.get("sanitize") or FORM_KNOBS["sanitize"].default,
        "models": models,
        "manual": form.get("manual") == "on",
    }
    if form.get("kind") == "custom":
        source = upload.decode("utf-8", errors="strict") if upload else form.get("custom_source", "")
        body["custom"] = {
            "name": form.get("custom_name", ""),
            "prototype": form.get("custom_prototype", ""),
            "args": _json_field("arguments", form.get("custom_args", "")),
            "sizes": _json_field("sizes", form.get("custom_sizes", "")),
            "baseline_cu": source,
        }
    else:
        body["task"] = form.get("task") or None
    return body


class FormProblem(ValueError):
    pass


def _json_field(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormProblem(
            f"custom kernel {name}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); see the example under the field"
        ) from None


def _errors_of(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'form'}: {e['msg']}" for e in exc.errors()]


@router.post("/jobs", response_class=HTMLResponse)
def submit_job(
    request: Request,
    web: Web,
    session: SessionDep,
    settings: SettingsDep,
    runner: RunnerDep,
    csrf: Csrf,
    kind: Annotated[str, Form(max_length=10)] = "task",
    task: Annotated[str, Form(max_length=64)] = "",
    precision: Annotated[str, Form(max_length=8)] = DEFAULT_PRECISION,
    rounds: Annotated[str, Form(max_length=4)] = str(DEFAULT_ROUNDS),
    debug: Annotated[str, Form(max_length=4)] = str(DEFAULT_DEBUG),
    sizes: Annotated[str, Form(max_length=8)] = DEFAULT_SIZES,
    manual: Annotated[str, Form(max_length=4)] = "",
    model_all: Annotated[str, Form(max_length=128)] = "",
    model_planner: Annotated[str, Form(max_length=128)] = "",
    model_coder: Annotated[str, Form(max_length=128)] = "",
    model_compiler: Annotated[str, Form(max_length=128)] = "",
    model_debugger: Annotated[str, Form(max_length=128)] = "",
    custom_name: Annotated[str, Form(max_length=64)] = "",
    custom_prototype: Annotated[str, Form(max_length=2000)] = "",
    custom_args: Annotated[str, Form(max_length=20000)] = "",
    custom_sizes: Annotated[str, Form(max_length=20000)] = "",
    custom_source: Annotated[str, Form()] = "",
    custom_file: Annotated[UploadFile | None, File()] = None,
) -> Response:
    if (refused := _csrf_or_403(request, web, csrf)) is not None:
        return refused
    form = {k: v for k, v in locals().items() if isinstance(v, str) and k not in ("csrf",)}
    filters = {"status": "", "task": "", "precision": "", "model": "", "key": "", "sort": "-created"}
    try:
        caller = deps.submitter(web.caller)
        upload = custom_file.file.read(settings.max_source_bytes + 1) if custom_file is not None and custom_file.filename else None
        if upload is not None and len(upload) > settings.max_source_bytes:
            raise HTTPException(413, f"the uploaded .cu is over {settings.max_source_bytes} bytes (CUDAMASTER_SERVICE__MAX_SOURCE_BYTES)")
        body = JobSubmit.model_validate(_submission(form, upload))
        with as_http():
            job = jobs_service.submit(session, caller, body, settings, request.app.state.tree.agent, request.app.state.evaluation, runner)
    except FormProblem as exc:
        return _jobs_page(request, web, session, filters, 0, form_errors=[str(exc)], form=form, status_code=422)
    except UnicodeDecodeError:
        return _jobs_page(request, web, session, filters, 0, form_errors=["the uploaded .cu is not UTF-8 text"], form=form, status_code=422)
    except ValidationError as exc:
        return _jobs_page(request, web, session, filters, 0, form_errors=_errors_of(exc), form=form, status_code=422)
    except HTTPException as exc:
        return _jobs_page(request, web, session, filters, 0, form_errors=[str(exc.detail)], form=form, status_code=exc.status_code)
    except Exception as exc:  # a RequestValidationError raised by the API's own checks
        errors = getattr(exc, "errors", None)
        if callable(errors):
            return _jobs_page(
                request, web, session, filters, 0, form_errors=[e.get("msg", "") for e in errors()], form=form, status_code=422
            )
        raise
    return RedirectResponse(f"/jobs/{job.id}", status_code=303)


def _rows_html() -> Any:
    """The row macros of _rows.html (the same HTML as the pages render)."""
    return templates.env.get_template("_rows.html").module


# A job committed a little after the page read its rows may carry an earlier created_at: look back this far.
NEW_JOBS_SLACK = timedelta(seconds=10)


@dataclass(frozen=True)
class LiveFilters:
    """The jobs page's filters, as its live table sends them back, and when the page read its rows."""

    filters: dict[str, str]
    since: datetime | None


def _live_filters(status: str = "", task: str = "", precision: str = "", model: str = "", key: str = "", since: str = "") -> LiveFilters:
    filters = {
        "status": _check_filter("status", status, allowed=ALL_STATUSES),
        "task": _check_filter("task", task, TASK_PATTERN),
        "precision": _check_filter("precision", precision, allowed=PRECISIONS),
        "model": _check_filter("model", model, MODEL_PATTERN),
        "key": _check_filter("key", key, KEY_ID_PATTERN),
    }
    try:
        when = datetime.fromisoformat(since) if since else None
    except ValueError:
        raise HTTPException(422, f"since={since[:40]!r} is not an ISO 8601 time: reload the page") from None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return LiveFilters(filters, when)


def _live_rows(
    request: Request, caller: permissions.Caller, ids: list[str], live: LiveFilters
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The rows of the jobs `ids` the caller may read; and, with `live.since`, the rows of the other jobs created
    since then that match the page's filters and that the caller may list (oldest first, with their HTML)."""
    with request.app.state.sessions() as session:
        jobs = [j for j in session.scalars(select(Job).where(Job.id.in_(ids))) if permissions.can_read(caller, j)]
        new: list[Job] = []
        if live.since is not None:
            team = None if permissions.is_admin(caller) else caller.team
            conds = store.job_filters(team=team, **{k: v or None for k, v in live.filters.items()})
            query = select(Job).where(*conds, Job.created_at >= live.since - NEW_JOBS_SLACK, Job.id.not_in(ids))
            new = [j for j in session.scalars(query.order_by(Job.created_at, Job.id).limit(PAGE_SIZE)) if permissions.can_read(caller, j)]
        found = [j.id for j in jobs + new]
        models, rounds = aggregates.models_of(session, found), rounds_used(session, found)
        labels = row_labels(session, jobs + new)
        rows = {j.id: job_row(j, models[j.id], rounds.get(j.id, 0), labels[j.id]) for j in jobs + new}
    macros = _rows_html()
    return {j.id: rows[j.id] for j in jobs}, [rows[j.id] | {"html": str(macros.job_tr(rows[j.id]))} for j in new]


@router.get("/jobs/live", response_class=EventSourceResponse)
async def jobs_live(
    request: Request, web: Web, live: Annotated[LiveFilters, Depends(_live_filters)], ids: str = ""
) -> AsyncIterator[ServerSentEvent]:
    """The jobs table's rows, sent again whenever one changes (event `job`), for the ids the page shows. With
    `since` (when the page read its rows) and the page's filters: each job created since then that matches them
    and that the key may list (event `new_job`, its row and the row's HTML); it is followed like the others.
    At SIGTERM the stream closes with `service_stopping` (app/streams.py); the page reconnects by itself."""
    wanted = [i for i in ids.split(",") if re.fullmatch(JOB_ID_PATTERN, i)][:200]
    runner = request.app.state.runner
    last = service_stopping("the page reconnects when it is back")
    async for event in until_service_stops(runner, _jobs_live(request, runner, web, live, wanted), last):
        yield event


async def _jobs_live(
    request: Request, runner: Any, web: WebSession, live: LiveFilters, wanted: list[str]
) -> AsyncIterator[ServerSentEvent]:
    last: dict[str, dict[str, Any]] = {}
    while not await request.is_disconnected():
        changed = [runner.change_event(j) for j in wanted]  # taken before the read: no change is missed
        rows, new = await asyncio.to_thread(_live_rows, request, web.caller, wanted, live)
        for job_id, row in rows.items():
            if last.get(job_id) != row:
                last[job_id] = row
                yield ServerSentEvent(data=row, event="job")
        for row in new[: max(0, 400 - len(wanted))]:  # a bound on what one page follows
            wanted.append(row["id"])
            last[row["id"]] = {k: v for k, v in row.items() if k != "html"}
            yield ServerSentEvent(data=row, event="new_job")
        # Woken by this process's runner; every second regardless, for jobs another process runs or submits.
        waits = [asyncio.ensure_future(ev.wait()) for ev in changed]
        try:
            if waits:
                await asyncio.wait(waits, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(1.0)
        finally:  # also when the stream is stopped here (the service stops, the client leaves)
            for w in waits:
                w.cancel()


def _previous_best(attempts: list[Attempt], chosen: Attempt) -> Attempt | None:
    earlier = [a for a in attempts if a.id < chosen.id and a.verdict == "ok" and a.score is not None]
    return max(earlier, key=lambda a: (a.score, -a.id)) if earlier else None


def _diff(old: Attempt | None, new: Attempt, numbers: dict[int, int]) -> list[tuple[str, str]]:
    if old is None:
        return []
    return list(source_diff(old.source, new.source, f"attempt {numbers[old.id]}", f"attempt {numbers[new.id]}")[0])


def _review_status(session: Any, job_id: str) -> dict[int, str]:
    return dict(session.execute(select(Review.attempt_id, Review.status).where(Review.job_id == job_id)).all())


@router.get("/jobs/{job_id}/rows")
def job_rows(job_id: str, web: Web, session: SessionDep, chosen: str = "") -> JSONResponse:
    """The job page's attempts and LLM-calls rows as it renders them (HTML), for its live updates."""
    job = deps.readable_job(session, web.caller, job_id, detail=True)
    chosen_id = int(chosen) if chosen.isdigit() and len(chosen) < 10 else None
    macros = _rows_html()
    body = {
        "attempts": str(macros.attempt_rows(job, chosen_id, _review_status(session, job.id))),
        "llm_calls": str(macros.llm_call_rows(job)),
    }
    return JSONResponse(body, headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_page(request: Request, job_id: str, web: Web, session: SessionDep, attempt: str = "") -> HTMLResponse:
    try:
        with as_http():
            detail: JobDetail = jobs_service.detail(session, web.caller, job_id)
    except HTTPException as exc:
        if exc.status_code == 404:
            return problem(request, web, 404, f"no job {job_id[:64]!r} visible to this key: your team's jobs are listed at /jobs")
        return problem(request, web, exc.status_code, str(exc.detail))
    job = deps.readable_job(session, web.caller, job_id, detail=True)
    wanted = int(attempt) if attempt.isdigit() and len(attempt) < 10 else None  # anything else: the best attempt
    chosen = next((a for a in job.attempts if a.id == wanted), None) if wanted else None
    if chosen is None and job.attempts:
        chosen = next((a for a in job.attempts if a.id == job.best_attempt_id), job.attempts[-1])
    previous = _previous_best(job.attempts, chosen) if chosen else None
    events = store.events_after(session, job.id, 0, limit=2000)
    can_act = permissions.can_act(web.caller, job)
    review_status = _review_status(session, job.id)
    numbers = names.numbered(job.attempts)
    return render(
        request,
        "job.html",
        web,
        job=job,
        title=names.task_titles(session, [job.task])[job.task],
        numbers=numbers,
        answer_refused="" if can_act else _why_no_answer(web.caller, job, session),
        detail=detail,
        detail_json=detail.model_dump_json(),
        chosen=chosen,
        previous=previous,
        diff=_diff(previous, chosen, numbers) if chosen else [],
        events=events,
        can_act=can_act,
        can_cancel=can_act and job.status in ACTIVE_STATUSES,
        can_resume=can_act and job.status in (CANCELLED, FAILED),
        waiting=job.status == WAITING,
        last_event_id=events[-1].id if events else 0,
        review_status=review_status,
    )


def _why_no_answer(caller: permissions.Caller, job: Job, session: Any) -> str:
    """Why this key gets no answer box on a waiting job (permissions.can_act: the submitting key or an admin)."""
    owner = names.key_names(session, [job.api_key_id]).get(job.api_key_id or "", "")
    by = f"key {job.api_key_id} ({owner})" if job.api_key_id else "a key since revoked or deleted"
    return (
        f"Only the key that submitted this job ({by}) or an admin answers its questions; this key is a {caller.role}. "
        "Ask its owner to answer, or an admin."
    )


def _act(request: Request, web: WebSession, job_id: str, csrf: str, action: Any) -> Response:
    if (refused := _csrf_or_403(request, web, csrf)) is not None:
        return refused
    try:
        with as_http():
            action()
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back=f"/jobs/{quote(job_id)}")
    except Exception as exc:
        errors = getattr(exc, "errors", None)
        if callable(errors):
            return problem(request, web, 422, "; ".join(e.get("msg", "") for e in errors()), back=f"/jobs/{quote(job_id)}")
        raise
    return RedirectResponse(f"/jobs/{quote(job_id)}", status_code=303)


@router.post("/jobs/{job_id}/cancel")
def cancel(request: Request, job_id: str, web: Web, session: SessionDep, runner: RunnerDep, csrf: Csrf) -> Response:
    return _act(request, web, job_id, csrf, lambda: jobs_service.cancel(session, web.caller, job_id, runner))


@router.post("/jobs/{job_id}/resume")
def resume(request: Request, job_id: str, web: Web, session: SessionDep, settings: SettingsDep, runner: RunnerDep, csrf: Csrf) -> Response:
    return _act(
        request, web, job_id, csrf, lambda: jobs_service.resume(session, web.caller, job_id, settings, request.app.state.evaluation, runner)
    )


@router.post("/jobs/{job_id}/answer")
def answer(
    request: Request,
    job_id: str,
    web: Web,
    session: SessionDep,
    runner: RunnerDep,
    csrf: Csrf,
    answer: Annotated[str, Form(max_length=20000)] = "",
    question_id: Annotated[str, Form(max_length=160)] = "",
) -> Response:
    def act() -> None:
        try:
            body = AnswerIn(answer=answer, question_id=question_id or None)
        except ValidationError as exc:
            raise HTTPException(422, "answer: " + "; ".join(e["msg"] for e in exc.errors())) from None
        jobs_service.answer(session, web.caller, job_id, body, request.app.state.evaluation, runner)

    return _act(request, web, job_id, csrf, act)


# --- leaderboard, costs, reviews ---------------------------------------------------------------------------


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard_page(
    request: Request, web: Web, session: SessionDep, model: str = "", precision: str = "", sanitizer_clean: bool = False
) -> HTMLResponse:
    try:
        _check_filter("model", model, MODEL_PATTERN)
        _check_filter("precision", precision, allowed=PRECISIONS)
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back="/leaderboard")
    data = insights.leaderboard(session, web.caller, model=model or None, precision=precision or None, sanitizer_clean=sanitizer_clean)  # type: ignore[arg-type]
    return render(
        request,
        "leaderboard.html",
        web,
        data=data,
        data_json=data.model_dump_json(),
        model=model,
        precision=precision,
        sanitizer_clean=sanitizer_clean,
    )


@router.get("/costs", response_class=HTMLResponse)
def costs_page(request: Request, web: Web, session: SessionDep, model: str = "", days: int = 30) -> HTMLResponse:
    try:
        _check_filter("model", model, MODEL_PATTERN)
        if not 1 <= days <= 3660:
            raise HTTPException(422, f"days={days}: choose 1 to 3660")
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back="/costs")
    data = insights.costs(session, web.caller, model=model or None, days=days, limit=100)
    visible = permissions.visible_jobs(web.caller)
    return render(
        request,
        "costs.html",
        web,
        data=data,
        data_json=data.model_dump_json(),
        model=model,
        days=days,
        known_models=aggregates.known_models(session, visible),
    )


@router.get("/reviews", response_class=HTMLResponse)
def reviews_page(request: Request, web: Web, session: SessionDep, status: str = "pending", offset: int = 0) -> HTMLResponse:
    try:
        _check_filter("status", status, allowed=REVIEW_STATUSES)
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back="/reviews")
    rows, total = list_reviews(session, permissions.visible_jobs(web.caller), status=status or None, limit=PAGE_SIZE, offset=max(0, offset))
    items = [(review_out(r), permissions.can_review(web.caller, r.job)) for r in rows]
    flagged, correct = flagged_share(session, permissions.visible_jobs(web.caller))
    numbers = names.attempt_numbers(session, [r.job_id for r in rows])
    titles = names.task_titles(session, [r.job.task for r in rows])
    return render(
        request,
        "reviews.html",
        web,
        items=items,
        flagged=flagged,
        correct=correct,
        numbers=numbers,
        titles=titles,
        total=total,
        status=status,
        statuses=REVIEW_STATUSES,
        offset=max(0, offset),
        page_size=PAGE_SIZE,
        may_review=permissions.may_review(web.caller),
    )


@router.post("/reviews/{attempt_id}")
def decide_review(
    request: Request,
    attempt_id: int,
    web: Web,
    session: SessionDep,
    csrf: Csrf,
    decision: Annotated[str, Form(max_length=10)] = "",
    note: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    if (refused := _csrf_or_403(request, web, csrf)) is not None:
        return refused
    try:
        body = ReviewDecision.model_validate({"decision": decision, "note": note})
        with as_http():
            decide(session, web.caller, attempt_id, body)
    except ValidationError as exc:
        return problem(request, web, 422, "; ".join(_errors_of(exc)), back="/reviews")
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back="/reviews")
    return RedirectResponse("/reviews", status_code=303)
