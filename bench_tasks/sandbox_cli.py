"""`cudamaster sandbox check`: what the sandbox for untrusted kernels allows and blocks on this machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench_tasks.provenance import provenance

app = typer.Typer(no_args_is_help=True)
console = Console()


@app.command("check")
def check(
    gpu: Annotated[
        bool | None,
        typer.Option("--gpu/--no-gpu", help="also compile and run a CUDA kernel (and ncu) inside; default: when a GPU is listed"),
    ] = None,
    port: Annotated[int, typer.Option(help="the service's port, which must be unreachable from inside")] = 8000,
    ncu: Annotated[str, typer.Option(help="Nsight Compute for the profiling probe")] = "ncu",
    json_out: Annotated[Path | None, typer.Option("--json", help="also write the probes as JSON here")] = None,
) -> None:
    """Run probes inside the sandbox (identity, namespaces, environment, network, hidden paths, writable paths,
    limits, disk quota; with a GPU: nvcc, a kernel, ncu) and print what works and what is blocked."""
    from bench_tasks.harness.sandbox_check import as_json, run_checks
    from settings import get_harness_settings

    probes = run_checks(get_harness_settings(), service_port=port, gpu=gpu, ncu=ncu)
    table = Table(title="sandbox for untrusted kernels")
    for col in ("probe", "result", "detail"):
        table.add_column(col, overflow="fold")
    for p in probes:
        mark = "[green]ok[/]" if p.ok else ("[red]FAIL[/]" if p.required else "[yellow]warn[/]")
        table.add_row(p.name, mark, p.detail)
    console.print(table)
    if json_out:
        json_out.write_text(json.dumps({"provenance": provenance(), "probes": as_json(probes)}, indent=1))
    failed = [p.name for p in probes if p.required and not p.ok]
    if failed:
        console.print(f"[bold red]sandbox check failed:[/] {', '.join(failed)}")
    raise typer.Exit(1 if failed else 0)
