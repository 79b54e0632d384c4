"""float64 reference for rope: rotary embedding of [M][D] row-major data, interleaved pairs, position = row.

For row m and pair p (elements 2p, 2p+1): theta_p = base^(-2p/D), angle = m * theta_p,
    out[m, 2p]     = x0 cos(angle) - x1 sin(angle)
    out[m, 2p + 1] = x0 sin(angle) + x1 cos(angle)
base is the scalar argument (task.toml args.base, 10000), passed in `p`.
With a sample (large sizes), only the sampled elements are computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    M, D, base = int(p["M"]), int(p["D"]), float(p["base"])
    flat = x["input"]
    if sample is not None and "output" in sample:
        idx = np.asarray(sample["output"], dtype=np.int64)
    else:
        idx = np.arange(M * D, dtype=np.int64)
    m, col = idx // D, idx % D
    pair = col // 2
    first = idx - (col % 2)  # flat index of x0 of the element's pair
    x0, x1 = flat[first], flat[first + 1]
    angle = m * base ** (-2.0 * pair / D)
    cos, sin = np.cos(angle), np.sin(angle)
    return {"output": np.where(col % 2 == 0, x0 * cos - x1 * sin, x0 * sin + x1 * cos)}
