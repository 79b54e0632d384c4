"""float64 reference for stencil_2d: one explicit 5-point step on u[i * ny + j] (i slow, j fast).

Interior (1 <= i <= nx-2, 1 <= j <= ny-2): u_new = c + r * (u[i,j-1] + u[i,j+1] + u[i+1,j] + u[i-1,j] - 4c);
boundary cells are copied. r is the scalar argument (task.toml args.r, 0.25), passed in `p`.
With a sample (large grids), only the sampled cells are computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    nx, ny, R = int(p["nx"]), int(p["ny"]), p["r"]
    flat = x["u_old"]
    if sample is not None and "u_new" in sample:
        idx = np.asarray(sample["u_new"], dtype=np.int64)
        i, j = idx // ny, idx % ny
        out = flat[idx].copy()
        inner = (i >= 1) & (i <= nx - 2) & (j >= 1) & (j <= ny - 2)
        k = idx[inner]
        c = flat[k]
        out[inner] = c + R * (flat[k - 1] + flat[k + 1] + flat[k + ny] + flat[k - ny] - 4.0 * c)
        return {"u_new": out}
    u = flat.reshape(nx, ny)
    out = u.copy()
    if nx >= 3 and ny >= 3:
        c = u[1:-1, 1:-1]
        out[1:-1, 1:-1] = c + R * (u[1:-1, :-2] + u[1:-1, 2:] + u[2:, 1:-1] + u[:-2, 1:-1] - 4.0 * c)
    return {"u_new": out.reshape(-1)}
