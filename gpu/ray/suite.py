"""`cudamaster bench run --ray ADDRESS`: the suite spread over every GPU worker of the cluster.

Every variant's candidate is compiled on the compile workers first and its evaluation queued with the
compiled object as soon as that is done (compile-once); baselines and vendor references go straight to
the GPU workers. All evaluations are measured on one GPU model (the cluster's most numerous one, unless
asked): a suite never mixes models. Results arrive in completion order.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial

from bench_tasks.harness import CandidateError, EvaluationResult
from bench_tasks.harness import source as harness_source
from bench_tasks.harness.pipeline import Job
from bench_tasks.spec import load_task
from bench_tasks.work import work_item

from .evaluator import RayEvaluator
from .worker import WorkOutcome


def suite_model(cluster: RayEvaluator, wanted: str | None = None) -> str:
    models = Counter(g["gpu_model"] for g in cluster.status()["gpus"] if g["alive"])
    if wanted is not None:
        if wanted not in models:
            raise RuntimeError(f"no GPU of model {wanted!r} in the cluster; it has {dict(models)}")
        return wanted
    return models.most_common(1)[0][0]


class _SuiteRun:
    """One suite on the cluster: submits each job's work and collects the results as they come back."""

    def __init__(
        self,
        cluster: RayEvaluator,
        sizes: str,
        model: str,
        on_result: Callable[[Job, EvaluationResult | Exception], None] | None,
    ) -> None:
        self.cluster, self.sizes, self.model, self.on_result = cluster, sizes, model, on_result
        self.results: list[EvaluationResult] = []
        self.lock = threading.Lock()
        self.done = threading.Semaphore(0)

    def deliver(self, job: Job, outcome: WorkOutcome | BaseException) -> None:
        """Record what came back for `job` (an evaluation, or the exception in its place) and count it done."""
        value: EvaluationResult | Exception
        if isinstance(outcome, WorkOutcome) and outcome.evaluation is not None:
            value = outcome.evaluation
        elif isinstance(outcome, Exception):
            value = outcome
        else:
            value = RuntimeError(f"no evaluation came back for {job.key}: {outcome!r}")
        with self.lock:
            if isinstance(value, EvaluationResult):
                self.results.append(value)
            if self.on_result is not None:
                self.on_result(job, value)
        self.done.release()

    def prepared(self, job: Job) -> str | None:
        """The job's candidate source as the harness takes it (None: a baseline or vendor reference)."""
        return None if job.source is None else harness_source.prepare(job.source, self.cluster.harness.max_source_bytes)

    def evaluate(self, job: Job, compiled=None) -> None:
        """Queue the job's evaluation on a GPU worker of the suite's model (with the compiled object, if any)."""
        item = work_item(
            "evaluate",
            load_task(job.task),
            job.precision,
            self.prepared(job),
            settings=self.cluster.harness,
            job_id="bench",
            sizes=self.sizes,
            implementation=job.implementation,
            compiled=compiled,
            gpu_model=self.model,
        )
        future = self.cluster.submit(item)
        future.add_done_callback(lambda f: self.deliver(job, f.exception() or f.result()))

    def compiled_then_evaluate(self, job: Job, future: Future) -> None:
        """Once the job's compile is done, queue its evaluation with what it compiled."""
        outcome = None if future.exception() else future.result()
        self.evaluate(job, outcome.compiled if outcome is not None else None)  # a failed compile is reported by the evaluation

    def submit(self, job: Job) -> None:
        """Start the job: a candidate is compiled first, a baseline or vendor reference goes straight to a GPU worker."""
        if job.source is None:
            self.evaluate(job)
            return
        try:
            source = self.prepared(job)
        except CandidateError as exc:  # not a usable source: reported like the local pipeline does
            self.deliver(job, exc)
            return
        item = work_item("compile", load_task(job.task), job.precision, source, settings=self.cluster.harness, job_id="bench")
        self.cluster.submit(item).add_done_callback(partial(self.compiled_then_evaluate, job))

    def wait(self, count: int) -> list[EvaluationResult]:
        """The results, once `count` jobs have come back."""
        for _ in range(count):
            self.done.acquire()
        return self.results


def run_suite(
    cluster: RayEvaluator,
    jobs: list[Job],
    sizes: str,
    *,
    gpu_model: str | None = None,
    on_result: Callable[[Job, EvaluationResult | Exception], None] | None = None,
) -> list[EvaluationResult]:
    """Evaluate `jobs` on the cluster's GPUs at once; returns the results in completion order."""
    run = _SuiteRun(cluster, sizes, suite_model(cluster, gpu_model), on_result)
    for job in jobs:
        run.submit(job)
    return run.wait(len(jobs))
