"""Compare a kernel's output with the float64 reference: |out - ref| <= atol + rtol * |ref|, everywhere."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spec import Tolerance


@dataclass
class Comparison:
    passed: bool
    max_abs_err: float
    max_rel_err: float
    worst_index: int | None
    checked: int
    message: str


def compare(name: str, out: np.ndarray, ref: np.ndarray, tol: Tolerance, index: np.ndarray | None = None) -> Comparison:
    """`out` and `ref` are float64 and aligned; `index` maps positions back to output indices."""
    out = np.asarray(out, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if out.shape != ref.shape:
        return Comparison(False, float("inf"), float("inf"), None, 0, f"{name}: {out.size} values, reference has {ref.size}")
    if out.size == 0:
        return Comparison(True, 0.0, 0.0, None, 0, "")
    err = np.abs(out - ref)
    bad_value = ~np.isfinite(out)
    bad_ref = ~np.isfinite(ref)  # only possible when the oracle is a baseline's output: unusable there
    err = np.where(bad_value | bad_ref, np.inf, err)
    ref_abs = np.abs(np.nan_to_num(ref))
    limit = tol.atol + tol.rtol * ref_abs
    fails = err > limit
    rel = err / np.maximum(ref_abs, np.finfo(np.float64).tiny)
    worst = int(np.argmax(err - limit))
    worst_out = int(index[worst]) if index is not None else worst
    max_abs = float(err.max())
    max_rel = float(rel.max())
    if not fails.any():
        return Comparison(True, max_abs, max_rel, worst_out, out.size, "")
    n_bad = int(fails.sum())
    n_nan = int(bad_value.sum())
    first = int(np.argmax(fails))
    first_out = int(index[first]) if index is not None else first
    what = f"{n_nan} not finite (unwritten or NaN); " if n_nan else ""
    if bad_ref.any():
        what += f"{int(bad_ref.sum())} with a non-finite reference (the baseline left them unwritten or NaN); "
    message = (
        f"{name}: {n_bad} of {out.size} checked elements outside atol={tol.atol:g} + rtol={tol.rtol:g}*|ref| "
        f"({what}first at index {first_out}: got {out[first]:.6g}, expected {ref[first]:.6g})"
    )
    return Comparison(False, max_abs, max_rel, worst_out, out.size, message)
