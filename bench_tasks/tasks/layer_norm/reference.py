"""float64 reference for layer_norm over the whole vector of N elements (one row):

    mu = sum(x) / N,  var = sum((x - mu)^2) / N  (population variance, two passes),
    out[i] = weight[i] * (x[i] - mu) / sqrt(var + epsilon) + bias[i]

weight and bias are per element (length N); epsilon is the scalar argument (task.toml args.epsilon,
1e-5), passed in `p` as the kernel sees it.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    mu = v.mean()
    d = v - mu
    var = np.dot(d, d) / v.size
    return {"output": x["weight"] * d / np.sqrt(var + p["epsilon"]) + x["bias"]}
