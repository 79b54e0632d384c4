"""float64 reference of the synthetic format_demo task (a test fixture)."""

from collections.abc import Callable

import numpy as np

from bench_tasks.compare import Comparison, compare


def derive(names: dict) -> dict[str, int]:
    """m buckets: drawn from a generator seeded by the size only (1 <= m <= min(n, 4))."""
    n = int(names["n"])
    return {"m": int(np.random.default_rng([n, 11]).integers(1, min(n, 4) + 1))}


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    return {"h": rng.uniform(-2.0, 2.0, int(names["n"]))}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    n, m = int(p["n"]), int(p["m"])
    a = np.abs(x["x"])
    return {
        "y": x["x"] + x["h"],
        "s": np.bincount(np.arange(n) % m, weights=x["x"], minlength=m),
        "idx": np.array([float(np.argmax(a))]),
    }


def check(
    got: dict[str, np.ndarray],
    ref: dict[str, np.ndarray],
    x: dict[str, np.ndarray],
    p: dict,
    precision: str,
    tolerance: Callable[[str], object],
) -> list[Comparison]:
    """y and s elementwise; idx is right when it points at ANY element of largest |x| (ties allowed)."""
    result = [compare("y", got["y"], ref["y"], tolerance("y")), compare("s", got["s"], ref["s"], tolerance("s"))]
    a = np.abs(x["x"])
    i = got["idx"][0]
    if not (np.isfinite(i) and 0 <= i < a.size):
        result.append(Comparison.failure(f"idx: {i} is not an index of x (n = {a.size})", 1))
    elif a[int(i)] != a.max():
        result.append(Comparison.failure(f"idx: |x[{int(i)}]| = {a[int(i)]:g} is not the largest, {a.max():g}", 1))
    else:
        result.append(Comparison(True, 0.0, 0.0, 0, 1, ""))
    return result
