"""float64 reference for softmax: a row-wise softmax of the row-major N x C input (rows r = 0..N-1):

    out[r, j] = exp(x[r, j] - max_r) / sum_k exp(x[r, k] - max_r)
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, cols = int(p["N"]), int(p["C"])
    v = x["input"].reshape(rows, cols)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return {"out": (e / e.sum(axis=1, keepdims=True)).reshape(-1)}
