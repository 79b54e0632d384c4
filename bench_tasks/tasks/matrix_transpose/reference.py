"""float64 reference for matrix_transpose: A is M x N row-major, B = A^T is N x M row-major.

Flat B[i] with i = c*M + r is A[r*N + c]. With a sample (large sizes), only the sampled elements are
computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    M, N = int(p["M"]), int(p["N"])
    a = x["A"]
    if sample is not None and "B" in sample:
        i = np.asarray(sample["B"], dtype=np.int64)
        c, r = i // M, i % M
        return {"B": a[r * N + c]}
    return {"B": np.ascontiguousarray(a.reshape(M, N).T).reshape(-1)}
