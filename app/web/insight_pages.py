"""The leaderboard, costs and review-queue pages, read through app/services (insights, reviews, dashboard) with the
signed-in key: a page shows what that key may read."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from graph.contract import PRECISIONS

from .. import permissions
from ..api.deps import SessionDep
from ..api.errors import as_http
from ..bounds import MODEL_PATTERN, SUITE_ID_PATTERN
from ..schemas import ReviewDecision
from ..services import dashboard, insights, suites
from ..services.reviews import decide, review_out
from .base import PAGE_SIZE, Csrf, Web, check_filter, csrf_or_403, errors_of, problem, render

router = APIRouter(include_in_schema=False)


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard_page(
    request: Request, web: Web, session: SessionDep, model: str = "", precision: str = "", sanitizer_clean: bool = False, suite: str = ""
) -> HTMLResponse:
    check_filter("model", model, MODEL_PATTERN)  # a bad value: the error page, linking back here (base.BadQuery)
    check_filter("precision", precision, allowed=PRECISIONS)
    check_filter("suite", suite, SUITE_ID_PATTERN)
    with as_http():  # another key's suite: the 404 page
        data = insights.leaderboard(
            session,
            web.caller,
            model=model or None,
            precision=precision or None,  # type: ignore[arg-type]
            sanitizer_clean=sanitizer_clean,
            suite=suite or None,
        )
    return render(
        request,
        "leaderboard.html",
        web,
        data=data,
        data_json=data.model_dump_json(),
        model=model,
        precision=precision,
        sanitizer_clean=sanitizer_clean,
        suite=suite,
        suites=suites.listing(session, web.caller),
    )


@router.get("/costs", response_class=HTMLResponse)
def costs_page(request: Request, web: Web, session: SessionDep, model: str = "", days: str = "") -> HTMLResponse:
    check_filter("model", model, MODEL_PATTERN)
    window, note = cost_window(days)
    data = insights.costs(session, web.caller, model=model or None, days=window, limit=100)
    return render(
        request,
        "costs.html",
        web,
        data=data,
        data_json=data.model_dump_json(),
        model=model,
        days=window,
        days_note=note,
        today=dashboard.utcnow().date().isoformat(),
        titles=dashboard.task_titles(session, [j.task for j in data.per_job]),
        known_models=dashboard.known_models(session, web.caller),
    )


DEFAULT_DAYS, MAX_DAYS = 30, 3660


def cost_window(days: str) -> tuple[int, str]:
    """The costs page's window in days, and a note when `days` was not one (the default window is shown instead of
    an error page: a hand-edited address still shows the costs)."""
    if not days:
        return DEFAULT_DAYS, ""
    if days.strip().isdecimal() and len(days) <= 8 and 1 <= int(days) <= MAX_DAYS:  # isdigit() holds for "²"
        return int(days), ""
    return DEFAULT_DAYS, f"days={days[:20]!r} is not a whole number of days from 1 to {MAX_DAYS}: showing the last {DEFAULT_DAYS} days"


@router.get("/reviews", response_class=HTMLResponse)
def reviews_page(request: Request, web: Web, session: SessionDep, status: str = "pending", offset: int = 0) -> HTMLResponse:
    check_filter("status", status, allowed=dashboard.REVIEW_STATUSES)
    rows, total = dashboard.reviews_page(session, web.caller, status or None, limit=PAGE_SIZE, offset=max(0, offset))
    items = [(review_out(r), dashboard.can_review(web.caller, r)) for r in rows]
    flagged, correct = dashboard.flagged(session, web.caller)
    numbers = dashboard.attempt_numbers(session, [r.job_id for r in rows])
    titles = dashboard.task_titles(session, [r.job.task for r in rows])
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
        statuses=dashboard.REVIEW_STATUSES,
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
    if (refused := csrf_or_403(request, web, csrf)) is not None:
        return refused
    try:
        body = ReviewDecision.model_validate({"decision": decision, "note": note})
        with as_http():
            decide(session, web.caller, attempt_id, body)
    except ValidationError as exc:
        return problem(request, web, 422, "; ".join(errors_of(exc)), back="/reviews")
    except HTTPException as exc:
        return problem(request, web, exc.status_code, str(exc.detail), back="/reviews")
    return RedirectResponse("/reviews", status_code=303)
