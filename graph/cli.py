"""`cudamaster optimize` and `cudamaster resume`: one job in the terminal with live progress."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from gpu.ray import RAY_OPTION_HELP, evaluator_for_cli
from settings import ROLES, AgentSettings, load_settings

from .contract import (
    Answer,
    AttemptEvent,
    JobSpec,
    LlmCallEvent,
    NodeEvent,
    Outcome,
    Precision,
    ProfileMode,
    Question,
    SanitizeMode,
    SizeSet,
    knob,
)

# graph.runner (LangGraph, LangChain, the LLM clients) is imported by the commands that run a job, not here:
# `cudamaster --help` and the bench commands start without it.

console = Console()
# The job spec's knobs as options: default, bounds, choices (their literal types) and help from graph.contract.
ROUNDS, DEBUG, SIZES, PROFILE, PRECISION = (knob(n) for n in ("rounds", "debug", "sizes", "profile_mode", "precision"))
SANITIZE = knob("sanitize")


def _parse_models(models: list[str] | None) -> dict[str, str]:
    """--model M (every role) or --model role=M, repeatable."""
    out: dict[str, str] = {}
    for item in models or []:
        role, sep, model = item.partition("=")
        if not sep:
            out["*"] = item
        elif role not in ROLES:
            raise typer.BadParameter(f"unknown role {role!r} in --model {item}: use one of {', '.join(ROLES)}")
        else:
            out[role] = model
    return out


def _on_event(event: Any) -> None:
    if isinstance(event, NodeEvent):
        extra = ""
        if event.verdict:
            extra = f"  verdict=[bold]{event.verdict}[/]"
            if event.speedup is not None:
                extra += f"  P={event.speedup:.3f}"
        console.print(f"[dim]round {event.round}[/] {event.node}{extra}")
    elif isinstance(event, LlmCallEvent):
        console.print(
            f"[dim]    {event.role} ({event.model}): {event.input_tokens} in / {event.output_tokens} out, "
            f"{event.latency_s:.1f} s, ${event.cost_usd:.4f}[/]"
        )
    elif isinstance(event, AttemptEvent) and event.verdict != "ok":
        console.print(f"    [yellow]{event.attempt_id}: {event.verdict}[/] {event.message[:200]}")


def _read_answer(question: Question) -> str:
    console.rule(f"[bold]{question.role}[/]: {question.question}")
    console.print(question.prompt)
    console.rule("Type the answer; end with a line holding only '.' (or EOF)")
    lines = []
    for line in sys.stdin:
        if line.rstrip("\n") == ".":
            break
        lines.append(line)
    return "".join(lines)


def _report(outcome: Outcome) -> None:
    table = Table(title=f"job {outcome.job_id}")
    for col in ("round", "strategy", "verdict", "P", "tokens in/out", "cost $"):
        table.add_column(col)
    for r in outcome.rounds:
        table.add_row(
            str(r.round),
            r.strategy_title,
            r.verdict,
            "-" if r.score is None else f"{r.score:.3f}",
            f"{r.input_tokens}/{r.output_tokens}",
            f"{r.cost_usd:.4f}",
        )
    console.print(table)
    t = outcome.totals
    console.print(
        f"total: {t.input_tokens} input / {t.output_tokens} output tokens "
        f"({t.reasoning_tokens} reasoning, {t.cached_tokens} cached), ${t.cost_usd:.4f}"
    )
    style = {"finished": "green", "no_correct_kernel": "yellow"}.get(outcome.status, "red")
    console.print(f"[{style}]{outcome.status}[/]: {outcome.message}")
    if outcome.best:
        console.print(f"best kernel: {outcome.best.attempt_id} (P = {outcome.best.score:.3f})")
    console.print(f"job id: [bold]{outcome.job_id}[/] (resume with `cudamaster resume {outcome.job_id}`)")


NO_GPU = "NoGpuError: "  # runner._failure_message's prefix for the harness's NoGpuError


def _refuse_without_gpu(outcome: Outcome) -> None:
    """A job that failed because this machine has no GPU: one line saying what to do, exit 3 (no table, no
    `cudamaster resume` hint: resuming here cannot help)."""
    if outcome.status == "failed" and outcome.message.startswith(NO_GPU):
        why = outcome.message.removeprefix(NO_GPU).split(". ", 1)[0]
        Console(stderr=True).print(
            f"[red]error: no GPU: {why}.[/] Run on a machine with a GPU, set CUDAMASTER_HARNESS__GPU to a visible one, "
            "or use remote GPU workers (--ray ADDRESS or CUDAMASTER_RAY__ADDRESS).",
            soft_wrap=True,
        )
        raise typer.Exit(3)


def _drive(outcome: Outcome, checkpointer, settings: AgentSettings, interactive: bool, evaluator=None) -> Outcome:
    from .runner import resume_job

    while outcome.status == "waiting_for_input" and interactive and outcome.question:
        answer = Answer(question_id=outcome.question.question_id, text=_read_answer(outcome.question))
        outcome = resume_job(
            outcome.job_id, checkpointer=checkpointer, on_event=_on_event, answer=answer, settings=settings, evaluator=evaluator
        )
    return outcome


def _cluster_evaluator(ray: str | None, job_id: str):
    """The job's evaluator on the Ray cluster of --ray / CUDAMASTER_RAY__ADDRESS; None: the local GPU."""
    try:
        cluster = evaluator_for_cli(ray)
    except RuntimeError as exc:
        console.print(f"[red]error: {exc}[/]")
        raise typer.Exit(2) from None
    if cluster is None:
        return None
    console.print(f"[dim]Ray: {len(cluster.status()['gpus'])} GPU worker(s) at {cluster.settings.address}[/]")
    return cluster.for_job(job_id)


def _task_of(task: str | None, reference: Path | None, precision: str, ray: str | None) -> str | None:
    """The job's task: its name, or a PyTorch reference's (bench_tasks/pytorch: run in the sandbox, its prototype and
    shapes printed, registered with the harness in this process). Exits 2 with the reason where neither or both are
    given or the reference cannot be a task."""
    if (task is None) == (reference is None):
        console.print("[red]error: give a TASK (see `cudamaster bench list`) or --reference FILE (a PyTorch reference), one of them[/]")
        raise typer.Exit(2)
    if reference is None:
        return task
    from settings import get_ray_settings

    if ray or get_ray_settings().address:
        console.print("[red]error: --reference runs on this machine's GPU (its task lives in this process): leave out --ray[/]")
        raise typer.Exit(2)
    from bench_tasks.pytorch_cli import load_for_eval
    from bench_tasks.spec import register_task

    made = load_for_eval(reference, precision, None)
    register_task(made)
    return made.name


def _cap(max_usd: float | None, max_tokens: int | None) -> dict[str, Any] | None:
    """--max-usd / --max-tokens as the job spec's spending cap (None: no cap)."""
    return {"usd": max_usd, "tokens": max_tokens} if max_usd is not None or max_tokens is not None else None


def _print_errors(exc: ValidationError) -> None:
    for err in exc.errors():
        console.print(f"[red]--{'.'.join(map(str, err['loc']))}: {err['msg']}[/]")


def _run_job(spec: JobSpec, checkpoint_url: str | None, job_id: str | None, ray: str | None) -> Outcome:
    """Start the job and drive it (answering its questions at a terminal) to its outcome."""
    from .runner import close_checkpointer, make_checkpointer, new_job_id, start_job

    settings = load_settings().agent
    checkpointer = make_checkpointer(checkpoint_url)
    job_id = job_id or new_job_id()
    evaluator = _cluster_evaluator(ray, job_id)
    try:
        outcome = start_job(spec, job_id=job_id, checkpointer=checkpointer, on_event=_on_event, settings=settings, evaluator=evaluator)
        return _drive(outcome, checkpointer, settings, sys.stdin.isatty(), evaluator)
    finally:
        if evaluator is not None:  # its GPU workers go back to the cluster
            evaluator.cluster.close()
        close_checkpointer(checkpointer)


def optimize(
    task: Annotated[str | None, typer.Argument(help="task name, e.g. vector_add (see `cudamaster bench list`)")] = None,
    precision: Annotated[Precision, typer.Option("--precision", "-p", help=PRECISION.help)] = PRECISION.default,
    rounds: Annotated[int, typer.Option("--rounds", "-R", min=ROUNDS.min, max=ROUNDS.max, help=ROUNDS.help)] = ROUNDS.default,
    debug: Annotated[int, typer.Option("--debug", "-D", min=DEBUG.min, max=DEBUG.max, help=DEBUG.help)] = DEBUG.default,
    model: Annotated[list[str] | None, typer.Option("--model", help="MODEL for every role, or ROLE=MODEL; repeatable")] = None,
    sizes: Annotated[SizeSet, typer.Option(help=SIZES.help)] = SIZES.default,
    manual: Annotated[bool, typer.Option(help="answer every role yourself")] = False,
    replay: Annotated[str | None, typer.Option(help="re-run from a file of recorded responses (JSON lines)")] = None,
    profile: Annotated[ProfileMode, typer.Option(help=PROFILE.help)] = PROFILE.default,
    sanitize: Annotated[SanitizeMode, typer.Option(help=SANITIZE.help)] = SANITIZE.default,
    choose_flags: Annotated[
        bool | None, typer.Option("--choose-flags/--no-choose-flags", help="let the compiler role pick nvcc flags")
    ] = None,
    checkpoint_url: Annotated[
        str | None,
        typer.Option(help="checkpoints: sqlite:///path or postgresql://... (default: CUDAMASTER_CHECKPOINT_URL, the service's store)"),
    ] = None,
    job_id: Annotated[str | None, typer.Option(help="job id (default: a new random one)")] = None,
    max_usd: Annotated[float | None, typer.Option(help="spending cap: US dollars over all LLM calls")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="spending cap: input + output tokens over all LLM calls")] = None,
    ray: Annotated[str | None, typer.Option("--ray", help=RAY_OPTION_HELP)] = None,
    reference: Annotated[Path | None, typer.Option(help="a PyTorch reference (KernelBench format) as the task, at its own sizes")] = None,
) -> None:
    """Optimize one kernel: plan, code, compile, verify, profile, for R rounds."""
    try:
        spec = JobSpec.model_validate(
            dict(
                task=_task_of(task, reference, precision, ray),
                precision=precision,
                rounds=rounds,
                debug=debug,
                sizes=sizes,  # pydantic checks them
                models=_parse_models(model),
                manual=manual,
                replay_file=replay,
                profile_mode=profile,
                sanitize=sanitize,
                choose_flags=choose_flags,
                spending_cap=_cap(max_usd, max_tokens),
            )
        )
    except ValidationError as exc:
        _print_errors(exc)
        raise typer.Exit(2) from None
    outcome = _run_job(spec, checkpoint_url, job_id, ray)
    _refuse_without_gpu(outcome)
    _report(outcome)
    raise typer.Exit(0 if outcome.status in ("finished", "no_correct_kernel", "waiting_for_input") else 1)


def resume(
    job_id: Annotated[str, typer.Argument(help="the id printed by `cudamaster optimize`")],
    answer: Annotated[str | None, typer.Option(help="answer to the job's pending question (manual mode); '-' reads stdin")] = None,
    checkpoint_url: Annotated[
        str | None,
        typer.Option(help="checkpoints: sqlite:///path or postgresql://... (default: CUDAMASTER_CHECKPOINT_URL, the service's store)"),
    ] = None,
    ray: Annotated[str | None, typer.Option("--ray", help=RAY_OPTION_HELP)] = None,
) -> None:
    """Continue a job after a crash, a stop or a question."""
    from .runner import close_checkpointer, make_checkpointer, resume_job

    settings = load_settings().agent
    checkpointer = make_checkpointer(checkpoint_url)
    if answer == "-":
        answer = sys.stdin.read()
    evaluator = _cluster_evaluator(ray, job_id)
    try:
        outcome = resume_job(job_id, checkpointer=checkpointer, on_event=_on_event, answer=answer, settings=settings, evaluator=evaluator)
        outcome = _drive(outcome, checkpointer, settings, sys.stdin.isatty(), evaluator)
    finally:
        if evaluator is not None:
            evaluator.cluster.close()
        close_checkpointer(checkpointer)
    _refuse_without_gpu(outcome)
    _report(outcome)
    raise typer.Exit(0 if outcome.status in ("finished", "no_correct_kernel", "waiting_for_input") else 1)
