"""Check datasets and full float64 references drawn ahead, into the data cache, before anything needs them.

bench run's pipeline draws the next variants' while the GPU runs this one; evaluate() draws its own while the
candidate compiles. Either way the evaluation then finds them in the cache (a draw or a reference still in flight
is waited for, never done twice: DataCache single-flights both).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future

from bench_tasks.spec import Variant
from settings import HarnessSettings

from .checks import Case, read_inputs, reference, sampled
from .datacache import DataCache

Task = Callable[[], None]


def dataset_tasks(
    variant: Variant, sizes: str | list[dict[str, int]], settings: HarnessSettings, seeds: list[int] | None = None
) -> list[tuple[Task, Task]]:
    """Per (size, check seed): (draw the dataset into the cache, compute and store its full reference). None
    when the data cache is off or the task is custom (its baseline is the oracle)."""
    cache = DataCache(settings)
    if not cache.enabled or variant.task.custom:
        return []

    def tasks_for(params: dict[str, int], seed: int, full: bool) -> tuple[Task, Task]:
        def draw() -> None:
            if cache.ready(variant, params, seed) is None and cache.has_room():
                cache.dataset(variant, params, seed, settings.cache_dir / "unused")

        def ref() -> None:
            directory = cache.ready(variant, params, seed)
            if full and directory is not None and not cache.has_reference(variant, params, seed):
                case = Case(0, params, [])
                cache.full_reference(variant, params, seed, lambda: reference(variant, case, read_inputs(variant, directory, params)))

        return draw, ref

    return [
        tasks_for(params, seed, not sampled(variant, params, settings))
        for params in (variant.task.size_list(sizes) if isinstance(sizes, str) else sizes)
        for seed in (settings.seeds if seeds is None else seeds)
    ]


def after(drawn: Future, ref: Task) -> None:
    """A full reference, once its dataset is drawn (a failed draw is left to evaluate(), which draws again)."""
    try:
        drawn.result()
    except Exception:  # noqa: BLE001 - whatever the draw raised, evaluate() draws again and reports it
        return
    ref()
