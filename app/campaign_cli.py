"""`cudamaster campaign run|status|report` (mounted by app/cli.py).

run and status talk to a running service (--url, --key; CUDAMASTER_CLIENT_URL, CUDAMASTER_CLIENT_KEY);
report reads the service's database directly (--database-url, like `cudamaster keys`), so it works
without the service and from stored data only."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from graph.contract import Precision, ProfileMode, SanitizeMode, SizeSet, knob

campaign_app = typer.Typer(no_args_is_help=True, help="Campaigns: the agent over a set of variants with one configuration.")

Url = Annotated[str, typer.Option(envvar="CUDAMASTER_CLIENT_URL", help="the service's address")]
Key = Annotated[str | None, typer.Option(envvar="CUDAMASTER_CLIENT_KEY", help="an API key (`cudamaster keys create`)")]
ACTIVE = ("running",)
# The agent's knobs as options: default, bounds, choices (their literal types) and help from graph.contract.
ROUNDS, DEBUG, SIZES, PROFILE, BUDGET, FLAGS = (
    knob(n) for n in ("rounds", "debug", "sizes", "profile_mode", "profile_token_budget", "choose_flags")
)
SANITIZE = knob("sanitize")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _request(method: str, url: str, key: str | None, path: str, body: dict[str, Any] | None = None, *, timeout: float = 60) -> Any:
    import httpx

    if not key:
        _fail("this needs an API key: --key or CUDAMASTER_CLIENT_KEY (create one with `cudamaster keys create --name NAME`)")
    try:
        r = httpx.request(
            method, url.rstrip("/") + "/api/v1" + path, json=body, timeout=timeout, headers={"Authorization": f"Bearer {key}"}
        )
    except httpx.HTTPError as exc:
        _fail(f"cannot reach the service at {url} ({exc}); start it with `cudamaster serve` or pass --url")
    if r.status_code >= 400:
        try:
            detail = r.json().get("detail")
        except ValueError:
            detail = r.text[:500]
        _fail(f"{method} {path}: {r.status_code}: {detail if isinstance(detail, str) else json.dumps(detail)}")
    return r.json()


def _line(c: dict[str, Any]) -> str:
    p = c["progress"]
    done = p["finished"] + p["no_correct_kernel"] + p["cancelled"] + p["failed"]
    return (
        f"{c['id']} {c['name']!r}: {c['status']}, {done}/{p['variants']} jobs ended ({p['correct']} with a correct kernel, "
        f"{p['running']} running, {p['queued']} queued, {p['not_started']} not started), ${p['cost_usd']:.4f}, "
        f"{p['tokens']} tokens. {c['message']}"
    )


def _watch(url: str, key: str | None, campaign_id: str, poll_s: float) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    c = _request("GET", url, key, f"/campaigns/{campaign_id}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        task = bar.add_task(campaign_id, total=c["progress"]["variants"])
        while True:
            p = c["progress"]
            done = p["finished"] + p["no_correct_kernel"] + p["cancelled"] + p["failed"]
            bar.update(
                task,
                completed=done,
                description=f"{campaign_id} {c['status']} ({p['running']} running, {p['correct']} correct, ${p['cost_usd']:.2f})",
            )
            if c["status"] not in ACTIVE:
                return c
            time.sleep(poll_s)
            c = _request("GET", url, key, f"/campaigns/{campaign_id}")


@campaign_app.command("run")
def run(
    url: Url = "http://127.0.0.1:8000",
    key: Key = None,
    name: Annotated[str, typer.Option(help="a name for the campaign")] = "",
    category: Annotated[str | None, typer.Option(help="only this category (see `cudamaster bench list`)")] = None,
    precision: Annotated[Precision | None, typer.Option(help="only this precision")] = None,
    variant: Annotated[list[str] | None, typer.Option(metavar="TASK/PRECISION", help="a variant, e.g. relu/bf16; repeatable")] = None,
    suite: Annotated[
        str | None, typer.Option(metavar="SUITE_ID", help="every task of a suite of this key (`cudamaster suite push`)")
    ] = None,
    rounds: Annotated[int, typer.Option(min=ROUNDS.min, max=ROUNDS.max, help=ROUNDS.help)] = ROUNDS.default,
    debug: Annotated[int, typer.Option(min=DEBUG.min, max=DEBUG.max, help=DEBUG.help)] = DEBUG.default,
    profile: Annotated[ProfileMode, typer.Option(help=PROFILE.help)] = PROFILE.default,
    profile_token_budget: Annotated[int | None, typer.Option(min=BUDGET.min, max=BUDGET.max, help=BUDGET.help)] = None,
    sanitize: Annotated[SanitizeMode, typer.Option(help=SANITIZE.help)] = SANITIZE.default,
    model: Annotated[
        list[str] | None, typer.Option(metavar="ROLE=MODEL", help="role planner, coder, compiler, debugger or * (every role); repeatable")
    ] = None,
    sizes: Annotated[SizeSet, typer.Option(help=SIZES.help)] = SIZES.default,
    choose_flags: Annotated[bool | None, typer.Option("--choose-flags/--no-choose-flags", help=FLAGS.help)] = None,
    max_in_flight: Annotated[int, typer.Option(help="jobs of the campaign at once")] = 4,
    max_cost_usd: Annotated[float | None, typer.Option(help="spending cap in US dollars")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="spending cap in tokens")] = None,
    wait: Annotated[bool, typer.Option(help="follow it with a progress bar until it stops")] = True,
    poll: Annotated[float, typer.Option(help="seconds between progress reads")] = 2.0,
) -> None:
    """Start a campaign on the service and follow it."""
    models: dict[str, str] = {}
    for item in model or []:
        role, sep, value = item.partition("=")
        if not sep:
            _fail(f"--model {item!r}: write ROLE=MODEL, e.g. coder=deepseek-reasoner")
        models[role] = value
    selection = {k: v for k, v in (("category", category), ("precision", precision), ("variants", variant), ("suite", suite)) if v}
    body = {
        "name": name,
        "selection": selection,
        "max_in_flight": max_in_flight,
        "max_cost_usd": max_cost_usd,
        "max_tokens": max_tokens,
        "config": {
            "rounds": rounds,
            "debug": debug,
            "profile_mode": profile,
            "sizes": sizes,
            "profile_token_budget": profile_token_budget,
            "models": models,
            "choose_flags": choose_flags,
            "sanitize": sanitize,
        },
    }
    c = _request("POST", url, key, "/campaigns", body)
    typer.echo(f"campaign {c['id']}: {c['progress']['variants']} variants")
    if wait:
        c = _watch(url, key, c["id"], poll)
    typer.echo(_line(c))


@campaign_app.command("status")
def status(
    campaign_id: Annotated[str | None, typer.Argument(help="a campaign id; none: list them")] = None,
    url: Url = "http://127.0.0.1:8000",
    key: Key = None,
    follow: Annotated[bool, typer.Option(help="follow it with a progress bar until it stops")] = False,
) -> None:
    """One campaign's progress, or the list of campaigns this key may read."""
    if campaign_id is None:
        page = _request("GET", url, key, "/campaigns")
        typer.echo(f"{page['total']} campaign(s)")
        for c in page["items"]:
            typer.echo(_line(c))
        return
    c = _watch(url, key, campaign_id, 2.0) if follow else _request("GET", url, key, f"/campaigns/{campaign_id}")
    typer.echo(_line(c))


@campaign_app.command("report")
def report(
    campaign_ids: Annotated[list[str], typer.Argument(help="one campaign, or several side by side (the first is the reference)")],
    out: Annotated[Path, typer.Option(help="directory for report.md, report.html and report.json")] = Path("campaign-report"),
    database_url: Annotated[str | None, typer.Option(help="the service's database (default: CUDAMASTER_SERVICE__DATABASE_URL)")] = None,
) -> None:
    """Write the report (Markdown, self-contained HTML, JSON) from the stored data."""
    from .campaigns.report import ReportError, summarize, to_html, to_markdown
    from .service_cli import _settings, database_session

    url = _settings(database_url=database_url).database_url
    with database_session(url) as session:
        try:
            summaries = [summarize(session, cid) for cid in campaign_ids]
        except ReportError as exc:
            _fail(str(exc))
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(to_markdown(summaries))
    (out / "report.html").write_text(to_html(summaries))
    (out / "report.json").write_text(json.dumps({"campaigns": [s.to_dict() for s in summaries]}, indent=1, default=str))
    typer.echo(f"wrote {out / 'report.md'}, {out / 'report.html'} and {out / 'report.json'}")
