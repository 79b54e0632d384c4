"""float64 reference for matrix_vector_mul: y = A x with A M x N row-major (y[r] = sum_c A[r*N + c] * x[c])."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    M, N = int(p["M"]), int(p["N"])
    return {"y": x["A"].reshape(M, N) @ x["x"]}
