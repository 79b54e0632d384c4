"""float64 reference for elu: out[i] = alpha * (exp(x[i]) - 1) if x[i] < 0 else x[i].

alpha is the scalar argument as the kernel receives it (task.toml args.alpha = the prototype's default
1.0), passed in `p`. exp(x) - 1 is evaluated with expm1 (no cancellation near 0).
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    return {"output": np.where(v < 0.0, p["alpha"] * np.expm1(np.minimum(v, 0.0)), v)}
