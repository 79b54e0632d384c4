"""Profile every baseline of every task variant: the corpus (RUN.json) that thresholds are fitted on.

RUN.json is a JSON list of `ProfileReport.model_dump(mode="json")`. Drivers are compiled in
parallel threads (nvcc runs in child processes); ncu runs one at a time, since it owns the GPU.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench_tasks import load_task, task_names
from settings import ProfilingSettings, get_profiling_settings

from .ncu import default_params, profile_single_run, resolve_ncu
from .report import ProfileReport


@dataclass
class Failure:
    task: str
    precision: str
    error: str


def profile_baselines(
    tasks: list[str] | None = None, *, jobs: int = 4, budget_s: float | None = None, settings: ProfilingSettings | None = None, on_done=None
) -> tuple[list[ProfileReport], list[Failure]]:
    """Profile each baseline at its default size. Failures (and variants skipped once `budget_s`
    has passed) are returned, not raised; a missing ncu is raised at once."""
    from bench_tasks.harness import prepare_single_run

    settings = settings or get_profiling_settings()
    resolve_ncu(settings)
    started = time.monotonic()
    variants = [(t, v.precision) for t in (tasks or task_names()) for v in load_task(t).variants()]
    reports: list[ProfileReport] = []
    failures: list[Failure] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures: list[tuple[str, str, Future]] = [
            (t, p, pool.submit(lambda t=t, p=p: prepare_single_run(t, p, None, default_params(t, p, settings))))  # type: ignore[misc]
            for t, p in variants
        ]
        for task, precision, fut in futures:
            if budget_s is not None and time.monotonic() - started > budget_s:
                if not fut.cancel():  # already compiling: drop its staged run once it is ready
                    fut.add_done_callback(_cleanup)
                failures.append(Failure(task, precision, f"skipped: the {budget_s:.0f} s budget was spent"))
                continue
            try:
                report = profile_single_run(fut.result(), task, precision, settings=settings)
                reports.append(report)
                if on_done:
                    on_done(report, None)
            except Exception as exc:  # noqa: BLE001 - one variant's failure must not end the corpus
                failures.append(Failure(task, precision, f"{type(exc).__name__}: {exc}"))
                if on_done:
                    on_done(None, failures[-1])
    return reports, failures


def _cleanup(fut: Future) -> None:
    if not fut.cancelled() and fut.exception() is None:
        fut.result().cleanup()


def write_corpus(reports: list[ProfileReport], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([r.model_dump(mode="json") for r in reports], indent=1))
