"""What the graph needs from the GPU side: compile, evaluate, profile.

`LocalEvaluator` uses the real harness (nvcc, the guarded driver on this machine's GPU) and the
`profiling` package (Nsight Compute) when it is importable and works. `CachingEvaluator` wraps any
evaluator with a per-job store keyed by (task, precision, source sha, flags, sizes), so a resumed job
never repeats a finished compile or GPU evaluation. The CPU test double lives in graph/testing.py.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bench_tasks import load_task
from bench_tasks.harness import EvaluationResult, SizeRow, compile_candidate, evaluate
from settings import HarnessSettings, get_harness_settings

from .contract import Profile, ProfileMode

if TYPE_CHECKING:
    from profiling.report import ProfileReport

log = logging.getLogger(__name__)


@dataclass
class CompileReport:
    verdict: str | None  # None: compiled and passed the symbol checks; else a harness Verdict value
    message: str = ""
    log: str = ""
    flags: list[str] | None = None
    object_key: str = ""  # the compile cache entry (cache_dir/objects/KEY) holding the object; "" when none

    @property
    def ok(self) -> bool:
        return self.verdict is None


def profile_of(report: ProfileReport, mode: ProfileMode, row: SizeRow | None, note: str) -> Profile:
    """A profiling.ProfileReport as the contract keeps it: the text the planner sees in `mode`, its class
    and the metrics that text shows (the real profiler and the test double share this)."""
    from profiling import filter as profile_filter

    return Profile(
        text=profile_filter.render(report, mode=mode, row=row),
        note=note,
        mode=mode,
        bottleneck_class=report.bottleneck.value if report.bottleneck else "",
        metrics=profile_filter.shown_values(report, mode),
    )


def no_profile(note: str, mode: ProfileMode = "none") -> Profile:
    return Profile(text="", note=note, mode=mode)


@runtime_checkable
class Evaluator(Protocol):
    def compile(self, task: str, precision: str, source: str, flags: list[str]) -> CompileReport: ...

    def evaluate(self, task: str, precision: str, source: str | None, sizes: str, flags: list[str]) -> EvaluationResult: ...

    def profile(
        self, task: str, precision: str, source: str | None, mode: ProfileMode = "filtered", rows: list[dict] | None = None
    ) -> Profile: ...


@contextmanager
def gpu_turn(settings: HarnessSettings) -> Iterator[float]:
    """This machine's GPU for one evaluation or profile at a time, across threads and processes (an exclusive
    lock on a file under cache_dir, one per CUDA_VISIBLE_DEVICES): two jobs timed on one GPU at once would
    each see the other's kernels in their times. Yields the seconds spent waiting for the turn. Compiles do not
    take it; Ray's GPU workers are one actor per GPU and serialise on their own."""
    devices = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "_").replace("/", "_") or "none"
    path = Path(settings.cache_dir) / "locks" / f"gpu-{devices}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        waited = time.monotonic() - started
        if waited > 1.0:
            log.info("waited %.1f s for the GPU (%s)", waited, path)
        try:
            yield waited
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LocalEvaluator:
    """The real thing: harness compile and evaluate, Nsight Compute profile through `profiling`. Evaluations and
    profiles take turns on the GPU (`gpu_turn`): the service runs several jobs at once."""

    def __init__(self, settings: HarnessSettings | None = None, on_gpu_wait: Callable[[str, str, float], None] | None = None):
        self.settings = settings or get_harness_settings()
        self.on_gpu_wait = on_gpu_wait  # (task, precision, seconds waited for the GPU turn): figures keep it apart

    def gpu_wait(self, task: str, precision: str, seconds: float) -> None:
        """A wait for this GPU before a call (the service's GPU pool, app.gpu.GpuLockedEvaluator, reports its waits
        here) or inside one (`gpu_turn`): both go to `on_gpu_wait`."""
        if self.on_gpu_wait is not None:
            self.on_gpu_wait(task, precision, seconds)

    def compile(self, task: str, precision: str, source: str, flags: list[str]) -> CompileReport:
        variant = load_task(task).variant(precision)
        out = compile_candidate(variant, source, self.settings, list(flags))
        key = out.object_path.parent.name if out.ok and out.object_path is not None else ""
        return CompileReport(None if out.ok else out.verdict.value, out.message, out.log[-20000:], out.flags, key)  # type: ignore[union-attr]

    def evaluate(self, task: str, precision: str, source: str | None, sizes: str, flags: list[str]) -> EvaluationResult:
        with gpu_turn(self.settings) as waited:
            self.gpu_wait(task, precision, waited)
            return evaluate(task, precision, source, sizes, settings=self.settings, extra_flags=list(flags) or None)

    def profile(
        self, task: str, precision: str, source: str | None, mode: ProfileMode = "filtered", rows: list[dict] | None = None
    ) -> Profile:
        if mode == "none":
            return no_profile("profiling switched off for this job")
        try:
            from profiling.ncu import profile_kernel
        except ImportError as exc:
            return no_profile(f"profiler unavailable: {exc}", mode)
        try:
            with gpu_turn(self.settings) as waited:
                self.gpu_wait(task, precision, waited)
                report = profile_kernel(task, precision, candidate_source=source, harness_settings=self.settings)
            # The harness's row at the profiled size gives the roofline position.
            row = next((SizeRow.model_validate(r) for r in rows or [] if r.get("params") == report.params), None)
            return profile_of(report, mode, row, f"Nsight Compute, {mode} metrics")
        except Exception as exc:  # noqa: BLE001 - a missing or failing profiler must not end the job
            log.warning("profile of %s/%s failed: %s", task, precision, exc)
            return no_profile(f"no profile ({type(exc).__name__}: {exc})", mode)


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def source_sha(source: str | None) -> str:
    return hashlib.sha256(source.encode()).hexdigest() if source is not None else "baseline"


class CachingEvaluator:
    """Caches compile reports, evaluations and profiles in `store_dir` (the job's store).

    Entries are written atomically (temp file + rename) right after the inner call returns, so a
    process killed after a GPU evaluation but before the graph checkpointed its step finds the
    result here on resume instead of running the GPU again.
    """

    def __init__(self, inner: Evaluator, store_dir: Path):
        self.inner = inner
        self.store_dir = Path(store_dir)

    def _path(self, kind: str, key: str) -> Path:
        return self.store_dir / kind / f"{key}.json"

    def _load(self, kind: str, key: str) -> dict | None:
        p = self._path(kind, key)
        if p.exists():
            try:
                return json.loads(p.read_text())
            except json.JSONDecodeError:
                return None
        return None

    def _save(self, kind: str, key: str, data: dict) -> None:
        p = self._path(kind, key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, p)

    def compile(self, task: str, precision: str, source: str, flags: list[str]) -> CompileReport:
        key = _key("compile", task, precision, source_sha(source), list(flags))
        if (hit := self._load("compile", key)) is not None:
            return CompileReport(**hit)
        report = self.inner.compile(task, precision, source, flags)
        self._save("compile", key, asdict(report))
        return report

    def evaluate(self, task: str, precision: str, source: str | None, sizes: str, flags: list[str]) -> EvaluationResult:
        key = _key("evaluate", task, precision, source_sha(source), list(flags), sizes)
        if (hit := self._load("evaluations", key)) is not None:
            return EvaluationResult.model_validate(hit)
        result = self.inner.evaluate(task, precision, source, sizes, flags)
        self._save("evaluations", key, result.model_dump(mode="json"))
        return result

    def profile(
        self, task: str, precision: str, source: str | None, mode: ProfileMode = "filtered", rows: list[dict] | None = None
    ) -> Profile:
        key = _key("profile", task, precision, source_sha(source), mode)
        if (hit := self._load("profiles", key)) is not None:
            return Profile.model_validate({**hit, "mode": mode})
        result = self.inner.profile(task, precision, source, mode, rows)
        if result.text:  # a missing profiler may be installed before the resume
            self._save("profiles", key, result.model_dump(mode="json"))
        return result
