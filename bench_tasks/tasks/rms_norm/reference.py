"""float64 reference for rms_norm over the whole vector of N elements:

    rms = sqrt(sum(x^2) / N + epsilon),  out[i] = weight[i] * x[i] / rms + bias[i]

epsilon is the scalar argument (task.toml args.epsilon, 1e-5), passed in `p` as the kernel sees it.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    rms = np.sqrt(np.dot(v, v) / v.size + p["epsilon"])
    return {"output": x["weight"] * v / rms + x["bias"]}
