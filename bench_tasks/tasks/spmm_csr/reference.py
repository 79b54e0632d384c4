"""float64 reference and input generator for spmm_csr: Y[r, k] = sum over j in row r of values[j] * X[col_indices[j], k].

X is cols x K and Y rows x K, both row-major. The matrix is the published regular CSR
(bench_tasks/gen_sparse.py); X ~ U(-1, 1) is drawn by the harness. With a sample, only the sampled
entries of Y are computed (bench_tasks/ref_sparse.py).
"""

import numpy as np
import scipy.sparse

from bench_tasks import gen_sparse, ref_sparse


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    row_offsets, col_indices, values = gen_sparse.compressed(rng, int(names["rows"]), int(names["cols"]), int(names["nnz"]))
    return {"row_offsets": row_offsets, "col_indices": col_indices, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, cols, K = int(p["rows"]), int(p["cols"]), int(p["K"])
    A = scipy.sparse.csr_matrix((x["values"], np.asarray(x["col_indices"], dtype=np.int64),
                                 np.asarray(x["row_offsets"], dtype=np.int64)), shape=(rows, cols))
    return {"Y": ref_sparse.spmm(A, x["X"], K, None if sample is None else sample.get("Y"))}
