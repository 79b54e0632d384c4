"""compute-sanitizer verdicts: memcheck, racecheck, initcheck and synccheck on one kernel, in the harness's sandbox and driver.

Each tool runs the harness's own driver in its `once` mode (evaluate.prepare_single_run: the candidate, or the baseline,
called once on the harness's seeded inputs with its outputs poisoned and guarded), inside the evaluation's sandbox,
at two sizes (`sanitizer_sizes`), and gets one verdict (result.SanitizerVerdict): clean, findings (the tool, the kernel,
the first report lines) or not_run with the reason (the tool is missing, the GPU's runtime refuses it, the time limit).
A tool that never reached its summary is never `clean`.

Flags, per tool:
- memcheck `--check-device-heap yes` (device-side malloc/free misuse; cheap). Not `--leak-check full`: a kernel may keep a
  workspace cudaMalloc'ed across calls on purpose, and the once-run exits right after its call.
- racecheck `--racecheck-detect-level error`: shared-memory hazards that are errors, not the warnings (benign same-value
  writes) that libraries trigger by the thousand.
- initcheck, synccheck: as they come.
- all: `--error-exitcode` (a second signal beside the parsed summary), `--print-limit` (the report is capped anyway),
  `--show-backtrace device` (no host frames: shorter reports, the kernel's frames kept).
The driver's outputs sit inside 64 KiB guard bands of the same allocation (runtime/cm_runtime.h): memcheck sees an
access as out of bounds only past the guard band; a write into the band is the evaluation's runtime_error already.

Cost: racecheck instruments every shared-memory access (10-100x a plain run); the tools share nothing, so each gets
`sanitizer_tool_timeout_s` (15 s default) for both sizes: four tools in at most a minute on one kernel, plus the one
compile the driver needs.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench_tasks.spec import Task, Variant, load_task
from settings import HarnessSettings, get_harness_settings

from . import sanitizer_report as report
from .result import SANITIZER_TOOLS, EvaluationResult, SanitizerStatus, SanitizerVerdict
from .sandbox import toolkit_root

if TYPE_CHECKING:
    from .evaluate import SingleRun

ERROR_EXITCODE = 86  # what compute-sanitizer exits with when it found an error (no driver exit status is 86)
PRINT_LIMIT = 10
FALLBACKS = (Path("/usr/local/cuda/bin/compute-sanitizer"),)  # where the toolkit puts it when nvcc is not beside it
_TOOL_FLAGS: dict[str, tuple[str, ...]] = {
    "memcheck": ("--check-device-heap", "yes"),
    "racecheck": ("--racecheck-detect-level", "error"),
    "initcheck": (),
    "synccheck": (),
}


def find_sanitizer(settings: HarnessSettings) -> str | None:
    """compute-sanitizer's path: the setting (a name on PATH or a path), else beside nvcc's toolkit, else None."""
    found = shutil.which(settings.compute_sanitizer)
    if found:
        return found
    nvcc = shutil.which(settings.nvcc)
    root = toolkit_root(nvcc) if nvcc else None
    for candidate in ([root / "bin" / "compute-sanitizer"] if root else []) + list(FALLBACKS):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def documented_findings(task: Task) -> dict[str, str]:
    """The tools whose findings on the task's BASELINE are known and explained in its task.toml: `[notes] sanitizer =
    "racecheck: why; initcheck: why"` -> {tool: why}. A baseline flagged by a tool not listed there is a finding."""
    text = task.notes.get("sanitizer", "")
    out = {}
    for part in text.split(";"):
        tool, sep, why = part.partition(":")
        if sep and tool.strip() in SANITIZER_TOOLS:
            out[tool.strip()] = why.strip()
    return out


def _irregularity(params: dict[str, int]) -> tuple[int, int]:
    """How much of a size is off the usual tiles (values not a multiple of 32), then how large it is."""
    return sum(1 for v in params.values() if v % 32), sum(params.values())


def sanitizer_sizes(task: Task) -> list[dict[str, int]]:
    """The sizes the tools run at, and why these two:
    - the smallest paper size: the size the kernel is scored at whose run under racecheck (the slow tool) stays within
      seconds; it takes the kernel's main path (its full tiles, its grid-stride loops);
    - one edge size: defects hide at the boundaries (a partial last tile, a tail loop, a size below one block), which
      the paper sizes, powers of two mostly, never reach. Of the task's edge sizes, the one with the most parameters
      off a multiple of 32 (ties: the largest), so the tail paths run.
    A custom task has no edge sizes: its smallest size alone."""
    paper = task.size_list("paper")
    smallest = min(paper, key=lambda p: (task.complexity_of(p), sum(p.values())))
    sizes = [dict(smallest)]
    edges = [] if task.custom else list(task.sizes.get("edge", []))
    if edges:
        edge = max(edges, key=_irregularity)
        if dict(edge) != sizes[0]:
            sizes.append(dict(edge))
    return sizes


def tool_command(sanitizer: str, tool: str) -> list[str]:
    return [
        sanitizer,
        "--tool",
        tool,
        *_TOOL_FLAGS[tool],
        "--error-exitcode",
        str(ERROR_EXITCODE),
        "--print-limit",
        str(PRINT_LIMIT),
        "--show-backtrace",
        "device",
    ]


@dataclass
class _ToolState:
    """One tool's runs so far over the sizes."""

    tool: str
    budget_s: float
    spent_s: float = 0.0
    sizes: list[dict[str, int]] = field(default_factory=list)
    verdict: SanitizerVerdict | None = None  # decided (findings or not_run): no further size runs

    def finish(self) -> SanitizerVerdict:
        if self.verdict is None:
            self.verdict = SanitizerVerdict(tool=self.tool, status=SanitizerStatus.clean)
        return self.verdict.model_copy(update={"sizes": self.sizes, "seconds": round(self.spent_s, 3)})


def verdict_of_run(tool: str, rc: int | None, output: str, params: dict[str, int], budget_s: float) -> SanitizerVerdict | None:
    """One tool's run at one size -> its verdict when decided here (findings, not_run); None: clean so far."""
    if rc is None:
        return SanitizerVerdict(
            tool=tool, status=SanitizerStatus.not_run, reason=f"time limit: not done within {budget_s:.0f} s at size {params}"
        )
    run = report.parse(output)
    if run.unsupported:
        return SanitizerVerdict(
            tool=tool, status=SanitizerStatus.not_run, reason=f"the GPU's runtime refuses compute-sanitizer: {run.unsupported}"
        )
    if run.errors or rc == ERROR_EXITCODE:
        lines = [f"size {params}", *run.report] if run.report else [f"size {params}", *output.strip().splitlines()[-5:]]
        return SanitizerVerdict(tool=tool, status=SanitizerStatus.findings, kernel=run.kernel, errors=max(run.errors, 1), report=lines)
    if not run.completed:
        tail = " ".join(output.strip().splitlines()[-3:])[-300:]
        return SanitizerVerdict(
            tool=tool,
            status=SanitizerStatus.not_run,
            reason=f"compute-sanitizer ended without its summary (exit {rc}) at size {params}: {tail}",
        )
    if rc != 0:
        tail = " ".join(output.strip().splitlines()[-3:])[-300:]
        return SanitizerVerdict(
            tool=tool, status=SanitizerStatus.not_run, reason=f"the kernel's run failed under the tool (exit {rc}) at size {params}: {tail}"
        )
    return None


def not_run(reason: str, tools: Iterable[str] = SANITIZER_TOOLS) -> list[SanitizerVerdict]:
    return [SanitizerVerdict(tool=t, status=SanitizerStatus.not_run, reason=reason) for t in tools]


# One staged run of the kernel at one size: (the command prefix) -> (exit status or None at the time limit, output).
Runner = Callable[[list[str], float], tuple[int | None, str]]


def sanitize_runs(
    sanitizer: str, runs: list[tuple[dict[str, int], Runner]], tools: Iterable[str], budget_s: float
) -> list[SanitizerVerdict]:
    """Every tool over the staged runs (one per size), each tool within `budget_s` over its sizes. A runtime that
    refuses the tool refuses them all: the tools left are not_run with the same reason, at no further cost."""
    states = [_ToolState(t, budget_s) for t in tools]
    refused = ""
    for state in states:
        for params, run in runs:
            if refused:
                state.verdict = SanitizerVerdict(tool=state.tool, status=SanitizerStatus.not_run, reason=refused)
            if state.verdict is not None:
                break
            left = state.budget_s - state.spent_s
            t0 = time.monotonic()
            rc, output = run(tool_command(sanitizer, state.tool), max(left, 0.1))
            state.spent_s += time.monotonic() - t0
            state.sizes.append(params)
            state.verdict = verdict_of_run(state.tool, rc, output, params, state.budget_s)
            if state.verdict is not None and state.verdict.reason.startswith("the GPU's runtime refuses"):
                refused = state.verdict.reason
    return [s.finish() for s in states]


def sanitize_result(result: EvaluationResult, source: str | bytes | None, settings: HarnessSettings | None = None) -> EvaluationResult:
    """`bench eval/run --sanitize`: the verdicts on what `result` measured (the candidate, or the baseline alone), once it
    is correct; a vendor reference (trusted library code) and an incorrect kernel are left unsanitized."""
    if result.ok and result.implementation != "vendor":
        result.sanitizer = sanitize(result.task, result.precision, None if result.baseline_only else source, settings=settings)
    return result


def sanitize(
    task: str | Task,
    precision: str,
    candidate_source: str | bytes | None = None,
    *,
    settings: HarnessSettings | None = None,
    tools: Iterable[str] = SANITIZER_TOOLS,
    sizes: list[dict[str, int]] | None = None,
) -> list[SanitizerVerdict]:
    """One verdict per tool on the candidate (None: the baseline) of `task` at `precision`, at `sanitizer_sizes`.

    Never raises for what the kernel or the machine does: a kernel that does not compile, a missing tool or a refused
    GPU are not_run verdicts with the reason."""
    from .evaluate import prepare_single_run  # numpy and the compiler load on first use

    settings = settings or get_harness_settings()
    tools = [t for t in tools if t in SANITIZER_TOOLS]
    sanitizer = find_sanitizer(settings)
    if sanitizer is None:
        return not_run(f"compute-sanitizer not found ({settings.compute_sanitizer!r}, nor beside nvcc): install the CUDA toolkit's", tools)
    variant: Variant = (load_task(task) if isinstance(task, str) else task).variant(precision)
    staged = []
    try:
        for params in sizes or sanitizer_sizes(variant.task):
            try:
                staged.append(prepare_single_run(variant.task, precision, candidate_source, params, settings=settings))
            except ValueError as exc:
                return not_run(f"the kernel does not build: {exc}", tools)

        def runner(single: SingleRun) -> Runner:
            return lambda prefix, timeout: single.start(prefix, tools=(sanitizer,)).wait(timeout)

        return sanitize_runs(sanitizer, [(s.params, runner(s)) for s in staged], tools, settings.sanitizer_tool_timeout_s)
    finally:
        for single in staged:
            single.cleanup()
