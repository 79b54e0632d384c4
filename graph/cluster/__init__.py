"""GPU work spread over a Ray cluster, behind graph.evaluator's protocol (optional: `pip install -e ".[ray]"`).

`RayEvaluator` (evaluator.py) runs one worker per GPU and CPU compile workers, with a fair queue across
jobs (queue.py); the workers (worker.py) run `bench_tasks.work.WorkItem`s. Settings: the `ray` section
(settings.py, CUDAMASTER_RAY__ADDRESS). Nothing here imports Ray until a RayEvaluator is made.
"""

from .settings import RaySettings

__all__ = ["RaySettings", "make_ray_evaluator"]


def make_ray_evaluator(address: str | None = None, *, settings: RaySettings | None = None, **kwargs):
    """A RayEvaluator on `address` (else `settings.address`, else CUDAMASTER_RAY__ADDRESS); a clear error when
    Ray is not installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RuntimeError("Ray is not installed: pip install -e \".[ray]\" (or pip install ray==2.60.0), "
                           "or run without --ray / CUDAMASTER_RAY__ADDRESS to use this machine's GPU") from None
    from .evaluator import RayEvaluator

    settings = settings or RaySettings()
    if address:
        settings = settings.model_copy(update={"address": address})
    return RayEvaluator(settings, **kwargs)
