"""Compare a kernel's output with the float64 reference: |out - ref| <= atol + rtol * |ref|, everywhere.

With `scale = "max_abs"` atol is relative to the output's size: atol * max|ref| (over the compared
elements). `check_outputs` applies a variant's rules to all its outputs: per-output tolerances, or the
task's own check() from reference.py when it defines one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .spec import Tolerance, Variant


@dataclass
class Comparison:
    passed: bool
    max_abs_err: float
    max_rel_err: float
    worst_index: int | None
    checked: int
    message: str

    @classmethod
    def failure(cls, message: str, checked: int = 0, worst_index: int | None = None) -> Comparison:
        """A failed check that is not an elementwise error (for reference.check(): wrong index, duplicate...)."""
        return cls(False, float("inf"), float("inf"), worst_index, checked, message)


def effective_atol(tol: Tolerance, ref_abs: np.ndarray) -> float:
    """atol as applied to these reference values (scaled by max|ref| when tol.scale == "max_abs")."""
    if tol.scale == "max_abs":
        return tol.atol * (float(ref_abs.max()) if ref_abs.size else 0.0)
    return tol.atol


# Elements compared at a time: each temporary (error, limit, ...) stays a few MB, in cache, instead of a fresh
# gigabyte per temporary at the largest sizes (a 16M-element output took 2.3 s whole, most of it page faults).
CHUNK = 1 << 18


def compare(name: str, out: np.ndarray, ref: np.ndarray, tol: Tolerance, index: np.ndarray | None = None) -> Comparison:
    """`out` and `ref` are float64 and aligned; `index` maps positions back to output indices.

    Computed CHUNK elements at a time; the figures are those of the whole arrays (the worst element is the first
    with the largest err - limit, as np.argmax over the whole would pick)."""
    out = np.asarray(out, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if out.shape != ref.shape:
        return Comparison(False, float("inf"), float("inf"), None, 0, f"{name}: {out.size} values, reference has {ref.size}")
    if out.size == 0:
        return Comparison(True, 0.0, 0.0, None, 0, "")
    n = out.size
    chunks = range(0, n, CHUNK)
    if tol.scale == "max_abs":
        atol = effective_atol(tol, np.array([max(float(np.abs(np.nan_to_num(ref[lo : lo + CHUNK])).max()) for lo in chunks)]))
    else:
        atol = tol.atol
    tiny = np.finfo(np.float64).tiny
    max_abs = max_rel = 0.0
    worst, worst_d = 0, -np.inf
    n_bad = n_nan = n_bad_ref = 0
    first = -1
    with np.errstate(invalid="ignore"):  # inf - inf where an output and its limit are both infinite
        for lo in chunks:
            o, r = out[lo : lo + CHUNK], ref[lo : lo + CHUNK]
            err = np.abs(o - r)
            bad_value = ~np.isfinite(o)
            bad_ref = ~np.isfinite(r)  # only possible when the oracle is a baseline's output: unusable there
            err[bad_value | bad_ref] = np.inf
            ref_abs = np.abs(np.nan_to_num(r))
            limit = atol + tol.rtol * ref_abs
            fails = err > limit
            max_abs = max(max_abs, float(err.max()))
            max_rel = max(max_rel, float((err / np.maximum(ref_abs, tiny)).max()))
            d = err - limit
            k = int(np.argmax(d))  # the first NaN, else the first largest, as np.argmax over the whole
            if not np.isnan(worst_d) and (np.isnan(d[k]) or d[k] > worst_d):
                worst, worst_d = lo + k, float(d[k])
            bad = int(fails.sum())
            if bad and first < 0:
                first = lo + int(np.argmax(fails))
            n_bad += bad
            n_nan += int(bad_value.sum())
            n_bad_ref += int(bad_ref.sum())
    worst_out = int(index[worst]) if index is not None else worst
    if not n_bad:
        return Comparison(True, max_abs, max_rel, worst_out, n, "")
    first_out = int(index[first]) if index is not None else first
    what = f"{n_nan} not finite (unwritten or NaN); " if n_nan else ""
    if n_bad_ref:
        what += f"{n_bad_ref} with a non-finite reference (the baseline left them unwritten or NaN); "
    scaled = f" (= {tol.atol:g}*max|ref|)" if tol.scale == "max_abs" else ""
    message = (
        f"{name}: {n_bad} of {n} checked elements outside atol={atol:g}{scaled} + rtol={tol.rtol:g}*|ref| "
        f"({what}first at index {first_out}: got {out[first]:.6g}, expected {ref[first]:.6g})"
    )
    return Comparison(False, max_abs, max_rel, worst_out, n, message)


def check_outputs(
    variant: Variant,
    got: Mapping[str, np.ndarray],
    ref: Mapping[str, np.ndarray],
    x: Mapping[str, np.ndarray],
    names: Mapping[str, float],
    sample: Mapping[str, np.ndarray] | None = None,
) -> list[Comparison]:
    """One Comparison per output (or what the task's check() returns) for one call's outputs.

    got: the kernel's outputs in float64 (int64 for integer outputs); ref: the reference's; x: the
    inputs as the kernel saw them; names: reference_names() of the size. With `sample` (output ->
    flat indices), got and ref hold only the sampled elements, and check() finds the indices in
    p["sample"]. Tolerances come from variant.tolerance_for(output, names).
    """

    def tolerance(output: str) -> Tolerance:
        return variant.tolerance_for(output, names)

    module = variant.task.reference_module
    custom = getattr(module, "check", None) if module is not None else None
    if custom is not None:
        p = dict(names)
        if sample is not None:
            p["sample"] = dict(sample)  # type: ignore[assignment]
        result = list(custom(dict(got), dict(ref), dict(x), p, variant.precision, tolerance))
        if not result or not all(isinstance(c, Comparison) for c in result):
            raise TypeError(f"task {variant.task.name}: reference.check() must return a non-empty list of Comparison")
        return result
    return [compare(o, got[o], ref[o], tolerance(o), None if sample is None else sample.get(o)) for o in variant.outputs()]
