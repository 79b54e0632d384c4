"""float64 reference for prefix_sum: the inclusive scan output[i] = sum_{j <= i} input[j]."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"output": np.cumsum(x["input"], dtype=np.float64)}
