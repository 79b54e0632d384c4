"""float64 reference and input generator for spmm_csc: Y = A X with A (rows x columns) in CSC,
X columns x K and Y rows x K, both row-major.

The matrix is the published regular CSC (bench_tasks/gen_sparse.py): duplicates in a column are
summed and rows may be empty (Y = 0 there); X ~ U(-1, 1) is drawn by the harness. With a sample,
only the sampled entries of Y are computed (bench_tasks/ref_sparse.py).
"""

import numpy as np
import scipy.sparse

from bench_tasks import gen_sparse, ref_sparse


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    col_offsets, row_indices, values = gen_sparse.compressed(rng, int(names["columns"]), int(names["rows"]), int(names["nnz"]))
    return {"col_offsets": col_offsets, "row_indices": row_indices, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, columns, K = int(p["rows"]), int(p["columns"]), int(p["K"])
    A = scipy.sparse.csc_matrix((x["values"], np.asarray(x["row_indices"], dtype=np.int64),
                                 np.asarray(x["col_offsets"], dtype=np.int64)), shape=(rows, columns))
    return {"Y": ref_sparse.spmm(A, x["X"], K, None if sample is None else sample.get("Y"))}
