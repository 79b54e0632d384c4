"""float64 reference for matrix_scalar_mul: B = scalar * A, elementwise (flat B[i] = scalar * A[i]).

`p["scalar"]` is the scalar as the kernel receives it (for BF16, its bf16 value). With a sample
(large sizes), only the sampled elements are computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    a = x["A"]
    if sample is not None and "B" in sample:
        a = a[np.asarray(sample["B"], dtype=np.int64)]
    return {"B": float(p["scalar"]) * a}
