"""bench_tasks.compare.compare works through its arrays a chunk at a time: every figure it reports must be the one
the whole-array computation gives (a differential test against that computation, written out here as the oracle),
at chunk boundaries too, with NaN, infinities, an index map and both tolerance scales."""

from __future__ import annotations

import numpy as np
import pytest

from bench_tasks import compare as cmp
from bench_tasks.compare import Comparison, compare, effective_atol
from bench_tasks.spec import Tolerance


def whole_array(name: str, out: np.ndarray, ref: np.ndarray, tol: Tolerance, index: np.ndarray | None = None) -> Comparison:
    """The oracle: the comparison computed on the whole arrays at once (compare's code before it was chunked)."""
    out = np.asarray(out, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):  # inf - inf, as compare() itself allows
        err = np.abs(out - ref)
    bad_value = ~np.isfinite(out)
    bad_ref = ~np.isfinite(ref)
    err = np.where(bad_value | bad_ref, np.inf, err)
    ref_abs = np.abs(np.nan_to_num(ref))
    atol = effective_atol(tol, ref_abs)
    limit = atol + tol.rtol * ref_abs
    fails = err > limit
    rel = err / np.maximum(ref_abs, np.finfo(np.float64).tiny)
    with np.errstate(invalid="ignore"):
        worst = int(np.argmax(err - limit))
    worst_out = int(index[worst]) if index is not None else worst
    if not fails.any():
        return Comparison(True, float(err.max()), float(rel.max()), worst_out, out.size, "")
    first = int(np.argmax(fails))
    first_out = int(index[first]) if index is not None else first
    n_nan = int(bad_value.sum())
    what = f"{n_nan} not finite (unwritten or NaN); " if n_nan else ""
    if bad_ref.any():
        what += f"{int(bad_ref.sum())} with a non-finite reference (the baseline left them unwritten or NaN); "
    scaled = f" (= {tol.atol:g}*max|ref|)" if tol.scale == "max_abs" else ""
    message = (
        f"{name}: {int(fails.sum())} of {out.size} checked elements outside atol={atol:g}{scaled} + rtol={tol.rtol:g}*|ref| "
        f"({what}first at index {first_out}: got {out[first]:.6g}, expected {ref[first]:.6g})"
    )
    return Comparison(False, float(err.max()), float(rel.max()), worst_out, out.size, message)


def _case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, Tolerance, np.ndarray | None]:
    n = int(rng.integers(1, 60))
    ref = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4)
    out = ref + rng.standard_normal(n) * 10.0 ** rng.integers(-8, 0)
    for arr, p in ((out, 0.05), (ref, 0.02)):
        hit = rng.random(n) < p
        arr[hit] = rng.choice([np.nan, np.inf, -np.inf], int(hit.sum()))
    if rng.random() < 0.3:
        out[rng.integers(n)] = out[rng.integers(n)]  # ties of the largest error
    if rng.random() < 0.2:
        out[:] = ref  # exact
    tol = Tolerance(float(10.0 ** rng.integers(-6, -1)), float(10.0 ** rng.integers(-5, -1)), "max_abs" if rng.random() < 0.3 else None)
    index = np.sort(rng.choice(10 * n, n, replace=False)) if rng.random() < 0.4 else None
    return out, ref, tol, index


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 18])
def test_the_chunked_comparison_reports_what_the_whole_array_one_does(monkeypatch, chunk):
    monkeypatch.setattr(cmp, "CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    for _ in range(400):
        out, ref, tol, index = _case(rng)
        got, want = compare("y", out, ref, tol, index), whole_array("y", out, ref, tol, index)
        assert got == want, (out, ref, tol, index)


def test_a_large_output_spanning_many_chunks_gives_the_same_figures(monkeypatch):
    rng = np.random.default_rng(7)
    n = 3 * cmp.CHUNK + 12345
    ref = rng.standard_normal(n)
    out = ref + 1e-7 * rng.standard_normal(n)
    out[[5, cmp.CHUNK + 1, 2 * cmp.CHUNK + 3]] += 1.0  # failures in several chunks: the first is reported
    out[n - 1] = np.nan
    tol = Tolerance(1e-5, 1e-4)
    got = compare("y", out, ref, tol)
    assert got == whole_array("y", out, ref, tol)
    assert not got.passed and "4 of" in got.message and "first at index 5" in got.message
