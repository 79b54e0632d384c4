"""float64 reference for stencil_3d: one explicit 7-point step on u[i*ny*nz + j*nz + k] (k fastest).

Interior (1 <= i <= nx-2, 1 <= j <= ny-2, 1 <= k <= nz-2):
    u_new = c + r * (sum of the 6 face neighbours - 6c);
boundary cells (any index at 0 or at its maximum) are copied. r is the scalar argument (0.25), passed in
`p`. With a sample (large grids), only the sampled cells are computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    nx, ny, nz, R = int(p["nx"]), int(p["ny"]), int(p["nz"]), p["r"]
    flat = x["u_old"]
    if sample is not None and "u_new" in sample:
        idx = np.asarray(sample["u_new"], dtype=np.int64)
        i, rest = np.divmod(idx, ny * nz)
        j, k = np.divmod(rest, nz)
        out = flat[idx].copy()
        inner = (i >= 1) & (i <= nx - 2) & (j >= 1) & (j <= ny - 2) & (k >= 1) & (k <= nz - 2)
        q = idx[inner]
        c = flat[q]
        plane = ny * nz
        neighbours = flat[q - plane] + flat[q + plane] + flat[q - nz] + flat[q + nz] + flat[q - 1] + flat[q + 1]
        out[inner] = c + R * (neighbours - 6.0 * c)
        return {"u_new": out}
    u = flat.reshape(nx, ny, nz)
    out = u.copy()
    if nx >= 3 and ny >= 3 and nz >= 3:
        c = u[1:-1, 1:-1, 1:-1]
        neighbours = (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
                      + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:])
        out[1:-1, 1:-1, 1:-1] = c + R * (neighbours - 6.0 * c)
    return {"u_new": out.reshape(-1)}
