"""One job's page: its attempts (the chosen one's source, its diff against the previous best, its measurements and
profile), its LLM calls, its events; cancel, resume and answer a question. Read and done through app/services."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import ValidationError

from .. import permissions
from ..api.deps import RunnerDep, SessionDep, SettingsDep
from ..api.errors import as_http
from ..schemas import AnswerIn, JobDetail
from ..services import dashboard
from ..services import jobs as jobs_service
from ..services.compare import source_diff
from . import names
from .base import Csrf, Web, csrf_or_403, problem, render
from .jobs_pages import _rows_html
from .session import WebSession

router = APIRouter(include_in_schema=False)


def _previous_best(attempts: list[Any], chosen: Any) -> Any | None:
    earlier = [a for a in attempts if a.id < chosen.id and a.verdict == "ok" and a.score is not None]
    return max(earlier, key=lambda a: (a.score, -a.id)) if earlier else None


def _diff(old: Any | None, new: Any, numbers: dict[int, int]) -> list[tuple[str, str]]:
    if old is None:
        return []
    return list(source_diff(old.source, new.source, f"attempt {numbers[old.id]}", f"attempt {numbers[new.id]}")[0])


@router.get("/jobs/{job_id}/rows")
def job_rows(job_id: str, web: Web, session: SessionDep, chosen: str = "") -> JSONResponse:
    """The job page's attempts and LLM-calls rows as it renders them (HTML), for its live updates."""
    with as_http():
        job = dashboard.job_with_attempts(session, web.caller, job_id)
    chosen_id = int(chosen) if chosen.isdecimal() and len(chosen) < 10 else None  # isdigit() holds for "²"
    macros = _rows_html()
    body = {
        "attempts": str(macros.attempt_rows(job, chosen_id, dashboard.review_status(session, job.id))),
        "llm_calls": str(macros.llm_call_rows(job)),
    }
    return JSONResponse(body, headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_page(request: Request, job_id: str, web: Web, session: SessionDep, attempt: str = "") -> HTMLResponse:
    try:
        with as_http():
            detail: JobDetail = jobs_service.detail(session, web.caller, job_id)
            job = dashboard.job_with_attempts(session, web.caller, job_id)
    except HTTPException as exc:
        if exc.status_code == 404:
            return problem(request, web, 404, f"no job {job_id[:64]!r} visible to this key: your team's jobs are listed at /jobs")
        return problem(request, web, exc.status_code, str(exc.detail))
    wanted = int(attempt) if attempt.isdecimal() and len(attempt) < 10 else None  # anything else: the best attempt
    chosen = next((a for a in job.attempts if a.id == wanted), None) if wanted else None
    if chosen is None and job.attempts:
        chosen = next((a for a in job.attempts if a.id == job.best_attempt_id), job.attempts[-1])
    previous = _previous_best(job.attempts, chosen) if chosen else None
    events = dashboard.job_events(session, job.id)
    can_act = permissions.can_act(web.caller, job)
    review_status = dashboard.review_status(session, job.id)
    numbers = names.numbered(job.attempts)
    return render(
        request,
        "job.html",
        web,
        job=job,
        title=dashboard.task_titles(session, [job.task])[job.task],
        numbers=numbers,
        answer_refused="" if can_act else _why_no_answer(web.caller, job, session),
        detail=detail,
        detail_json=detail.model_dump_json(),
        chosen=chosen,
        previous=previous,
        diff=_diff(previous, chosen, numbers) if chosen else [],
        events=events,
        can_act=can_act,
        can_cancel=can_act and job.status in dashboard.ACTIVE_STATUSES,
        can_resume=can_act and job.status in (dashboard.CANCELLED, dashboard.FAILED),
        waiting=job.status == dashboard.WAITING,
        last_event_id=events[-1].id if events else 0,
        review_status=review_status,
    )


def _why_no_answer(caller: permissions.Caller, job: Any, session: Any) -> str:
    """Why this key gets no answer box on a waiting job (permissions.can_act: the submitting key or an admin)."""
    owner = dashboard.key_names(session, [job.api_key_id]).get(job.api_key_id or "", "")
    by = f"key {job.api_key_id} ({owner})" if job.api_key_id else "a key since revoked or deleted"
    return (
        f"Only the key that submitted this job ({by}) or an admin answers its questions; this key is a {caller.role}. "
        "Ask its owner to answer, or an admin."
    )


def _act(request: Request, web: WebSession, job_id: str, csrf: str, action: Any) -> Response:
    if (refused := csrf_or_403(request, web, csrf)) is not None:
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
