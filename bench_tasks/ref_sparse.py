"""float64 helpers of the sparse references (SpMM): Y = A @ X with A a scipy sparse matrix built from
the arrays exactly as the kernel saw them, X dense cols x K row-major.

Shares nothing with the generators (gen_sparse.py) or the baselines. The full product is scipy's
sparse @ dense; the sampled one (large sizes: only some entries of Y) gathers each sampled entry's
row from A's CSR arrays and sums its products with numpy, so the two paths are independent
(tests/bench/test_tasks_sparse.py checks one against the other).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

_CHUNK = 4096  # sampled entries per vectorised step


def spmm(A: scipy.sparse.sparray | scipy.sparse.spmatrix, X: np.ndarray, K: int, sample: np.ndarray | None = None) -> np.ndarray:
    """Y = A @ X flattened row-major (rows*K), or only Y's flat indices `sample` (Y[i // K, i % K])."""
    X = np.asarray(X, dtype=np.float64).reshape(-1, K)
    if sample is None:
        return np.asarray(A @ X, dtype=np.float64).reshape(-1)
    csr = scipy.sparse.csr_matrix(A)
    indptr = csr.indptr.astype(np.int64)
    indices = csr.indices.astype(np.int64)
    data = np.asarray(csr.data, dtype=np.float64)
    idx = np.asarray(sample, dtype=np.int64)
    out = np.empty(idx.size, dtype=np.float64)
    for s in range(0, idx.size, _CHUNK):
        rows, ks = idx[s : s + _CHUNK] // K, idx[s : s + _CHUNK] % K
        starts, lens = indptr[rows], indptr[rows + 1] - indptr[rows]
        seg = np.repeat(np.arange(rows.size, dtype=np.int64), lens)  # which sampled entry each product feeds
        pos = starts[seg] + np.arange(seg.size, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        out[s : s + _CHUNK] = np.bincount(seg, weights=data[pos] * X[indices[pos], ks[seg]], minlength=rows.size)
    return out
