"""float64 reference for SwiGLU: out[i] = swish(g[i], beta) * v[i] = g / (1 + exp(-beta * g)) * v.

g = gate_input, v = value_input; beta is the scalar argument (task.toml args.beta = 1.0, the value the
published harness passes), in `p`.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    g, v = x["gate_input"], x["value_input"]
    return {"output": g / (1.0 + np.exp(-p["beta"] * g)) * v}
