"""float64 reference, input generator and fixed row structure for spmm_ell: Y[r, k] = sum over slots
e of row r with col_ids[r*m + e] != -1 of values[r*m + e] * X[col_ids[r*m + e], k] (m = max_nnz_per_row).

X is cols x K and Y rows x K, both row-major. The matrix is the published irregular ELL
(bench_tasks/gen_sparse.py): the row counts, and so m, depend on the size only (derive()); columns
and values on the dataset seed; X ~ U(-1, 1) is drawn by the harness. With a sample, only the
sampled entries of Y are computed (bench_tasks/ref_sparse.py).
"""

import numpy as np
import scipy.sparse

from bench_tasks import gen_sparse, ref_sparse


def derive(names: dict) -> dict[str, int]:
    return {"max_nnz_per_row": gen_sparse.ell_max_nnz_per_row(int(names["rows"]), int(names["cols"]), int(names["nnz"]))}


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    col_ids, values = gen_sparse.ell(rng, int(names["rows"]), int(names["cols"]), int(names["nnz"]))
    return {"col_ids": col_ids, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, cols, K, m = int(p["rows"]), int(p["cols"]), int(p["K"]), int(p["max_nnz_per_row"])
    col = np.asarray(x["col_ids"], dtype=np.int64).reshape(rows, m)
    used = col != -1
    row_of_slot = np.broadcast_to(np.arange(rows, dtype=np.int64)[:, None], (rows, m))[used]
    A = scipy.sparse.coo_matrix((x["values"].reshape(rows, m)[used], (row_of_slot, col[used])), shape=(rows, cols)).tocsr()
    return {"Y": ref_sparse.spmm(A, x["X"], K, None if sample is None else sample.get("Y"))}
