"""float64 reference for leaky_RELU: out[i] = alpha * x[i] if x[i] < 0 else x[i].

alpha is the scalar argument as the kernel receives it (task.toml args.alpha = the prototype's default
0.01, rounded to float: 0.0099999997764825820922851562), passed in `p`.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    return {"output": np.where(v < 0.0, p["alpha"] * v, v)}
