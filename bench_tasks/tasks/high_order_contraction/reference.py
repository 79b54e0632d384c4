"""float64 reference for high_order_contraction:

    C[a, b, c] = sum_x sum_y A[a, x, b, y] * B[x, c, y]

with A stored [a_dim][x_dim][b_dim][y_dim], B [x_dim][c_dim][y_dim] and C [a_dim][b_dim][c_dim]
(row-major). With a sample (over 2e9 FLOPs), only the sampled entries of C are computed: flat
index i is (a, b, c) = (i // (b_dim*c_dim), (i // c_dim) % b_dim, i % c_dim).
"""

import numpy as np

_CHUNK = 4096  # sampled entries per vectorised step (gathered operands 2 x 32 MiB for x*y = 1024)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    na, nb, nc, nx, ny = (int(p[k]) for k in ("a_dim", "b_dim", "c_dim", "x_dim", "y_dim"))
    A = x["A"].reshape(na, nx, nb, ny)
    B = x["B"].reshape(nx, nc, ny)
    if sample is None or "C" not in sample:
        return {"C": np.tensordot(A, B, axes=([1, 3], [0, 2])).reshape(-1)}  # axes left: (a, b) then (c)
    idx = np.asarray(sample["C"], dtype=np.int64)
    ia, ib, ic = idx // (nb * nc), (idx // nc) % nb, idx % nc
    out = np.empty(idx.size, dtype=np.float64)
    for s in range(0, idx.size, _CHUNK):
        sl = slice(s, s + _CHUNK)
        lhs = A[ia[sl], :, ib[sl], :]  # (n, x, y)
        rhs = B[:, ic[sl], :].transpose(1, 0, 2)  # (n, x, y)
        out[sl] = np.einsum("nxy,nxy->n", lhs, rhs)
    return {"C": out}
