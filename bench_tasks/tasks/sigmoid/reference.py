"""float64 reference for sigmoid: out[i] = 1 / (1 + exp(-x[i]))."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"out": 1.0 / (1.0 + np.exp(-x["input"]))}
