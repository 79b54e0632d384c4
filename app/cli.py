"""The `cudamaster` command: bench, sandbox, profile, optimize, resume, serve, keys.

Each area owns its commands; they are mounted here. A command whose module fails to import fails
the whole command loudly: nothing is hidden."""

from __future__ import annotations

import typer
from typer.core import TyperArgument, TyperOption

from app.campaign_cli import campaign_app
from app.export_cli import export
from app.service_cli import keys_app, serve
from app.suite_cli import suite_app
from bench_tasks.cli import ClusterSuite, use_cluster_suite
from bench_tasks.cli import app as bench_app
from bench_tasks.sandbox_cli import app as sandbox_app
from graph.cli import optimize, resume
from profiling.cli import app as profile_app
from settings import SettingsInvalid


def _plain_help() -> None:
    """Help as a user reads it: flags without a `<bool>` type (the flag says it), arguments in the usage line
    as TASK / [JOB_ID] (click's style) rather than {task}. Typer's own help where its internals differ (another
    typer than pyproject's pin, as on the device image): the help is then less plain, never broken."""
    if not hasattr(TyperOption, "display_type_rich") or not hasattr(TyperArgument, "_usage_display_name"):
        return
    option_type, argument_type = TyperOption.display_type_rich, TyperArgument.display_type_rich

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag and self.metavar is None else plain_type(option_type(self, ctx))

    def argument_display(self: TyperArgument, ctx: typer.Context) -> str | None:
        return plain_type(argument_type(self, ctx))

    def usage_name(self: TyperArgument) -> str:
        name = self.display_name_raw.upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign, assignment]
    TyperArgument.display_type_rich = argument_display  # type: ignore[method-assign, assignment]
    TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]


def plain_type(shown: str | None) -> str | None:
    """A repeatable option's type as its element's (`<list[str]>` reads `<str>`; its help says "repeatable")."""
    if shown and shown.startswith("<list[") and shown.endswith("]>"):
        return f"<{shown[6:-2]}>"
    return shown


_plain_help()


def _ray_suite() -> ClusterSuite:
    """`bench run --ray` on gpu/ray (imported when a command uses it: Ray is optional)."""

    def connect(address, harness):
        from gpu.ray import evaluator_for_cli

        return evaluator_for_cli(address, harness=harness)

    def model(cluster):
        from gpu.ray.suite import suite_model

        return suite_model(cluster)

    def run(cluster, jobs, sizes, on_result):
        from gpu.ray.suite import run_suite

        return run_suite(cluster, jobs, sizes, on_result=on_result)

    return ClusterSuite(connect, model, run)


use_cluster_suite(_ray_suite())

cli = typer.Typer(
    help="cudamaster: LLM agents that optimize CUDA kernels, and the benchmark that keeps them honest.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
cli.add_typer(bench_app, name="bench", help="MSKernelBench: list tasks, check and time baselines and candidates.")
cli.add_typer(sandbox_app, name="sandbox", help="The OS sandbox untrusted kernels run in: check what it allows and blocks.")
cli.add_typer(profile_app, name="profile", help="Nsight Compute profiles, bottleneck classes and the metric filter.")
cli.command("optimize")(optimize)
cli.command("resume")(resume)
cli.command("serve")(serve)
cli.command("export")(export)
cli.add_typer(keys_app, name="keys", help="API keys for the service: create, list, revoke.")
cli.add_typer(campaign_app, name="campaign", help="Campaigns: the agent over a set of variants with one configuration; reports.")
cli.add_typer(suite_app, name="suite", help="Suites: a folder of PyTorch references stored as tasks in the service (push, show).")


def main() -> None:
    try:
        cli()
    except SettingsInvalid as exc:  # an unknown or malformed CUDAMASTER_* setting: one line, no traceback
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
