"""float64 reference for matrix_mul: C = A @ B with A MxK, B KxN, C MxN, all row-major.

With a sample (large M), only the sampled entries are computed: flat index i is C[i // N, i % N].
"""

import numpy as np

_CHUNK = 2048  # sampled entries per vectorised step (keeps the gathered operands at ~2 x 64 MiB for K = 4096)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    M, N, K = int(p["M"]), int(p["N"]), int(p["K"])
    A = x["A"].reshape(M, K)
    B = x["B"].reshape(K, N)
    if sample is None or "C" not in sample:
        return {"C": (A @ B).reshape(-1)}
    idx = np.asarray(sample["C"], dtype=np.int64)
    rows, cols = idx // N, idx % N
    out = np.empty(idx.size, dtype=np.float64)
    for s in range(0, idx.size, _CHUNK):
        r, c = rows[s:s + _CHUNK], cols[s:s + _CHUNK]
        out[s:s + _CHUNK] = np.einsum("ij,ji->i", A[r], B[:, c])
    return {"C": out}
