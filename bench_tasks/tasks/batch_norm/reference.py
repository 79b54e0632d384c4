"""float64 reference for batch_norm on the [N][C] row-major input (N samples x C features, index n*C + c):

    mu_c = sum_n x[n, c] / N,  var_c = sum_n (x[n, c] - mu_c)^2 / N  (biased; two passes, no cancellation),
    out[n, c] = gamma[c] * (x[n, c] - mu_c) / sqrt(var_c + epsilon) + beta[c]

epsilon is the scalar argument (task.toml args.epsilon, 1e-5), passed in `p`. With a sample, the
per-feature statistics are still computed over the whole input (each needs its full column) and only
the sampled outputs are formed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    n, c = int(p["N"]), int(p["C"])
    v = x["input"].reshape(n, c)
    mu = v.mean(axis=0)
    var = np.square(v - mu).mean(axis=0)
    scale = x["gamma"] / np.sqrt(var + p["epsilon"])
    if sample is not None and "output" in sample:
        idx = np.asarray(sample["output"], dtype=np.int64)
        f = idx % c
        return {"output": scale[f] * (x["input"][idx] - mu[f]) + x["beta"][f]}
    return {"output": (scale * (v - mu) + x["beta"]).reshape(-1)}
