"""`cudamaster bench import` and `bench eval --reference`: PyTorch references (KernelBench's format) as tasks.

Thin: bench_tasks.pytorch does the work (the files run only in the sandbox); this module is imported with the
`bench` commands, so it imports neither that package (numpy) nor torch until a command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bench_tasks.spec import DEFAULT_PRECISION

console = Console()
err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def import_references(
    path: Annotated[Path, typer.Argument(help="a folder of reference files (e.g. a KernelBench checkout's level1/); not copied")],
    precision: Annotated[str, typer.Option("--precision", "-p", help="fp32 or bf16: the candidates' buffer type")] = DEFAULT_PRECISION,
    json_out: Annotated[
        bool, typer.Option("--json", help="print the tasks made (name, C prototype, sizes) and the refused files as JSON")
    ] = False,
    seconds: Annotated[float, typer.Option(help="time limit of each file's sandboxed run")] = 120.0,
) -> None:
    """Make every reference file of a folder a task: run each in the sandbox, derive its C prototype; list refused files with their reasons."""
    from bench_tasks.harness.sandbox import SandboxUnavailable
    from bench_tasks.pytorch import Limits, ReferenceRefused, import_directory
    from bench_tasks.spec import TaskError

    try:
        imported = import_directory(path, precision=precision, limits=Limits(seconds=seconds))
    except (TaskError, ReferenceRefused) as exc:
        _fail(str(exc))
    except SandboxUnavailable as exc:
        _fail(str(exc), code=4)
    tasks = [
        {
            "name": t.name,
            "file": str(path / t.reference_name),
            "prototype": t.variant(precision).prototype.text,
            "sizes": t.size_list("paper"),
            "shapes": t.notes["shapes"],
        }
        for t in imported.tasks
    ]
    refused = [{"file": str(p), "kind": kind, "reason": why} for p, kind, why in imported.refused]
    if json_out:
        typer.echo(json.dumps({"precision": precision, "tasks": tasks, "refused": refused}, indent=1))
    else:
        for t in tasks:
            console.print(f"[green]task[/] {t['name']}  {t['prototype']}")
        for r in refused:
            console.print(f"[red]refused[/] {r['file']}: {r['reason']}")
        console.print(f"{len(tasks)} tasks, {len(refused)} files refused")
    raise typer.Exit(0 if tasks else 1)


def load_for_eval(reference: Path, precision: str, sizes_json: str | None):
    """The task of `bench eval --reference` (sizes: a JSON list of constant overrides, default the file's own)."""
    from bench_tasks.harness.sandbox import SandboxUnavailable
    from bench_tasks.pytorch import ReferenceRefused, load_reference
    from bench_tasks.spec import TaskError

    try:
        sizes = json.loads(sizes_json) if sizes_json else []
        if not isinstance(sizes, list) or not all(isinstance(s, dict) for s in sizes):
            raise TaskError('--reference-sizes is a JSON list of objects, e.g. [{"batch_size": 16, "dim": 1024}]')
        task = load_reference(reference, sizes=sizes, precision=precision)
    except json.JSONDecodeError as exc:
        _fail(f"--reference-sizes is not JSON: {exc}")
    except (TaskError, ReferenceRefused) as exc:
        _fail(f"{reference}: {exc}")
    except SandboxUnavailable as exc:
        _fail(str(exc), code=4)
    console.print(f"task {task.name}: {task.variant(precision).prototype.text}\n{task.notes['shapes']}")
    return task


def print_baselines(result) -> None:
    """A PyTorch task's baselines per size: eager, torch.compile and the candidate timed in one process, both speedups."""
    from rich.table import Table

    table = Table(title=f"PyTorch baselines ({result.torch_baselines}); speedup and P are over eager")
    for col in ("size", "eager µs", "torch.compile µs", "candidate µs", "speedup over eager", "speedup over compile"):
        table.add_column(col, justify="left" if col == "size" else "right")
    for row in result.rows:
        times = [f"{row.torch_times[k].median_us:.2f}" if k in row.torch_times else "-" for k in ("eager", "compile", "candidate")]
        table.add_row(
            ",".join(f"{k}={v}" for k, v in row.params.items()),
            *times,
            f"{row.speedup:.3f}" if row.speedup else "-",
            f"{row.speedup_compile:.3f}" if row.speedup_compile else "-",
        )
    console.print(table)


def suite_variants(path: Path, precision: str | None) -> list[tuple[str, str]]:
    """`bench run --suite PATH`: the folder imported (each file run in the sandbox), its tasks registered for this
    run; the refused files listed with their reasons."""
    from bench_tasks.pytorch import ReferenceRefused, import_directory
    from bench_tasks.spec import TaskError, register_task

    chosen = precision or DEFAULT_PRECISION
    try:
        imported = import_directory(path, precision=chosen)
    except (TaskError, ReferenceRefused) as exc:
        _fail(str(exc))
    for file, kind, why in imported.refused:
        err.print(f"[yellow]refused[/] {file.name} ({kind}): {why}")
    if not imported.tasks:
        _fail(f"no file of {path} could be made a task (see the reasons above)")
    for task in imported.tasks:
        register_task(task)
    return [(t.name, chosen) for t in imported.tasks]


def measure_suite(todo: list, size_set: str, finished_one) -> None:
    """A PyTorch suite's work, one job at a time (the timing in the torch process overlaps no other GPU work): a
    candidate through the harness's evaluate (then its speedups over eager and torch.compile), else eager and
    torch.compile alone."""
    from bench_tasks.harness import CandidateError, evaluate
    from bench_tasks.pytorch import PyTorchTask, ReferenceRefused
    from bench_tasks.pytorch.timing import baselines_result
    from bench_tasks.spec import TaskError, load_task
    from settings import get_harness_settings

    settings = get_harness_settings()
    for job in todo:
        try:
            task = load_task(job.task)
            assert isinstance(task, PyTorchTask)  # registered by suite_variants
            if job.source is None:
                result = baselines_result(task, job.precision, settings)
            else:
                result = evaluate(task, job.precision, job.source, size_set, settings=settings)
        except (ReferenceRefused, TaskError, CandidateError, RuntimeError) as exc:
            finished_one(job, exc)
            continue
        finished_one(job, result)
