"""`cudamaster bench`: list tasks, run the benchmark, evaluate one candidate."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench_tasks.provenance import provenance
from bench_tasks.spec import (
    DEFAULT_PRECISION,
    PRECISIONS,
    SIZE_SETS,
    Precision,
    SizeSet,
    TaskError,
    all_tasks,
    listed_tasks,
    load_task,
    task_names,
    unknown_task,
)

if TYPE_CHECKING:
    from bench_tasks.harness.pipeline import Job

app = typer.Typer(no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def _fmt_sizes(sizes: list[dict[str, int]]) -> str:
    if not sizes:
        return "-"
    keys = [k for k in sizes[0] if len({s[k] for s in sizes}) > 1] or list(sizes[0])
    return "; ".join(",".join(str(s[k]) for k in keys) for s in sizes) + f"  ({'/'.join(keys)})"


@app.command("list")
def list_tasks(
    json_out: Annotated[bool, typer.Option("--json", help="print the tasks as JSON (name, category, precisions, sizes)")] = False,
) -> None:
    """The tasks, categories, precisions and sizes: a table on a terminal, one tab-separated line per task
    when piped (never wrapped), or JSON."""
    tasks = listed_tasks()
    if json_out:
        typer.echo(json.dumps([_task_entry(t) for t in tasks], indent=1))
        return
    rows = [
        (t.name, t.category, ", ".join(t.prototypes), _fmt_sizes(t.size_list("paper")), _fmt_sizes(t.size_list("large"))) for t in tasks
    ]
    if not console.is_terminal:
        typer.echo("\t".join(LIST_COLUMNS))
        for row in rows:
            typer.echo("\t".join(row))
        return
    table = Table(title="MSKernelBench tasks")
    for col in LIST_COLUMNS:
        table.add_column(col, no_wrap=col == "task")
    for row in rows:
        table.add_row(*row)
    console.print(table)


LIST_COLUMNS = ("task", "category", "precisions", "paper sizes", "large sizes")


def _task_entry(task) -> dict:
    return {
        "name": task.name,
        "category": task.category,
        "summary": task.summary,
        "precisions": list(task.prototypes),
        "sizes": {name: [dict(s) for s in sizes] for name, sizes in task.sizes.items()},
    }


def _task(name: str):
    """The task `name`; an unknown name fails with the closest names (RELU for relu), not the list of all."""
    try:
        return load_task(name)
    except TaskError as exc:
        _fail(str(exc) if name in task_names() else unknown_task(name))


def _missing_entry(variant, text: str) -> str | None:
    """Why a candidate cannot be this variant when it does not define the entry point the variant needs but
    defines another precision's (an FP32 kernel given with --precision bf16): names the missing entry."""
    if re.search(rf"\b{variant.candidate_entry}\s*\(", text):
        return None
    for other in variant.task.variants():
        if other.precision != variant.precision and re.search(rf"\b{other.candidate_entry}\s*\(", text):
            return (
                f"the candidate defines {other.candidate_entry} (the {other.precision} entry) but not {variant.candidate_entry}, "
                f"which --precision {variant.precision} needs: pass --precision {other.precision}, or export "
                f"{variant.candidate_prototype.text}"
            )
    return None


def _variants(tasks: list[str] | None, precision: str | None):
    try:
        chosen = [_task(t) for t in tasks] if tasks else all_tasks()
        return [(t.name, p) for t in chosen for p in ([precision] if precision else list(t.prototypes)) if t.variant(p)]
    except TaskError as exc:
        _fail(str(exc))


def _candidate_file(directory: Path, task: str, precision: str) -> Path | None:
    stem = task if precision == "fp32" else f"{task}_bf16"
    for path in (directory / precision / f"{stem}.cu", directory / f"{stem}.cu"):
        if path.is_file():
            return path
    return None


def _print_rows(result) -> None:
    table = Table(title=f"{result.task}/{result.precision}: {result.verdict.value}" + (f"  P = {result.score:.3f}" if result.score else ""))
    for col in ("size", "T", "baseline µs (IQR)", "candidate µs (IQR)", "speedup", "roofline %", "max rel err", "flags"):
        table.add_column(col, justify="right" if col not in ("size", "flags") else "left")
    for row in result.rows:
        b, c = row.baseline, row.candidate
        roof = row.candidate_roofline_pct if c else row.baseline_roofline_pct
        table.add_row(
            ",".join(f"{k}={v}" for k, v in row.params.items()),
            f"{row.complexity:,}",
            f"{b.median_us:.2f} ({b.iqr_us:.2f})" if b else "-",
            f"{c.median_us:.2f} ({c.iqr_us:.2f})" if c else "-",
            f"{row.speedup:.3f}" if row.speedup else "-",
            f"{roof:.1f}" if roof else "-",
            f"{row.max_rel_err:.2e}" if row.max_rel_err is not None else "-",
            " ".join(row.flags) + ("" if row.passed else " FAILED"),
        )
    console.print(table)
    if any(r.torch_times for r in result.rows):  # a PyTorch reference's task: eager and torch.compile
        from bench_tasks.pytorch_cli import print_baselines

        print_baselines(result)
    if result.message:
        console.print(f"[bold]{result.verdict.value}[/]: {result.message}")


def _print_sanitizer(result) -> None:
    """`--sanitize`: one line per tool, with the first report lines of a finding."""
    for v in result.sanitizer:
        detail = v.reason if v.status.value == "not_run" else f"{v.errors} error(s) in {v.kernel}" if v.status.value == "findings" else ""
        console.print(f"compute-sanitizer {v.tool}: [bold]{v.status.value}[/] {detail} ({v.seconds:.1f} s)".rstrip())
        for line in v.report[:8]:
            console.print(f"    {line}", markup=False)


def _say_sandbox(settings) -> None:
    """Which sandbox compiles and runs the kernels (stderr; `cudamaster sandbox check` tells more)."""
    from bench_tasks.harness.sandbox import describe

    err.print(f"[dim]sandbox: {describe(settings)}[/]")


def _precision_ok(precision: str | None) -> None:
    if precision is not None and precision not in PRECISIONS:
        _fail(f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}")


def _sizes_ok(sizes: str) -> None:
    if sizes not in SIZE_SETS:
        _fail(f"unknown size set {sizes!r}: choose one of {', '.join(SIZE_SETS)}")


@dataclass(frozen=True)
class ClusterSuite:
    """How `bench run --ray` reaches a cluster, given by the layer above (app/cli.py passes gpu/ray's): this
    package never imports the GPU package. `connect(address, harness)`: the cluster of --ray or
    CUDAMASTER_RAY__ADDRESS, None when neither is set (RuntimeError: what to do); `model(cluster)`: the GPU model
    the suite is measured on; `run(cluster, jobs, sizes, on_result)`: the suite on the cluster's GPUs."""

    connect: Callable[[str | None, Any], Any]
    model: Callable[[Any], str]
    run: Callable[[Any, list[Job], str, Callable[[Job, Any], None]], Any]


_cluster_suite: ClusterSuite | None = None


def use_cluster_suite(suite: ClusterSuite) -> None:
    """Wire `bench run --ray` (app/cli.py does, for the `cudamaster` command)."""
    global _cluster_suite
    _cluster_suite = suite


def _cluster(address: str | None, settings):
    """The Ray cluster of --ray / CUDAMASTER_RAY__ADDRESS (gpu/ray), or None for the local GPU."""
    from settings import get_ray_settings

    if not (address or get_ray_settings().address):
        return None
    if _cluster_suite is None:
        _fail("--ray / CUDAMASTER_RAY__ADDRESS: run this through the `cudamaster bench` command, which wires the Ray cluster", code=3)
        return None
    try:
        return _cluster_suite.connect(address, settings)
    except RuntimeError as exc:
        _fail(str(exc), code=3)


# `bench run`'s options, declared once each (the command's signature stays one line per option).
TasksOpt = Annotated[list[str] | None, typer.Option("--task", "-t", metavar="TASK", help="task name (repeatable); default: all")]
RunPrecisionOpt = Annotated[Precision | None, typer.Option("--precision", "-p", help="only this precision; default: both")]
SizeSetsOpt = Annotated[str, typer.Option(help="paper, large, edge or all; several separated by commas (paper,large)")]
CandidatesOpt = Annotated[Path | None, typer.Option(help="directory of candidates: <op>.cu / <op>_bf16.cu, or fp32/ and bf16/ subfolders")]
VendorOpt = Annotated[
    bool,
    typer.Option(
        "--vendor",
        help="also measure each task's vendor reference (cuBLAS, cuSPARSE, cuFFT, cuDNN, CUB) "
        "against its baseline; tasks without one get the baseline alone",
    ),
]
OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="where to write the JSON results")]
SuiteOpt = Annotated[
    Path | None,
    typer.Option(
        "--suite",
        help="a folder of PyTorch references (KernelBench format) as the suite instead of MSKernelBench: baselines "
        "PyTorch eager and torch.compile; candidates pt_<file>.cu (docs/pytorch-tasks.md)",
    ),
]
JobsOpt = Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="compile processes working ahead of the GPU; default: all cores")]
AppendOpt = Annotated[
    bool, typer.Option("--append", help="keep the results already in --output and add these (a long run split into several commands)")
]
SkipDoneOpt = Annotated[
    bool,
    typer.Option(
        "--skip-done",
        help="with --append: leave out what --output already holds (same variant, measured implementation and "
        "size set), so a run cut short continues where it stopped",
    ),
]
SanitizeOpt = Annotated[
    bool,
    typer.Option(
        "--sanitize",
        help="also run compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on each correct kernel measured, "
        "at two sizes, about a minute each: a verdict per tool (clean, findings, not_run with why)",
    ),
]
RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="spread the suite over every GPU of this Ray cluster (HOST:6379, ray://HOST:10001 or auto; "
        "default CUDAMASTER_RAY__ADDRESS), all on one GPU model",
    ),
]


@dataclass
class RunOptions:
    """`bench run`'s options, as given on the command line."""

    tasks: list[str] | None
    precision: str | None
    sizes: str
    candidates: Path | None
    vendor: bool
    output: Path
    jobs: int | None
    append: bool
    skip_done: bool
    ray: str | None
    suite: Path | None = None
    sanitize: bool = False

    @property
    def size_sets(self) -> list[str]:
        return [s.strip() for s in self.sizes.split(",") if s.strip()]

    def check(self) -> None:
        """Refuse bad options before any work."""
        _precision_ok(self.precision)
        for s in self.size_sets or [self.sizes]:
            _sizes_ok(s)
        if self.skip_done and not self.append:
            _fail("--skip-done continues the run in --output: give --append too")
        if self.suite is not None and (self.ray or self.vendor or self.tasks):
            _fail("--suite runs a folder of PyTorch references on this machine's GPU: leave out --ray, --vendor and --task")


@app.command("run")
def run(
    task: TasksOpt = None,
    precision: RunPrecisionOpt = None,
    sizes: SizeSetsOpt = "paper",
    candidates: CandidatesOpt = None,
    vendor: VendorOpt = False,
    output: OutputOpt = Path("bench-results.json"),
    jobs: JobsOpt = None,
    append: AppendOpt = False,
    skip_done: SkipDoneOpt = False,
    ray: RayOpt = None,
    suite: SuiteOpt = None,
    sanitize: SanitizeOpt = False,
) -> None:
    """Check and time the baselines (and candidates, vendor references, if asked) on the local GPU.

    One variant at a time runs on the GPU; meanwhile the next ones are compiled on `--jobs` cores and
    their check datasets and references drawn into the data cache (see bench_tasks/harness/pipeline.py)."""
    _run_benchmark(
        RunOptions(task, precision, sizes, candidates, vendor, output, jobs, append, skip_done, ray, suite=suite, sanitize=sanitize)
    )


def _run_benchmark(opts: RunOptions) -> None:
    from settings import get_harness_settings

    opts.check()
    if opts.suite is not None:
        from bench_tasks.pytorch_cli import suite_variants

        variants = suite_variants(opts.suite, opts.precision)
    else:
        variants = _variants(opts.tasks, opts.precision)
    settings = get_harness_settings()
    cluster = None if opts.suite is not None else _cluster(opts.ray, settings)
    if cluster is None:  # the local GPU (on Ray, the workers check theirs)
        _local_gpu_ready(settings)
    work = _work(variants, opts.candidates, opts.vendor)
    meta: dict = {"provenance": provenance(), "size_set": opts.sizes}
    if cluster is not None and _cluster_suite is not None:
        meta["ray"] = {
            "address": cluster.settings.address,
            "gpu_model": _cluster_suite.model(cluster),
            "gpu_workers": len(cluster.status()["gpus"]),
        }
    store = _ResultsFile(opts.output, meta)
    if opts.append and opts.output.is_file():
        store.add_previous(opts.sizes)
    errors = _measure(work, opts, settings, cluster, store)
    _print_summary(store.results, errors, baselines=opts.candidates is None)
    store.save()
    console.print(f"results written to {opts.output} ({meta['wall_seconds']} s)")
    if errors or any(r.verdict.value != "ok" for r in store.results):
        raise typer.Exit(1)


def _local_gpu_ready(settings) -> None:
    """Refuse before any work when there is no GPU here or untrusted code could not be sandboxed."""
    from bench_tasks.harness import NoGpuError, require_gpu
    from bench_tasks.harness.sandbox import SandboxUnavailable, sandbox_for

    try:
        require_gpu(settings)
    except NoGpuError as exc:
        _fail(str(exc), code=3)
    try:
        sandbox_for(settings)
    except SandboxUnavailable as exc:
        _fail(str(exc), code=4)
    _say_sandbox(settings)


def _work(variants, candidates: Path | None, vendor: bool) -> list[Job]:
    """A candidate where one is given; the vendor reference where asked for and one exists; the baseline alone
    where nothing else would measure it."""
    from bench_tasks.harness.pipeline import Job
    from bench_tasks.harness.vendor import reference_for

    work: list[Job] = []
    for name, prec in variants:
        source = None
        if candidates is not None:
            path = _candidate_file(candidates, name, prec)
            source = path.read_bytes() if path is not None else None
            if source is not None:
                work.append(Job(name, prec, source))
        if vendor and reference_for(name) is not None:
            work.append(Job(name, prec, None, "vendor"))
        elif source is None and (candidates is None or vendor):
            work.append(Job(name, prec, None))
    return work


class _ResultsFile:
    """`bench run --output`: the results so far and the run's metadata, saved whole after every variant."""

    def __init__(self, path: Path, meta: dict):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.meta = path, meta
        self.results: list = []
        self.started = time.monotonic()
        # Each result serialised to text once: re-encoding them all after every variant (Python's indenting JSON
        # encoder) held the GIL for a growing time between two drivers.
        self.dumped: list[str] = []

    def add_previous(self, sizes: str) -> None:
        """--append: the results already in the file come first; their size sets and provenance are kept."""
        from bench_tasks.harness import EvaluationResult

        try:
            previous = json.loads(self.path.read_text())
            self.results = [EvaluationResult.model_validate(r) for r in previous["results"]]
        except (ValueError, KeyError, TypeError) as exc:
            _fail(f"--append: {self.path} is not a results file of `cudamaster bench run` ({str(exc)[:200]})")
        merged = dict.fromkeys([*str(previous.get("size_set", "")).split(","), *sizes.split(",")])
        self.meta["size_set"] = ",".join(x for x in merged if x)
        # Whose results these are: the earlier commands' provenance is kept (the top-level one is this command's).
        self.meta["appended_to"] = [*previous.get("appended_to", []), previous.get("provenance")]

    def save(self) -> None:  # after every variant: an interrupted run keeps what it measured
        self.meta["wall_seconds"] = round(time.monotonic() - self.started, 1)
        self.dumped.extend(json.dumps(r.model_dump(mode="json"), indent=1) for r in self.results[len(self.dumped) :])
        head = json.dumps({**self.meta, "results": []}, indent=1).rsplit("[]", 1)[0]  # "results" is the last key
        text = head + "[\n" + ",\n".join(self.dumped) + "\n]\n}"
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, self.path)  # whole: a run killed while saving leaves the previous save, never half a file


def _measure(work: list[Job], opts: RunOptions, settings, cluster, store: _ResultsFile) -> list[str]:
    """Run the work at each size set (on the local GPU's pipeline or the Ray cluster), saving after every variant;
    the variants that ended without a result (bad input, the machine, a harness bug)."""
    from bench_tasks.harness.pipeline import run_pipeline

    errors: list[str] = []
    done = {(r.task, r.precision, r.implementation, r.size_set) for r in store.results}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console) as progress:
        bar = progress.add_task("benchmark", total=len(work) * len(opts.size_sets))

        def started_one(job: Job, compiled: int) -> None:
            progress.update(bar, description=f"{job.key} (compiled ahead: {compiled}/{len(work)})")

        def finished_one(job: Job, result) -> None:
            if isinstance(result, Exception):
                err.print(f"{job.key}: {result}")
                errors.append(f"{job.key}: {result}")
            else:
                store.results.append(result)
                store.save()
            progress.advance(bar)

        try:
            for size_set in opts.size_sets:
                todo = [j for j in work if not opts.skip_done or _measured(j, size_set) not in done]
                if len(todo) < len(work):
                    progress.advance(bar, len(work) - len(todo))
                if opts.suite is not None:  # PyTorch references: one at a time, on this GPU
                    from bench_tasks.pytorch_cli import measure_suite

                    measure_suite(todo, size_set, finished_one)
                elif cluster is not None and _cluster_suite is not None:
                    progress.update(bar, description=f"benchmark on {store.meta['ray']['gpu_workers']} Ray GPU worker(s)")
                    _cluster_suite.run(cluster, todo, size_set, finished_one)
                else:
                    run_pipeline(todo, size_set, settings, compile_workers=opts.jobs, on_start=started_one, on_result=finished_one)
        finally:
            if cluster is not None:
                cluster.close()
    if opts.sanitize:
        _sanitize_results(work, store, settings, on_cluster=cluster is not None)
    return errors


def _sanitize_results(work: list[Job], store: _ResultsFile, settings, on_cluster: bool) -> None:
    """`bench run --sanitize`: compute-sanitizer on each correct result of this run, after every timing (never beside
    a timed driver), saving after each."""
    from bench_tasks.harness.sanitize import not_run, sanitize_result

    sources = {_measured(j, "")[:3]: j.source for j in work}
    for result in store.results:
        key = (result.task, result.precision, result.implementation)
        if key not in sources or result.sanitizer or not result.ok:
            continue
        if on_cluster:
            result.sanitizer = not_run("bench run --ray: compute-sanitizer runs on the local GPU only")
        else:
            console.print(f"compute-sanitizer: {result.task}/{result.precision} {result.implementation}")
            sanitize_result(result, sources[key], settings)
        store.save()


def _print_summary(results: list, errors: list[str], baselines: bool) -> None:
    summary = Table(title="MSKernelBench" + (" (baselines)" if baselines else ""))
    for col in ("variant", "measured", "sizes", "verdict", "P", "sizes passed", "wall s", "sanitizer"):
        summary.add_column(col)
    for r in results:
        summary.add_row(
            f"{r.task}/{r.precision}",
            r.implementation,
            r.size_set,
            r.verdict.value,
            f"{r.score:.3f}" if r.score else "-",
            f"{sum(row.passed for row in r.rows)}/{len(r.rows)}",
            f"{r.wall_seconds:.1f}",
            _sanitizer_cell(r),
        )
    console.print(summary)
    for r in results:
        if r.verdict.value != "ok":
            console.print(f"[red]{r.task}/{r.precision} {r.implementation}[/]: {r.message}")
    for line in errors:
        console.print(f"[red]no result[/] {line}")


def _sanitizer_cell(result) -> str:
    """clean | findings (tools) | not_run | - (not asked), as the report's column shows it."""
    from bench_tasks.harness.result import sanitizer_status

    status = sanitizer_status(result.sanitizer)
    if status is None:
        return "-"
    found = [v.tool for v in result.sanitizer if v.status.value == "findings"]
    return f"{status.value} ({', '.join(found)})" if found else status.value


def _measured(job: Job, size_set: str) -> tuple[str, str, str, str]:
    """The key of a result of `job` (EvaluationResult's task, precision, implementation, size_set)."""
    implementation = "vendor" if job.implementation == "vendor" else "baseline" if job.source is None else "candidate"
    return (job.task, job.precision, implementation, size_set)


@app.command("report")
def report(
    run_file: Annotated[Path, typer.Argument(help="a results file written by `cudamaster bench run`")],
    other: Annotated[Path | None, typer.Argument(help="a second run to compare against the first")] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="prefix of the files written (PREFIX.md, PREFIX.html); default: next to RUN_FILE"),
    ] = None,
) -> None:
    """Markdown and a self-contained HTML page: baseline, vendor and candidate times, speedups, roofline
    shares and P per variant and size; the share of variants reaching P >= 1, 2, 4, 8; with two runs, the change."""
    from bench_tasks.report import ReportError, write_report

    for path in (run_file, other):
        if path is not None and not path.is_file():
            _fail(f"{path} does not exist (expected a JSON file from `cudamaster bench run`)")
    prefix = output or run_file.with_name(run_file.stem + ".report")
    try:
        md, page = write_report(run_file, other, prefix)
    except ReportError as exc:
        _fail(str(exc))
    console.print(f"wrote {md} and {page}")


from bench_tasks.pytorch_cli import import_references  # noqa: E402 - the PyTorch references' commands (torch-free to import)

app.command("import")(import_references)


@app.command("eval")
def eval_candidate(
    task: Annotated[str | None, typer.Argument(help="task name, see `cudamaster bench list` (or --reference)")] = None,
    candidate: Annotated[
        Path, typer.Option("--candidate", "-c", help=".cu exporting <op>_optimized, or a file with OPTIMIZED KERNEL markers")
    ] = ...,  # type: ignore[assignment]  # required (after the optional TASK)
    precision: Annotated[
        Precision, typer.Option("--precision", "-p", help="the variant: fp32 (exports <op>_optimized) or bf16 (<op>_bf16_optimized)")
    ] = DEFAULT_PRECISION,
    sizes: Annotated[SizeSet, typer.Option(help="the size set to time")] = "paper",
    compile_only: Annotated[bool, typer.Option(help="compile and check symbols only (no GPU needed)")] = False,
    flags: Annotated[list[str] | None, typer.Option("--flag", metavar="FLAG", help="extra nvcc flag (repeatable)")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="also write the result JSON here")] = None,
    reference: Annotated[Path | None, typer.Option(help="a PyTorch reference file (KernelBench format) as the task")] = None,
    reference_sizes: Annotated[
        str | None, typer.Option(help='with --reference: a JSON list of constant overrides, [{"dim": 1024}]')
    ] = None,
    sanitize: SanitizeOpt = False,
) -> None:
    """Evaluate one candidate: the verdict and the per-size table."""
    from bench_tasks.harness import CandidateError, NoGpuError, evaluate
    from bench_tasks.harness import source as src
    from bench_tasks.harness.sandbox import SandboxUnavailable
    from settings import get_harness_settings

    _precision_ok(precision)
    _sizes_ok(sizes)
    measured, run_sizes, variant = _eval_task(task, reference, reference_sizes, precision, sizes)
    if candidate.is_dir():
        _fail(f"{candidate} is a directory: pass a .cu file (e.g. {candidate / (variant.entry + '.cu')})")
    if not candidate.is_file():
        _fail(f"candidate file {candidate} does not exist")
    raw = candidate.read_bytes()
    settings = get_harness_settings()
    try:
        if (why := _missing_entry(variant, src.prepare(raw, settings.max_source_bytes))) is not None:
            _fail(why)
    except CandidateError as exc:
        _fail(str(exc))
    _say_sandbox(settings)
    try:
        if compile_only:
            _compile_only(variant, raw, settings, flags)
        result = evaluate(measured, precision, raw, run_sizes, extra_flags=flags)
        if sanitize:
            from bench_tasks.harness.sanitize import sanitize_result

            sanitize_result(result, raw, settings)
    except CandidateError as exc:
        _fail(str(exc))
    except NoGpuError as exc:
        _fail(str(exc), code=3)
    except SandboxUnavailable as exc:
        _fail(str(exc), code=4)
    _print_rows(result)
    _print_sanitizer(result)
    if json_out:
        json_out.write_text(json.dumps({"provenance": provenance(), "result": result.model_dump(mode="json")}, indent=1))
    raise typer.Exit(0 if result.ok else 1)


def _eval_task(task: str | None, reference: Path | None, reference_sizes: str | None, precision: str, sizes: str) -> tuple[Any, Any, Any]:
    """(the task evaluated: a name, or a PyTorch reference's task (bench_tasks/pytorch); its sizes; the variant)."""
    try:
        if reference is not None:
            from bench_tasks.pytorch_cli import load_for_eval

            measured = load_for_eval(reference, precision, reference_sizes)
            return measured, measured.size_list("paper"), measured.variant(precision)
        if task is None:
            _fail("give a TASK (see `cudamaster bench list`) or --reference FILE")
        return task, sizes, _task(task).variant(precision)  # type: ignore[arg-type]
    except TaskError as exc:
        _fail(str(exc))
        raise


def _compile_only(variant, raw: bytes, settings, flags: list[str] | None) -> None:
    """`bench eval --compile-only`: compiled, checked and linked into its driver, all but the GPU; exits."""
    from bench_tasks.harness.evaluate import compile_only as compile_only_check

    started = time.monotonic()
    verdict, message, _ = compile_only_check(variant.task, variant.precision, raw, settings=settings, extra_flags=flags)
    if verdict.value != "ok":
        console.print(f"[bold]{verdict.value}[/] {message}")
        raise typer.Exit(1)
    console.print(
        f"ok: compiled and linked ({' '.join(flags or []) or 'default flags'}) in {time.monotonic() - started:.1f} s; "
        f"entry {variant.candidate_entry} defined; object and driver built; its symbols passed the harness's "
        f"checks (no forbidden library or system call). {message}".rstrip()
    )
    raise typer.Exit(0)
