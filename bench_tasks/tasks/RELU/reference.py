"""float64 reference for RELU: out[i] = max(0, x[i])."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"output": np.maximum(x["input"], 0.0)}
