"""float64 reference for selu: out[i] = lambda * alpha * (exp(x[i]) - 1) if x[i] < 0 else lambda * x[i].

alpha and lambda are the scalar arguments as the kernel receives them (task.toml args: the prototype's
defaults 1.67 and 1.0, alpha rounded to float), passed in `p`. Not the canonical SELU constants.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    lam, alpha = p["lambda"], p["alpha"]
    return {"output": np.where(v < 0.0, lam * alpha * np.expm1(np.minimum(v, 0.0)), lam * v)}
