"""`cudamaster suite push PATH` and `suite show [ID]` (mounted by app/cli.py): a folder of PyTorch references as a
suite in the service (POST /api/v1/suites). The files stay the user's: only their text is sent; the service probes
each in its sandbox and answers the tasks made and the refused files with their reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from graph.contract import DEFAULT_PRECISION, Precision

from .campaign_cli import Key, Url, _fail, _request

suite_app = typer.Typer(no_args_is_help=True, help="Suites: a folder of PyTorch references stored as tasks in the service.")


def read_folder(path: Path) -> list[dict[str, Any]]:
    """The references of a folder as the API takes them: each file's name (as `bench import` names it) and text."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from bench_tasks.pytorch import reference_files, task_name
    from bench_tasks.spec import TaskError

    try:
        files = reference_files(path)
    except TaskError as exc:
        _fail(str(exc))
    if not files:
        _fail(f"{path} holds no reference file (*.py)")
    refs = []
    stderr = Console(stderr=True)  # stdout holds --json's answer alone
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=stderr) as bar:
        reading = bar.add_task(f"reading {path}", total=len(files))
        for file in files:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                _fail(f"cannot read {file}: {exc}")
            refs.append({"name": task_name(file), "reference_py": text})
            bar.advance(reading)
    return refs


def _print(suite: dict[str, Any]) -> None:
    for t in suite["tasks"]:
        typer.echo(f"task {t['id']} {t['name']}: {t['prototype']}")
    for r in suite["refused"]:
        typer.echo(f"refused {r['name']}: {r['reason']}")
    typer.echo(
        f"suite {suite['id']} {suite['name']!r} ({suite['precision']}): {len(suite['tasks'])} tasks, {len(suite['refused'])} refused"
    )


@suite_app.command("push")
def push(
    path: Annotated[
        Path, typer.Argument(help="a folder of reference files (e.g. a KernelBench checkout's level1/); only their text is sent")
    ],
    url: Url = "http://127.0.0.1:8000",
    key: Key = None,
    name: Annotated[str | None, typer.Option(help="the suite's name (default: the folder's)")] = None,
    precision: Annotated[Precision, typer.Option(help="the candidates' buffer type")] = DEFAULT_PRECISION,
    json_out: Annotated[bool, typer.Option("--json", help="print the service's answer (tasks made, refused files) as JSON")] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the service (it runs every file in its sandbox)")] = 3600.0,
) -> None:
    """Send a folder's references to the service as a suite; list the tasks made and the files refused with their reasons."""
    from rich.console import Console

    body = {"name": name or path.resolve().name, "precision": precision, "references": read_folder(path)}
    with Console(stderr=True).status(f"the service is probing {len(body['references'])} references in its sandbox"):
        suite = _request("POST", url, key, "/suites", body, timeout=timeout)
    if json_out:
        typer.echo(json.dumps(suite, indent=1))
    else:
        _print(suite)
    raise typer.Exit(0 if suite["tasks"] else 1)


@suite_app.command("show")
def show(
    suite_id: Annotated[str | None, typer.Argument(help="a suite id; none: list this key's suites")] = None,
    url: Url = "http://127.0.0.1:8000",
    key: Key = None,
) -> None:
    """One suite's tasks and refused files, or the list of this key's suites."""
    if suite_id is None:
        for s in _request("GET", url, key, "/suites"):
            typer.echo(f"{s['id']} {s['name']!r} ({s['precision']}): {s['tasks']} tasks, {s['refused']} refused")
        return
    _print(_request("GET", url, key, f"/suites/{suite_id}"))
