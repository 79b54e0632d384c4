"""Start a campaign from the dashboard (`/campaigns/new`): the form's fields derive from the campaign spec
(app/campaigns/schemas.py: CampaignSubmit, Selection, AgentConfig) as the job form derives from the job spec:
defaults, bounds, choices and help are read from the models, never written here again. Sending it calls the same
service function as POST /api/v1/campaigns (app/services/campaigns.create) with the signed-in key: the same
permission (a key that may submit jobs), the same checks, the same refusals, shown on the form."""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError

from bench_tasks import all_tasks

from .. import permissions
from ..api import deps
from ..api.deps import SessionDep
from ..api.errors import as_http
from ..campaigns.schemas import AgentConfig, CampaignSubmit, Selection
from ..services import campaigns as campaigns_service
from .base import Csrf, Web, csrf_or_403, errors_of, render
from .jobs_pages import ROLE_MODELS, role_models
from .session import WebSession

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class SpecField:
    """One field of the campaign spec as the form shows it."""

    name: str
    default: Any
    min: float | None
    max: float | None
    choices: tuple[Any, ...]
    help: str
    optional: bool


def _literal(annotation: Any) -> tuple[Any, ...]:
    """The choices of a Literal annotation (or of an optional one); () for anything else."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return next((c for a in get_args(annotation) if (c := _literal(a))), ())
    return ()


def spec_field(model: type[BaseModel], name: str) -> SpecField:
    """`model`'s field `name`: its default, bounds (ge/gt, le/lt), choices, description, whether it may be empty."""
    info = model.model_fields[name]
    low = next(
        (
            m.ge if isinstance(m, annotated_types.Ge) else m.gt
            for m in info.metadata
            if isinstance(m, (annotated_types.Ge, annotated_types.Gt))
        ),
        None,
    )
    high = next(
        (
            m.le if isinstance(m, annotated_types.Le) else m.lt
            for m in info.metadata
            if isinstance(m, (annotated_types.Le, annotated_types.Lt))
        ),
        None,
    )
    optional = type(None) in get_args(info.annotation)
    default = info.get_default(call_default_factory=True)
    return SpecField(name, default, low, high, _literal(info.annotation), info.description or "", optional)  # type: ignore[arg-type]


def spec_fields() -> dict[str, SpecField]:
    """The form's fields: the agent's configuration, the selection's precision, the campaign's limits and caps."""
    agent = {n: spec_field(AgentConfig, n) for n in ("rounds", "debug", "sizes", "profile_mode", "profile_token_budget", "choose_flags")}
    limits = {n: spec_field(CampaignSubmit, n) for n in ("name", "max_in_flight", "max_cost_usd", "max_tokens")}
    return agent | limits | {"precision": spec_field(Selection, "precision"), "variants": spec_field(Selection, "variants")}


FIELDS = spec_fields()
CHOOSE_FLAGS = {"": None, "yes": True, "no": False}


def _number(text: str, kind: type) -> Any:
    """A number field's value: None when empty; the text itself when it is not a number (the spec's check says so)."""
    text = text.strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        return text


def submission(form: dict[str, str]) -> dict[str, Any]:
    """The CampaignSubmit body a campaign form describes (validated by CampaignSubmit itself)."""
    if form.get("pick") == "list":
        selection: dict[str, Any] = {"variants": [v.strip() for v in form.get("variants", "").replace(",", "\n").splitlines() if v.strip()]}
    else:
        selection = {k: form[k] for k in ("category", "precision") if form.get(k)}
    config: dict[str, Any] = {
        "rounds": _number(form.get("rounds", ""), int),
        "debug": _number(form.get("debug", ""), int),
        "sizes": form.get("sizes") or None,
        "profile_mode": form.get("profile_mode") or None,
        "profile_token_budget": _number(form.get("profile_token_budget", ""), int),
        "choose_flags": CHOOSE_FLAGS.get(form.get("choose_flags", ""), form.get("choose_flags")),
        "models": role_models(form),
    }
    body: dict[str, Any] = {
        "name": form.get("name", "").strip(),
        "selection": selection,
        "config": {k: v for k, v in config.items() if v is not None},
        "max_in_flight": _number(form.get("max_in_flight", ""), int) or FIELDS["max_in_flight"].default,
        "max_cost_usd": _number(form.get("max_cost_usd", ""), float),
        "max_tokens": _number(form.get("max_tokens", ""), int),
    }
    return body


def _categories() -> list[str]:
    return sorted({t.category for t in all_tasks()})


def _variants() -> list[str]:
    return [f"{t.name}/{p}" for t in all_tasks() for p in t.prototypes]


def form_page(
    request: Request, web: WebSession, *, form: dict[str, str] | None = None, errors: list[str] | None = None, status: int = 200
) -> HTMLResponse:
    evaluation = request.app.state.evaluation
    return render(
        request,
        "campaign_form.html",
        web,
        http_status=status,
        fields=FIELDS,
        form=form or {},
        form_errors=errors or [],
        categories=_categories(),
        variants=_variants(),
        role_models=ROLE_MODELS,
        can_submit=permissions.can_submit(web.caller),
        cannot_run="" if evaluation.can_run_jobs else evaluation.note,
    )


@router.get("/campaigns/new", response_class=HTMLResponse)
def new_campaign(request: Request, web: Web) -> HTMLResponse:
    return form_page(request, web)


Short = Annotated[str, Form(max_length=128)]
Number = Annotated[str, Form(max_length=24)]


@router.post("/campaigns/new", response_class=HTMLResponse)
def start_campaign(
    request: Request,
    web: Web,
    session: SessionDep,
    csrf: Csrf,
    name: Short = "",
    pick: Short = "filter",
    category: Short = "",
    precision: Short = "",
    variants: Annotated[str, Form(max_length=60_000)] = "",
    rounds: Number = "",
    debug: Number = "",
    sizes: Short = "",
    profile_mode: Short = "",
    profile_token_budget: Number = "",
    choose_flags: Short = "",
    max_in_flight: Number = "",
    max_cost_usd: Number = "",
    max_tokens: Number = "",
    model_all: Short = "",
    model_planner: Short = "",
    model_coder: Short = "",
    model_compiler: Short = "",
    model_debugger: Short = "",
) -> Response:
    """Start the campaign the form describes, as POST /api/v1/campaigns does (same service, same checks)."""
    if (refused := csrf_or_403(request, web, csrf)) is not None:
        return refused
    form = {k: v for k, v in locals().items() if isinstance(v, str) and k != "csrf"}
    try:
        caller = deps.submitter(web.caller)
        body = CampaignSubmit.model_validate(submission(form))
        evaluation, scheduler = request.app.state.evaluation, getattr(request.app.state, "campaigns", None)
        with as_http():
            campaign = campaigns_service.create(session, caller, body, evaluation, scheduler)
    except ValidationError as exc:
        return form_page(request, web, form=form, errors=errors_of(exc), status=422)
    except HTTPException as exc:
        return form_page(request, web, form=form, errors=[str(exc.detail)], status=exc.status_code)
    return RedirectResponse(f"/campaigns/{campaign.id}", status_code=303)
