"""The jobs list: its table (filtered, sorted, paged; visibility applied in SQL by app/services/dashboard.py), the
submit form (its fields from the job spec, graph.contract), and the live table's stream (`/jobs/live`)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import ValidationError

from bench_tasks import all_tasks
from graph.contract import DEFAULT_DEBUG, DEFAULT_PRECISION, DEFAULT_ROUNDS, DEFAULT_SIZES, PRECISIONS, knob

from .. import permissions
from ..api import deps
from ..api.deps import RunnerDep, SessionDep, SettingsDep
from ..api.errors import as_http
from ..bounds import JOB_ID_PATTERN, KEY_ID_PATTERN, MODEL_PATTERN, TASK_PATTERN
from ..permissions import Caller
from ..schemas import MAX_REFERENCE_BYTES, JobSubmit
from ..services import dashboard, web_sessions
from ..services import jobs as jobs_service
from ..streams import service_stopping, until_service_stops
from .base import PAGE_SIZE, Csrf, StreamSlot, Web, check_filter, check_offset, csrf_or_403, errors_of, render, templates
from .session import WebSession

router = APIRouter(include_in_schema=False)
# The submit form's task until one is chosen: the smallest kernel (the README's tour uses it), not the first by name.
DEFAULT_TASK = "vector_add"
ROLE_MODELS = ("*", "planner", "coder", "compiler", "debugger")


def role_models(form: dict[str, Any]) -> dict[str, str]:
    """The models a submit or campaign form asks for, per role (`model_all` is every role's, "*"); blanks left out."""
    fields = {role: str(form.get(f"model_{'all' if role == '*' else role}", "")).strip() for role in ROLE_MODELS}
    return {role: model for role, model in fields.items() if model}


# The submit form's fields from the job spec (graph.contract): defaults, bounds and choices.
FORM_KNOBS = {name: knob(name) for name in ("precision", "rounds", "debug", "sizes", "sanitize")}


def _benchmark_tasks() -> list[tuple[str, list[str]]]:
    return [(t.name, list(t.prototypes)) for t in all_tasks()]


def row_labels(session: Any, jobs: list[Any]) -> dict[str, dict[str, Any]]:
    """Per job: its title (a custom kernel's own name), its owner (the key's name) and its campaign (id, name)."""
    titles = dashboard.task_titles(session, (j.task for j in jobs))
    owners = dashboard.key_names(session, (j.api_key_id for j in jobs))
    campaigns = dashboard.campaigns_of(session, (j.id for j in jobs))
    return {
        j.id: {
            "title": titles.get(j.task, j.task),
            "owner": owners.get(j.api_key_id or "", ""),
            "campaign_id": campaigns.get(j.id, ("", ""))[0],
            "campaign": campaigns.get(j.id, ("", ""))[1],
        }
        for j in jobs
    }


def job_row(job: Any, models: list[str], rounds: int, labels: dict[str, Any] | None = None) -> dict[str, Any]:
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


SORT_CHOICES = tuple(f"{sign}{name}" for name in dashboard.SORTS for sign in ("", "-"))


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
    """The jobs page's filters, sort and offset within the API's bounds: BadQuery (422) for the first that is not."""
    check_filter("status", filters["status"], allowed=dashboard.ALL_STATUSES)
    check_filter("task", filters["task"], TASK_PATTERN)
    check_filter("precision", filters["precision"], allowed=PRECISIONS)
    check_filter("model", filters["model"], MODEL_PATTERN)
    check_filter("key", filters["key"], KEY_ID_PATTERN)
    check_filter("sort", filters["sort"], allowed=SORT_CHOICES)
    check_offset(offset)


def _job_rows(session: Any, caller: Caller, filters: dict[str, str], offset: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the jobs `caller` may read that match `filters`, as table rows (job_row), and how many match in all."""
    jobs, total = dashboard.jobs_page(
        session, caller, dashboard.JobFilters.of(filters), sort=filters["sort"], limit=PAGE_SIZE, offset=offset
    )
    return table_rows(session, jobs), total


def table_rows(session: Any, jobs: list[Any]) -> list[dict[str, Any]]:
    """The table's rows of `jobs` (job_row), with their models, rounds used and labels read in one query each."""
    ids = [j.id for j in jobs]
    models, rounds = dashboard.models_of(session, ids), dashboard.rounds_used(session, ids)
    labels = row_labels(session, jobs)
    return [job_row(j, models[j.id], rounds.get(j.id, 0), labels[j.id]) for j in jobs]


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
    _check_jobs_query(filters, offset)  # a bad value: the error page, linking back here (base.BadQuery)
    caller = web.caller
    live_since = dashboard.utcnow().isoformat()  # read before the rows: the live table adds the jobs created since (jobs_live)
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
        statuses=dashboard.ALL_STATUSES,
        sorts=dashboard.SORTS,
        tasks=_benchmark_tasks(),
        default_task=DEFAULT_TASK,
        known_models=dashboard.known_models(session, caller),
        can_submit=permissions.can_submit(caller),
        cannot_run=_cannot_run(request),
        form_errors=form_errors or [],
        form=form or {},
        role_models=ROLE_MODELS,
        knobs=FORM_KNOBS,
    )


def _cannot_run(request: Request) -> str:
    """Why this service runs no job (no GPU found, none configured: what /health's gpu_note says), or ""."""
    evaluation = request.app.state.evaluation
    return "" if evaluation.can_run_jobs else evaluation.note


def _submission(form: dict[str, Any], upload: bytes | None) -> dict[str, Any]:
    """The JobSubmit body a submit form describes (validated by JobSubmit itself, checked by the service as the API's)."""
    body: dict[str, Any] = {
        "precision": form.get("precision") or DEFAULT_PRECISION,
        "rounds": form.get("rounds") or DEFAULT_ROUNDS,
        "debug": form.get("debug") or DEFAULT_DEBUG,  # the spec's default (it was 0 here, 3 in the API)
        "sizes": form.get("sizes") or DEFAULT_SIZES,
        "sanitize": form.get("sanitize") or FORM_KNOBS["sanitize"].default,
        "models": role_models(form),
        "manual": form.get("manual") == "on",
    }
    if form.get("kind") == "custom":
        source = upload.decode("utf-8", errors="strict") if upload else form.get("custom_source", "")
        body["custom"] = {
            "name": form.get("custom_name", ""),
            "prototype": form.get("custom_prototype", ""),
            "args": _json_field("custom kernel arguments", form.get("custom_args", "")),
            "sizes": _json_field("custom kernel sizes", form.get("custom_sizes", "")),
            "baseline_cu": source,
        }
    elif form.get("kind") == "pytorch":  # the reference's precision is the job's (the form's Precision)
        source = upload.decode("utf-8", errors="strict") if upload else form.get("pytorch_source", "")
        sizes = form.get("pytorch_sizes", "").strip()
        body["pytorch"] = {
            "name": form.get("pytorch_name", ""),
            "reference_py": source,
            "sizes": _json_field("PyTorch reference sizes", sizes) if sizes else [],
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
            f"{name}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); see the example under the field"
        ) from None
    except RecursionError:
        raise FormProblem(f"{name}: JSON nested too deeply; see the example under the field") from None
    except ValueError:  # int() past sys.get_int_max_str_digits
        raise FormProblem(f"{name}: a number in it is too long; see the example under the field") from None


def _upload(file: UploadFile | None, limit: int, what: str) -> bytes | None:
    """An uploaded file's bytes (None: none chosen); over `limit` bytes is a 413 naming the limit."""
    data = file.file.read(limit + 1) if file is not None and file.filename else None
    if data is not None and len(data) > limit:
        raise HTTPException(413, f"the uploaded {what} is over {limit} bytes")
    return data


def _form_errors(exc: Exception) -> tuple[list[str], int] | None:
    """What the form shows for a refused submission (and its status), or None: not a refusal."""
    if isinstance(exc, FormProblem):
        return [str(exc)], 422
    if isinstance(exc, UnicodeDecodeError):
        return ["the uploaded file is not UTF-8 text"], 422
    if isinstance(exc, ValidationError):
        return errors_of(exc), 422
    if isinstance(exc, HTTPException):
        return [str(exc.detail)], exc.status_code
    errors = getattr(exc, "errors", None)  # a RequestValidationError raised by the API's own checks
    return ([e.get("msg", "") for e in errors()], 422) if callable(errors) else None


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
    sanitize: Annotated[str, Form(max_length=8)] = "",
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
    pytorch_name: Annotated[str, Form(max_length=64)] = "",
    pytorch_sizes: Annotated[str, Form(max_length=20000)] = "",
    pytorch_source: Annotated[str, Form()] = "",
    pytorch_file: Annotated[UploadFile | None, File()] = None,
) -> Response:
    if (refused := csrf_or_403(request, web, csrf)) is not None:
        return refused
    form = {k: v for k, v in locals().items() if isinstance(v, str) and k not in ("csrf",)}
    filters = {"status": "", "task": "", "precision": "", "model": "", "key": "", "sort": "-created"}
    try:
        caller = deps.submitter(web.caller)
        if kind == "pytorch":
            upload = _upload(pytorch_file, MAX_REFERENCE_BYTES, "reference file")
        else:
            upload = _upload(custom_file, settings.max_source_bytes, ".cu (CUDAMASTER_SERVICE__MAX_SOURCE_BYTES)")
        body = JobSubmit.model_validate(_submission(form, upload), strict=False)  # a form's numbers are text
        with as_http():
            job = jobs_service.submit(session, caller, body, settings, request.app.state.tree.agent, request.app.state.evaluation, runner)
    except Exception as exc:
        if (shown := _form_errors(exc)) is None:
            raise
        return _jobs_page(request, web, session, filters, 0, form_errors=shown[0], form=form, status_code=shown[1])
    return RedirectResponse(f"/jobs/{job.id}", status_code=303)


def _rows_html() -> Any:
    """The row macros of _rows.html (the same HTML as the pages render)."""
    return templates.env.get_template("_rows.html").module


@dataclass(frozen=True)
class LiveFilters:
    """The jobs page's filters, as its live table sends them back, and when the page read its rows."""

    filters: dict[str, str]
    since: datetime | None


def _live_filters(status: str = "", task: str = "", precision: str = "", model: str = "", key: str = "", since: str = "") -> LiveFilters:
    filters = {
        "status": check_filter("status", status, allowed=dashboard.ALL_STATUSES),
        "task": check_filter("task", task, TASK_PATTERN),
        "precision": check_filter("precision", precision, allowed=PRECISIONS),
        "model": check_filter("model", model, MODEL_PATTERN),
        "key": check_filter("key", key, KEY_ID_PATTERN),
    }
    try:
        when = datetime.fromisoformat(since) if since else None
    except ValueError:
        raise HTTPException(422, f"since={since[:40]!r} is not an ISO 8601 time: reload the page") from None
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return LiveFilters(filters, when)


def _live_rows(
    request: Request, web: WebSession, ids: list[str], live: LiveFilters
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]] | None:
    """The rows of the jobs `ids` the session's key may read; and, with `live.since`, the rows of the other jobs
    created since then that match the page's filters and that it may list (oldest first, with their HTML).
    Visibility is in the queries (app/services/dashboard.py), before their LIMIT. None: the session has ended since
    the stream opened (signed out, expired, its key revoked), so the stream sends nothing more."""
    with request.app.state.sessions() as session:
        caller = web_sessions.signed_in(session, web.session_id)  # the key as it is now (its team, its role)
        if caller is None:
            return None
        jobs = dashboard.jobs_by_id(session, caller, ids)
        new = (
            []
            if live.since is None
            else dashboard.jobs_since(session, caller, dashboard.JobFilters.of(live.filters), live.since, ids, PAGE_SIZE)
        )
        rows = {row["id"]: row for row in table_rows(session, jobs + new)}
    macros = _rows_html()
    return {j.id: rows[j.id] for j in jobs}, [rows[j.id] | {"html": str(macros.job_tr(rows[j.id]))} for j in new]


@router.get("/jobs/live", response_class=EventSourceResponse)
async def jobs_live(
    request: Request, web: Web, _slot: StreamSlot, live: Annotated[LiveFilters, Depends(_live_filters)], ids: str = ""
) -> AsyncIterator[ServerSentEvent]:
    """The jobs table's rows, sent again whenever one changes (event `job`), for the ids the page shows. With
    `since` (when the page read its rows) and the page's filters: each job created since then that matches them
    and that the key may list (event `new_job`, its row and the row's HTML); it is followed like the others.
    It holds one of the key's stream slots (StreamSlot): past CUDAMASTER_SERVICE__MAX_STREAMS_PER_KEY, a 429.
    It ends when the session does (sign-out, expiry, the key revoked): the session is read again at every refresh.
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
        read = await asyncio.to_thread(_live_rows, request, web, wanted, live)
        if read is None:  # the session ended: the stream does too (the page's reconnect is sent to sign in)
            return
        rows, new = read
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
