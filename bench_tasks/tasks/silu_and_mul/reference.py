"""float64 reference for silu_and_mul (vLLM's): in is [B][2D], out is [B][D];

    out[b, d] = silu(x) * g,  x = in[b, d] (first half), g = in[b, D + d] (second half),
    silu(x) = x / (1 + exp(-x)).
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    B, D = int(p["B"]), int(p["D"])
    rows = x["in"].reshape(B, 2 * D)
    act, gate = rows[:, :D], rows[:, D:]
    silu = act * 0.5 * (1.0 + np.tanh(0.5 * act))  # x * sigmoid(x) = x / (1 + e^-x), without overflow
    return {"out": (silu * gate).reshape(-1)}
