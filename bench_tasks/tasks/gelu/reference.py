"""float64 reference for gelu, the exact erf form: out[i] = 0.5 * x * (1 + erf(x / sqrt(2)))."""

import numpy as np
from scipy.special import erf


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    return {"output": 0.5 * v * (1.0 + erf(v / np.sqrt(2.0)))}
