"""float64 reference and validity check for top_k.

reference(): the k largest input values in descending order, and their indices with ties broken by
the smaller index first (the published baseline's order; any valid tie order is accepted by check()).

check(): the values must match the reference's elementwise (exact tolerance: they are copies); the
indices must be in [0, N), distinct, and each must point at an input element equal to the reference
value at its position, which accepts every valid answer (any order among equal values, any choice of
the tied elements at the k-th value) and nothing else. Where a value is unique in the input this
forces the reference's index; the message says which rule failed first.
"""

from collections.abc import Callable

import numpy as np

from bench_tasks.compare import Comparison, compare


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    values = x["input"]
    k = int(p["k"])
    order = np.lexsort((np.arange(values.size), -values))[:k]  # value descending, then index ascending
    return {"top_k_values": values[order], "top_k_indices": order.astype(np.float64)}


def check(got: dict[str, np.ndarray], ref: dict[str, np.ndarray], x: dict[str, np.ndarray], p: dict, precision: str,
          tolerance: Callable[[str], object]) -> list[Comparison]:
    result = [compare("top_k_values", got["top_k_values"], ref["top_k_values"], tolerance("top_k_values"))]
    result.append(_check_indices(np.asarray(got["top_k_indices"]), ref, x["input"]))
    return result


def _check_indices(idx: np.ndarray, ref: dict[str, np.ndarray], values: np.ndarray) -> Comparison:
    name, n, want = "top_k_indices", values.size, np.asarray(ref["top_k_values"], dtype=np.float64)
    idx = np.asarray(idx, dtype=np.float64).reshape(-1)
    k = want.size
    if idx.size != k:
        return Comparison.failure(f"{name}: {idx.size} indices, expected k = {k}")
    outside = ~np.isfinite(idx) | (idx < 0) | (idx >= n) | (idx != np.round(idx))
    if outside.any():
        i = int(np.argmax(outside))
        return Comparison.failure(f"{name}: {int(outside.sum())} of {k} not an index of the input (N = {n}; first at position "
                                  f"{i}: {idx[i]:g}; -1 is an unwritten element)", k, i)
    ii = idx.astype(np.int64)
    uniq, first_pos, counts = np.unique(ii, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = int(uniq[counts > 1][0])
        return Comparison.failure(f"{name}: {int((counts - 1).sum())} duplicated indices (e.g. {dup}, {int(counts[counts > 1][0])} times)",
                                  k, int(first_pos[counts > 1][0]))
    mismatch = values[ii] != want
    if mismatch.any():
        i = int(np.argmax(mismatch))
        unique_value = int(np.count_nonzero(values == want[i])) == 1
        why = (f"the value {want[i]:.6g} is unique in the input, at index {int(ref['top_k_indices'][i])}" if unique_value
               else f"input[{ii[i]}] = {values[ii[i]]:.6g} is not the value {want[i]:.6g}")
        return Comparison.failure(f"{name}: {int(mismatch.sum())} of {k} indices point at the wrong element (first at position "
                                  f"{i}: index {ii[i]}; {why})", k, i)
    return Comparison(True, 0.0, 0.0, None, k, "")
