"""The `cudamaster` command: bench, sandbox, profile, optimize, resume, serve, keys."""

from __future__ import annotations

import typer

from bench_tasks.cli import app as bench_app
from bench_tasks.sandbox_cli import app as sandbox_app

cli = typer.Typer(help="cudamaster: LLM agents that optimize CUDA kernels, and the benchmark that keeps them honest.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
cli.add_typer(bench_app, name="bench", help="MSKernelBench: list tasks, check and time baselines and candidates.")
cli.add_typer(sandbox_app, name="sandbox", help="The OS sandbox untrusted kernels run in: check what it allows and blocks.")


def _register() -> None:
    # Each area owns its commands; they are mounted here.
    from profiling.cli import app as profile_app

    cli.add_typer(profile_app, name="profile", help="Nsight Compute profiles, bottleneck classes and the metric filter.")
    from graph.cli import optimize, resume

    cli.command("optimize")(optimize)
    cli.command("resume")(resume)
    from app.service_cli import keys_app, serve

    cli.command("serve")(serve)
    cli.add_typer(keys_app, name="keys", help="API keys for the service.")


try:
    _register()
except ImportError:  # an area not built yet; its commands are absent
    pass


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
