"""float64 reference for matrix_power: B = A^P (N x N row-major, P >= 2), from the inputs as the kernel
saw them (for BF16, the bf16 values of A; the exact power, not the baseline's per-product rounding).

Computed in full at every size, by repeated squaring in float64 (np.linalg.matrix_power).
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    N, P = int(p["N"]), int(p["P"])
    return {"B": np.linalg.matrix_power(x["A"].reshape(N, N), P).reshape(-1)}
