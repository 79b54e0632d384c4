"""Test doubles for CPU-only machines. FAKE GPU RESULTS: nothing here measures anything.

`FakeGpuEvaluator` compiles every candidate with the REAL harness compile (nvcc, prototype and
symbol checks) and then invents the GPU part from markers in the source:

    // FAKE_SPEEDUP 2.5    -> verdict ok, every size 2.5x faster than the baseline, P = 2.5
    // FAKE_WRONG          -> verdict wrong_answer
    // FAKE_CRASH          -> verdict runtime_error
    (no marker)            -> verdict ok, speedup 1.0

and its compute-sanitizer verdicts (`sanitize`) from others:

    // FAKE_SANITIZER racecheck [memcheck ...] -> those tools report FAKE findings, the others clean
    // FAKE_SANITIZER_NOT_RUN                  -> every tool not_run (a GPU runtime that refuses the tool)
    (no marker)                                -> every tool clean (`sanitizer_supported=False`: every tool not_run)

`before_compile` is called before each real compile (tests use it to time a SIGKILL). With
`ncu_report` (a saved `ncu --page raw --csv` report, e.g. tests/fixtures/ncu/*.csv) every profile is
that FAKE report (not of this kernel) put through the real parser, classifier and metric filter.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bench_tasks import load_task
from bench_tasks.harness import EvaluationResult, SizeRow, TimeStats, Verdict
from bench_tasks.harness import source as harness_source
from bench_tasks.harness.result import Check, GpuInfo, SanitizerStatus, SanitizerVerdict
from settings import HarnessSettings

from .local import LocalEvaluator
from .protocol import CompileReport, CompileRequest, EvaluateRequest, Profile, ProfileRequest, SanitizeRequest, no_profile, profile_of

FAKE_GPU = GpuInfo(name="FAKE GPU (test double, no measurement)", compute_capability="9.0", sm_count=132, l2_bytes=60 * 2**20)


FAKE_REFUSED = "FAKE GPU runtime: Error: Device not supported (test double)"


def fake_sanitizer_verdicts(source: str | None, tools: tuple[str, ...], supported: bool = True) -> list[SanitizerVerdict]:
    """The FAKE verdicts the markers in `source` plant (see the module docstring)."""
    text = source or ""
    if not supported or "FAKE_SANITIZER_NOT_RUN" in text:
        return [SanitizerVerdict(tool=t, status=SanitizerStatus.not_run, reason=FAKE_REFUSED) for t in tools]
    m = re.search(r"FAKE_SANITIZER((?:[ \t]+[a-z]+)+)", text)
    planted = set(m.group(1).split()) if m else set()
    verdicts = []
    for tool in tools:
        if tool in planted:
            line = f"FAKE {tool} finding: Error: Race reported between Write access at fake_kernel()+0x10 in kernel.cu:3"
            verdicts.append(SanitizerVerdict(tool=tool, status=SanitizerStatus.findings, kernel="fake_kernel", errors=1, report=[line]))
        else:
            verdicts.append(SanitizerVerdict(tool=tool, status=SanitizerStatus.clean, sizes=[{"N": 1024}]))
    return verdicts


def _stats(us: float) -> TimeStats:
    return TimeStats(median_us=us, iqr_us=0.0, min_us=us, samples=10, wall_median_us=us + 5.0)


class FakeGpuEvaluator:
    """Real nvcc compile, FAKE GPU evaluation and profile (see the module docstring)."""

    gpu_info = FAKE_GPU  # the GPU model a Ray worker running this double reports (gpu/ray/worker.py)

    def __init__(
        self,
        harness_settings: HarnessSettings | None = None,
        before_compile: Callable[[str], None] | None = None,
        ncu_report: Path | None = None,
        sanitizer_supported: bool = True,
    ):
        self.real = LocalEvaluator(harness_settings)
        self.sanitizer_supported = sanitizer_supported
        self.sanitized: list[str | None] = []
        self.before_compile = before_compile
        self.ncu_report = ncu_report
        self.compiles: list[str] = []
        self.evaluations: list[str | None] = []
        self.profiles: list[str | None] = []

    def compile(self, request: CompileRequest) -> CompileReport:
        if self.before_compile is not None:
            self.before_compile(request.source)
        self.compiles.append(request.source)
        return self.real.compile(request)

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        task, precision, source, sizes = request.task, request.precision, request.source, request.sizes
        self.evaluations.append(source)
        variant = load_task(task).variant(precision)
        sizes_list = variant.task.size_list(sizes)
        result = EvaluationResult(
            task=task,
            precision=precision,
            verdict=Verdict.ok,
            size_set=sizes,
            gpu=FAKE_GPU,
            baseline_only=source is None,
            message="FAKE GPU evaluation (test double)",
        )
        if source is not None:
            text = harness_source.prepare(source, self.real.settings.max_source_bytes)
            compiled = self.real.compile(CompileRequest(task=task, precision=precision, source=text, flags=request.flags))
            if not compiled.ok:
                result.verdict, result.message, result.log = Verdict(compiled.verdict), compiled.message, compiled.log  # type: ignore[arg-type]
                return result
            if "FAKE_WRONG" in source:
                result.verdict, result.message = Verdict.wrong_answer, "size {'N': 1024}, seed 1, first run: C: FAKE mismatch at 0"
                return result
            if "FAKE_CRASH" in source:
                result.verdict, result.message = Verdict.runtime_error, "FAKE illegal memory access"
                return result
        m = re.search(r"FAKE_SPEEDUP\s+([0-9.]+)", source or "")
        speedup = float(m.group(1)) if m else 1.0
        rows = []
        for params in sizes_list:
            base_us = 10.0 + variant.task.complexity_of(params) / 1000.0
            row = SizeRow(
                params=params,
                complexity=variant.task.complexity_of(params),
                passed=True,
                baseline=_stats(base_us),
                roofline_floor_us=base_us / 20.0,
                baseline_roofline_pct=5.0,
            )
            if source is not None:
                row.candidate = _stats(base_us / speedup)
                row.speedup, row.speedup_iqr = speedup, 0.0
                row.candidate_roofline_pct = 5.0 * speedup
                row.checks = [Check(impl="candidate", seed=1, stage="timed_call", call=c, passed=True) for c in (0, 1)]  # as the harness's
            rows.append(row)
        result.rows = rows
        if source is not None:
            result.score = speedup
        return result

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        self.sanitized.append(request.source)
        return fake_sanitizer_verdicts(request.source, request.tools, self.sanitizer_supported)

    def profile(self, request: ProfileRequest) -> Profile:
        task, precision, source, mode, rows = request.task, request.precision, request.source, request.mode, request.rows
        self.profiles.append(source)
        if mode == "none":
            return no_profile("profiling switched off for this job")
        what = "baseline" if source is None else "candidate"
        if self.ncu_report is not None:
            from profiling.parse import parse_raw
            from profiling.report import ProfileReport

            text = Path(self.ncu_report).read_text()
            report = ProfileReport.from_kernels(parse_raw(text), raw_csv=text, task=task, precision=precision, impl=what)
            row = SizeRow.model_validate(rows[0]) if rows else None
            return profile_of(report, mode, row, f"FAKE profiler: the saved report {Path(self.ncu_report).name} (test double)")
        text = f"FAKE PROFILE ({mode}) of the {what}: bottleneck memory-bound; dram throughput 5% of peak"
        if mode == "full":  # long enough for a token budget to cut
            text += "".join(f"\n- FAKE metric {i}: {i}.00 % [fake__unit_{i}.avg.pct_of_peak_sustained_elapsed]" for i in range(200))
        return Profile(
            text=text,
            note="FAKE profiler (test double)",
            mode=mode,
            bottleneck_class="memory_latency" if source is None else "memory_bandwidth",
        )
