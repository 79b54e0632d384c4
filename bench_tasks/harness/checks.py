"""Output checks: what a kernel wrote against the float64 reference (or a custom task's baseline).

Used for the correctness calls (seeds 1-3 and the fresh seed after timing) and for the timed calls
chosen at random, whose inputs were redrawn on the device: the same comparison and the same verdicts.
Each check is one implementation, one dataset (or timed call), every output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench_tasks import data
from bench_tasks.compare import Comparison, check_outputs
from bench_tasks.refresh import refresh_draw, refresh_values, shuffled_values, stream_id
from bench_tasks.spec import INPUT_ROLES, Variant
from settings import HarnessSettings

from .result import Check


@dataclass
class Case:
    """One size of an evaluation: its datasets (seed, purpose, directory) and secret choices."""

    index: int
    params: dict[str, int]
    datasets: list[tuple[int, str, Path]]
    sample: dict[str, np.ndarray] | None = None  # output name -> checked flat indices (large sizes)
    check_pairs: list[int] = field(default_factory=list)  # timed pairs whose outputs are checked

    @property
    def first_check(self) -> int:
        return next(d for d, (_, purpose, _) in enumerate(self.datasets) if purpose == "check")

    @property
    def timed_dataset(self) -> int:
        """The dataset the timed pairs start from (their kept inputs, structure, are its): the last check
        dataset, which the driver's buffers hold once its correctness calls are done."""
        return max(d for d, (_, purpose, _) in enumerate(self.datasets) if purpose == "check")


def outputs(variant: Variant) -> list[str]:
    return variant.outputs()


def inputs(variant: Variant) -> list[str]:
    return [a.name for a in variant.task.args if a.role_for(variant.precision) in INPUT_ROLES]


def read_inputs(variant: Variant, directory: Path, params: dict[str, int]) -> dict[str, np.ndarray]:
    """A dataset's stored inputs (and in-out data), in the parameters' storage types."""
    lengths = variant.task.lengths(params, variant.precision)
    return {n: _read(directory / f"{n}.bin", variant, n, lengths[n]) for n in inputs(variant)}


def _read(path: Path, variant: Variant, name: str, count: int) -> np.ndarray:
    return np.fromfile(path, dtype=data.STORAGE[variant.param(name).dtype], count=count)


def sampled(variant: Variant, params: dict[str, int], settings: HarnessSettings) -> bool:
    """Whether the reference covers only a sample of the outputs at this size (too many FLOPs or elements)."""
    task = variant.task
    lengths = task.lengths(params, variant.precision)
    flops, _ = task.work(params, variant.precision)
    big = flops > settings.reference_full_flops or any(lengths[o] > settings.reference_full_elements for o in outputs(variant))
    return task.oracle != "baseline" and big


def choose_sample(variant: Variant, case: Case, settings: HarnessSettings, rng: np.random.Generator) -> None:
    """At large sizes the reference covers a random sample of each output (plus its first and last element)."""
    if not sampled(variant, case.params, settings):
        return
    lengths = variant.task.lengths(case.params, variant.precision)
    outs = outputs(variant)
    case.sample = {}
    for o in outs:
        n = lengths[o]
        k = min(n, settings.reference_sample)
        idx = rng.choice(n, size=k, replace=False) if k < n else np.arange(n)
        case.sample[o] = np.unique(np.concatenate([idx, [0, n - 1]]).astype(np.int64))


def reference(variant: Variant, case: Case, stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float64 reference for these stored inputs (on the case's sample, if it has one)."""
    task = variant.task
    names = data.reference_names(variant, case.params)
    lengths = task.lengths(case.params, variant.precision)
    ref = task.reference_module.reference(data.float64_inputs(variant, stored), names, variant.precision, case.sample)  # type: ignore[union-attr]
    result = {}
    for o in outputs(variant):
        r = np.asarray(ref[o], dtype=np.float64).reshape(-1)
        if case.sample is not None and r.size == lengths[o] and r.size != case.sample[o].size:
            r = r[case.sample[o]]
        result[o] = r
    return result


def read_output(variant: Variant, case: Case, path: Path, name: str) -> np.ndarray:
    """A saved output: every element, or at a sampled size only the sampled ones (in sample order)."""
    count = case.sample[name].size if case.sample else variant.task.lengths(case.params, variant.precision)[name]
    return _read(path, variant, name, count)


def compare_outputs(
    variant: Variant,
    case: Case,
    got: dict[str, tuple[np.ndarray, int]],
    want: dict[str, np.ndarray],
    seen: Callable[[], dict[str, np.ndarray]],
) -> list[Comparison]:
    """Each output (stored values; non-finite elements outside what was saved) against float64 `want`:
    per-output tolerances at the size, or the task's check(); `seen()` gives the float64 inputs the
    call saw (read only when the task defines a check())."""
    names = data.reference_names(variant, case.params)
    values = {n: data.to_float64(raw, variant.param(n).dtype) for n, (raw, _) in got.items()}
    module = variant.task.reference_module
    x = seen() if module is not None and hasattr(module, "check") else {}
    cmps = check_outputs(variant, values, want, x, names, case.sample)
    if case.sample is not None and all(c.passed for c in cmps):  # sampled: every element must have been written
        for name, (raw, unwritten_elsewhere) in got.items():
            if unwritten_elsewhere:
                cmps.append(
                    Comparison.failure(f"{name}: {unwritten_elsewhere} elements are NaN (left unwritten, or NaN written)", raw.size)
                )
    return cmps


def as_check(cmps: list[Comparison], impl: str, seed: int, stage: str, call: int | None = None) -> Check:
    failing = [c for c in cmps if not c.passed]
    worst = failing[0] if failing else max(cmps, key=lambda c: c.max_abs_err)
    return Check(
        impl=impl,
        seed=seed,
        stage=stage,
        call=call,
        passed=worst.passed,
        max_abs_err=worst.max_abs_err,
        max_rel_err=worst.max_rel_err,
        worst_index=worst.worst_index,
        checked_elements=worst.checked,
        message=worst.message,
    )


def timed_inputs(variant: Variant, case: Case, outdir: Path, pair: int, kept_from: Path) -> dict[str, np.ndarray]:
    """What the calls of timed pair `pair` saw: redrawn inputs as the driver saved them, kept ones from the dataset."""
    lengths = variant.task.lengths(case.params, variant.precision)
    stored = {}
    for name in inputs(variant):
        redrawn = refresh_draw(variant, name) is not None
        path = outdir / f"c{case.index}_t{pair}_input_{name}.bin" if redrawn else kept_from / f"{name}.bin"
        stored[name] = _read(path, variant, name, lengths[name])
    return stored


def generator_mismatch(
    variant: Variant,
    case: Case,
    stored: dict[str, np.ndarray],
    key: int,
    pair: int,
    rng: np.random.Generator,
    kept_from: Path,
    spots: int = 64,
) -> str:
    """'' when the saved redrawn inputs hold what the generator draws (checked on a random sample of
    elements with the numpy twin; a shuffled input against the dataset's values in `kept_from`), else
    what differs."""
    params = [p.name for p in variant.prototype.params]  # the generator's stream is the argument's position
    lengths = variant.task.lengths(case.params, variant.precision)
    for name, values in stored.items():
        draw = refresh_draw(variant, name)
        if draw is None or values.size == 0:
            continue
        idx = np.unique(np.concatenate([rng.integers(0, values.size, min(spots, values.size)), [0, values.size - 1]]))
        stream = stream_id(case.index, params.index(variant.param(name).name))
        if draw.kind == "shuffle":
            want = shuffled_values(_read(kept_from / f"{name}.bin", variant, name, lengths[name]), key, pair + 1, stream, idx)
        else:
            want = refresh_values(variant.param(name).dtype, draw, key, pair + 1, stream, idx)
        if not np.array_equal(values[idx], want):
            bad = int(idx[np.argmax(values[idx] != want)])
            return (
                f"input {name} of timed call {pair} differs from the generator's draw at index {bad} "
                "(memory corrupted between calls, or a harness bug)"
            )
    return ""
