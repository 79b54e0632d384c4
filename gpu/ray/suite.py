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


def run_suite(
    cluster: RayEvaluator,
    jobs: list[Job],
    sizes: str,
    *,
    gpu_model: str | None = None,
    on_result: Callable[[Job, EvaluationResult | Exception], None] | None = None,
) -> list[EvaluationResult]:
    """Evaluate `jobs` on the cluster's GPUs at once; returns the results in completion order."""
    model = suite_model(cluster, gpu_model)
    results: list[EvaluationResult] = []
    lock = threading.Lock()
    done = threading.Semaphore(0)

    def deliver(job: Job, outcome: WorkOutcome | BaseException) -> None:
        value: EvaluationResult | Exception
        if isinstance(outcome, WorkOutcome) and outcome.evaluation is not None:
            value = outcome.evaluation
        elif isinstance(outcome, Exception):
            value = outcome
        else:
            value = RuntimeError(f"no evaluation came back for {job.key}: {outcome!r}")
        with lock:
            if isinstance(value, EvaluationResult):
                results.append(value)
            if on_result is not None:
                on_result(job, value)
        done.release()

    def prepared(job: Job) -> str | None:
        return None if job.source is None else harness_source.prepare(job.source, cluster.harness.max_source_bytes)

    def evaluate(job: Job, compiled=None) -> None:
        item = work_item(
            "evaluate",
            load_task(job.task),
            job.precision,
            prepared(job),
            settings=cluster.harness,
            job_id="bench",
            sizes=sizes,
            implementation=job.implementation,
            compiled=compiled,
            gpu_model=model,
        )
        future = cluster.submit(item)
        future.add_done_callback(lambda f: deliver(job, f.exception() or f.result()))

    def compiled_then_evaluate(job: Job, future: Future) -> None:
        outcome = None if future.exception() else future.result()
        evaluate(job, outcome.compiled if outcome is not None else None)  # a failed compile is reported by the evaluation

    for job in jobs:
        if job.source is None:
            evaluate(job)
            continue
        try:
            source = prepared(job)
        except CandidateError as exc:  # not a usable source: reported like the local pipeline does
            deliver(job, exc)
            continue
        item = work_item("compile", load_task(job.task), job.precision, source, settings=cluster.harness, job_id="bench")
        cluster.submit(item).add_done_callback(partial(compiled_then_evaluate, job))
    for _ in jobs:
        done.acquire()
    return results
