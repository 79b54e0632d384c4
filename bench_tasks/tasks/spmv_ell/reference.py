"""float64 reference, input generator and fixed row structure for spmv_ell: y[r] = sum over slots e
of row r with col_ids[r*m + e] != -1 of values[r*m + e] * x[col_ids[r*m + e]] (m = max_nnz_per_row).

The matrix is the published irregular ELL (bench_tasks/gen_sparse.py): row r holds 1 + its share of
the other nnz - rows entries, packed to the left; padding slots are col -1 and value 0. The row
counts, and so m, depend on the size only (derive()); columns (uniform with replacement) and values
(U(-1, 1)) on the dataset seed. x ~ U(-1, 1) is drawn by the harness.
"""

import numpy as np

from bench_tasks import gen_sparse


def derive(names: dict) -> dict[str, int]:
    return {"max_nnz_per_row": gen_sparse.ell_max_nnz_per_row(int(names["rows"]), int(names["cols"]), int(names["nnz"]))}


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    col_ids, values = gen_sparse.ell(rng, int(names["rows"]), int(names["cols"]), int(names["nnz"]))
    return {"col_ids": col_ids, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, m = int(p["rows"]), int(p["max_nnz_per_row"])
    col = np.asarray(x["col_ids"], dtype=np.int64).reshape(rows, m)
    used = col != -1
    row_of_slot = np.broadcast_to(np.arange(rows, dtype=np.int64)[:, None], (rows, m))[used]
    products = x["values"].reshape(rows, m)[used] * x["x"][col[used]]
    return {"y": np.bincount(row_of_slot, weights=products, minlength=rows).astype(np.float64)}
