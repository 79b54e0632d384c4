"""GPU work spread over a Ray cluster, behind gpu.protocol's Evaluator (optional: `pip install -e ".[ray]"`).

`RayEvaluator` (evaluator.py) runs one worker per GPU and CPU compile workers, with a fair queue across
jobs (queue.py); the workers (worker.py) run `bench_tasks.work.WorkItem`s. Settings: the `ray` section
(settings.py, CUDAMASTER_RAY__ADDRESS). Nothing here imports Ray until a RayEvaluator is made.
"""

from settings import RaySettings, get_ray_settings

__all__ = ["RaySettings", "evaluator_for_cli", "make_ray_evaluator"]

RAY_OPTION_HELP = (
    "run every compile, evaluation and profile on this Ray cluster (HOST:6379, ray://HOST:10001 or auto); "
    "default: CUDAMASTER_RAY__ADDRESS, else this machine's GPU"
)


def make_ray_evaluator(address: str | None = None, *, settings: RaySettings | None = None, **kwargs):
    """A RayEvaluator on `address` (else `settings.address`, else CUDAMASTER_RAY__ADDRESS); a clear error when
    Ray is not installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RuntimeError(
            'Ray is not installed: pip install -e ".[ray]" (or pip install ray==2.60.0), '
            "or run without --ray / CUDAMASTER_RAY__ADDRESS to use this machine's GPU"
        ) from None
    from .evaluator import RayEvaluator

    settings = settings or get_ray_settings()
    if address:
        settings = settings.model_copy(update={"address": address})
    return RayEvaluator(settings, **kwargs)


def evaluator_for_cli(address: str | None, **kwargs):
    """The RayEvaluator of `--ray ADDRESS` (or CUDAMASTER_RAY__ADDRESS), None when neither is set; raises
    RuntimeError with what to do when Ray is missing or the cluster cannot run GPU work."""
    settings = get_ray_settings()
    if not (address or settings.address):
        return None
    from .evaluator import ClusterError

    try:
        return make_ray_evaluator(address, settings=settings, **kwargs)
    except ClusterError as exc:
        raise RuntimeError(str(exc)) from None
