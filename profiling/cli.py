"""`cudamaster profile`: Nsight Compute profiles, bottleneck classes and the metric filter.

cudamaster profile TASK --precision P [--candidate FILE] [--size K=V ...]   (= profile run ...)
cudamaster profile classify REPORT.csv [--rule sol|published]
cudamaster profile fit-thresholds RUN.json [--out thresholds.json]
cudamaster profile baselines --out RUN.json             (every baseline: the corpus)
cudamaster profile score-labelled CSV_DIR              (both rules on the labelled kernels)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from bench_tasks.spec import DEFAULT_PRECISION, Precision
from settings import get_profiling_settings

from .classify import RULES, Thresholds
from .errors import ClassificationError, ProfilerError, ReportFormatError
from .filter import MODES, render
from .modes import DEFAULT_MODE
from .report import ProfileReport

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class _RunByDefault(TyperGroup):
    """`cudamaster profile TASK ...` means `cudamaster profile run TASK ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)  # type: ignore[arg-type]


app = typer.Typer(
    cls=_RunByDefault,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Nsight Compute profiles, bottleneck classes and the metric filter.",
)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[red]error:[/red] {message}", markup=True, highlight=False)
    raise typer.Exit(code)


def _parse_sizes(items: list[str]) -> dict[str, int]:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{item!r}: write sizes as NAME=VALUE, e.g. --size N=1048576")
        try:
            params[key.strip()] = int(value.replace("_", ""))
        except ValueError:
            raise typer.BadParameter(f"{item!r}: {value!r} is not an integer") from None
    return params


def _thresholds(path: Path | None) -> Thresholds | None:
    if path is not None:
        return Thresholds.load(path)
    s = get_profiling_settings()
    if s.thresholds_file is not None:
        return Thresholds.load(s.thresholds_file)
    return Thresholds(published_pct=s.published_threshold_pct, sol_latency_pct=s.sol_latency_threshold_pct)


def _show(report: ProfileReport, mode: str, show_tokens: bool) -> None:
    text = render(report, mode)
    out.print(text, markup=False, highlight=False)
    if show_tokens:
        from .tokens import count_tokens

        n = count_tokens(text)
        out.print(f"[dim]{n.tokens} tokens ({n.method})[/dim]")


RuleOpt = Annotated[
    str, typer.Option("--rule", help=f"classification rule: {' | '.join(RULES)} (default from CUDAMASTER_PROFILING__CLASSIFIER)")
]
ModeOpt = Annotated[str, typer.Option("--mode", help=f"metric filter: {' | '.join(MODES)}")]
ThreshOpt = Annotated[Path | None, typer.Option("--thresholds", help="thresholds JSON from fit-thresholds")]


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> None:
    if value not in choices:
        raise typer.BadParameter(f"unknown {what} {value!r}: choose one of {', '.join(choices)}")


@app.command("run")
def run_cmd(
    task: Annotated[str, typer.Argument(help="task name (see `cudamaster bench list`)")],
    precision: Annotated[Precision, typer.Option("--precision", "-p", help="the kernel's precision: fp32 or bf16")] = DEFAULT_PRECISION,
    candidate: Annotated[Path | None, typer.Option("--candidate", "-c", help="candidate .cu (default: the baseline)")] = None,
    size: Annotated[
        list[str], typer.Option("--size", "-s", help="size parameter NAME=VALUE (repeat); default: the largest quick paper size")
    ] = [],  # noqa: B006
    rule: RuleOpt = "",
    mode: ModeOpt = DEFAULT_MODE,
    thresholds: ThreshOpt = None,
    save_csv: Annotated[Path | None, typer.Option("--save-csv", help="write ncu's raw-page CSV here")] = None,
    save_json: Annotated[Path | None, typer.Option("--save-json", help="write the ProfileReport JSON here")] = None,
    tokens: Annotated[bool, typer.Option("--tokens", help="print the filtered text's token count")] = False,
) -> None:
    """Profile one call of a task's baseline or a candidate with Nsight Compute and classify it."""
    from bench_tasks import TaskError

    from .ncu import profile_kernel

    rule = rule or get_profiling_settings().classifier
    _check_choice(rule, RULES, "rule")
    _check_choice(mode, MODES, "mode")
    params = _parse_sizes(size)
    source = None
    if candidate is not None:
        try:
            source = candidate.read_bytes()
        except OSError as exc:
            _fail(f"cannot read candidate {candidate}: {exc.strerror}")
    try:
        started = time.monotonic()
        report = profile_kernel(task, precision, source, params or None, rule=rule)
        report.reclassify(rule, _thresholds(thresholds))
    except (ProfilerError, ReportFormatError, ClassificationError, TaskError) as exc:
        _fail(str(exc))
    except ValueError as exc:  # the candidate did not compile
        _fail(f"the candidate does not build: {exc}")
    except RuntimeError as exc:  # harness: driver build failure
        _fail(str(exc))
    if save_csv:
        save_csv.write_text(report.raw_csv)
    if save_json:
        save_json.write_text(report.model_dump_json(indent=1))
    out.print(
        f"[bold]{task}/{precision}[/bold] {report.impl} at {report.params}: {len(report.kernels)} kernel(s), "
        f"ncu {report.profile_wall_s:.1f} s, total {time.monotonic() - started:.1f} s",
        highlight=False,
    )
    _show(report, mode, tokens)


@app.command("classify")
def classify_cmd(
    report_csv: Annotated[Path, typer.Argument(help="CSV saved with `ncu --csv --page raw` (or --page details)")],
    rule: RuleOpt = "",
    mode: ModeOpt = DEFAULT_MODE,
    thresholds: ThreshOpt = None,
    tokens: Annotated[bool, typer.Option("--tokens", help="print the filtered text's token count")] = False,
) -> None:
    """Classify a saved Nsight Compute CSV and print the filtered metrics."""
    from .parse import parse_report

    rule = rule or get_profiling_settings().classifier
    _check_choice(rule, RULES, "rule")
    _check_choice(mode, MODES, "mode")
    try:
        text = report_csv.read_text(errors="replace")
    except OSError as exc:
        _fail(f"cannot read {report_csv}: {exc.strerror}")
    try:
        report = ProfileReport.from_kernels(parse_report(text), raw_csv=text, rule=rule, thresholds=_thresholds(thresholds))
    except (ProfilerError, ReportFormatError, ClassificationError) as exc:
        _fail(f"{report_csv}: {exc}")
    if report.classification is None:
        _fail(f"{report_csv}: {report.classify_error}")
    _show(report, mode, tokens)


@app.command("fit-thresholds")
def fit_cmd(
    run_json: Annotated[Path, typer.Argument(help="RUN.json: a JSON list of ProfileReport dumps (`profile baselines`)")],
    out_path: Annotated[Path, typer.Option("--out", "-o", help="where to write the thresholds and their data")] = Path("thresholds.json"),
) -> None:
    """Fit both rules' thresholds with Otsu's method over a corpus of profiles."""
    from .otsu import fit_thresholds, load_corpus

    try:
        fitted = fit_thresholds(load_corpus(run_json), source=str(run_json))
    except (ReportFormatError, ValueError) as exc:
        _fail(str(exc))
    out_path.write_text(json.dumps(fitted, indent=1))
    t = fitted["thresholds"]
    out.print(
        f"published threshold {t['published_pct']:.2f} %, sol latency threshold {t['sol_latency_pct']:.2f} % "
        f"from {fitted['count']} profiles ({len(fitted['skipped'])} skipped) -> {out_path}",
        highlight=False,
    )


@app.command("baselines")
def baselines_cmd(
    out_path: Annotated[Path, typer.Option("--out", "-o", help="RUN.json to write")] = Path("run.json"),
    task: Annotated[list[str], typer.Option("--task", "-t", help="only these tasks (repeat)")] = [],  # noqa: B006
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="parallel compiles")] = 4,
    budget_s: Annotated[float | None, typer.Option("--budget-s", help="stop starting new profiles after this")] = None,
) -> None:
    """Profile every task variant's baseline (default size) into RUN.json."""
    from bench_tasks import TaskError

    from .corpus import profile_baselines, write_corpus

    def progress(report, failure):
        if report is not None:
            b = report.bottleneck.value if report.bottleneck else "?"
            err.print(f"{report.task}/{report.precision} {report.params}: {b} ({report.profile_wall_s:.1f} s)", highlight=False)
        else:
            err.print(f"[yellow]{failure.task}/{failure.precision}: {failure.error}[/yellow]", highlight=False)

    try:
        reports, failures = profile_baselines(task or None, jobs=jobs, budget_s=budget_s, on_done=progress)
    except (ProfilerError, TaskError) as exc:
        _fail(str(exc))
    write_corpus(reports, out_path)
    if failures:
        side = out_path.with_suffix(".failures.json")
        side.write_text(json.dumps([f.__dict__ for f in failures], indent=1))
    table = Table(title=f"baselines profiled: {len(reports)} ok, {len(failures)} failed -> {out_path}")
    for col in ("variant", "params", "kernels", "SM %", "DRAM %", "Mem %", "sol", "published", "ncu s"):
        table.add_column(col)
    for r in reports:
        c = r.classification
        pub = r.model_copy(deep=True)
        pub.reclassify("published", _thresholds(None))
        table.add_row(
            f"{r.task}/{r.precision}",
            str(r.params),
            str(len(r.kernels)),
            *(f"{v:.1f}" for v in ((c.sm_pct, c.dram_pct, c.memory_pct) if c else (float("nan"),) * 3)),
            c.bottleneck.value if c else "?",
            pub.bottleneck.value if pub.bottleneck else "?",
            f"{r.profile_wall_s or 0:.1f}",
        )
    out.print(table)
    if failures and not reports:
        raise typer.Exit(1)


@app.command("score-labelled")
def score_cmd(
    csv_dir: Annotated[Path, typer.Argument(help="folder with <kernel>.csv raw-page CSVs of the labelled kernels")],
    thresholds: ThreshOpt = None,
    save_json: Annotated[Path | None, typer.Option("--save-json", help="write the labelled profiles as a RUN.json list")] = None,
) -> None:
    """Score both rules on the labelled kernels (profiling/labelled/manifest.toml)."""
    from .labelled import accuracy, score_dir

    if not csv_dir.is_dir():
        _fail(f"{csv_dir} is not a folder")
    scores = score_dir(csv_dir, thresholds=_thresholds(thresholds))
    table = Table(title=f"labelled kernels in {csv_dir}")
    for col in ("kernel", "prec", "expected", "SM %", "DRAM %", "Mem %", "published", "sol"):
        table.add_column(col)
    for s in scores:
        if s.report is None:
            table.add_row(s.kernel.name, s.kernel.precision, s.kernel.expected.value, "", "", "", "", f"[red]{s.error}[/red]")
            continue
        c = s.report.classification
        mark = lambda b, expected=s.kernel.expected: (b.value if b == expected else f"[red]{b.value}[/red]") if b else "?"  # noqa: E731
        table.add_row(
            s.kernel.name,
            s.kernel.precision,
            s.kernel.expected.value,
            *(f"{v:.1f}" for v in (c.sm_pct, c.dram_pct, c.memory_pct)) if c else ("?",) * 3,
            mark(s.predicted["published"]),
            mark(s.predicted["sol"]),
        )
    out.print(table)
    for rule in ("published", "sol"):
        ok, n = accuracy(scores, rule)
        out.print(f"{rule}: {ok}/{n} correct" + (f" ({100 * ok / n:.0f} %)" if n else ""), highlight=False)
    if save_json:
        save_json.write_text(json.dumps([s.report.model_dump(mode="json") for s in scores if s.report], indent=1))
