"""float64 reference for matrix_copy: B = A (row-major M x N; the copy is elementwise, so flat B[i] = A[i]).

With a sample (large sizes), only the sampled elements are returned.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    a = x["A"]
    if sample is not None and "B" in sample:
        return {"B": a[np.asarray(sample["B"], dtype=np.int64)].copy()}
    return {"B": a.copy()}
