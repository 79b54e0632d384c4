"""float64 reference and input generator for spmv_coo: y[row_indices[j]] += values[j] * x[col_indices[j]] for every j.

The matrix is the published irregular COO (bench_tasks/gen_sparse.py): entry j < rows is in row j,
the other nnz - rows entries in uniformly random rows; columns uniform with replacement, so
duplicate (row, col) pairs occur and are summed; values ~ U(-1, 1). x ~ U(-1, 1) is drawn by the harness.
"""

import numpy as np

from bench_tasks import gen_sparse


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    row_indices, col_indices, values = gen_sparse.coo(rng, int(names["rows"]), int(names["cols"]), int(names["nnz"]))
    return {"row_indices": row_indices, "col_indices": col_indices, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows = int(p["rows"])
    rows_of = np.asarray(x["row_indices"], dtype=np.int64)
    cols_of = np.asarray(x["col_indices"], dtype=np.int64)
    y = np.bincount(rows_of, weights=x["values"] * x["x"][cols_of], minlength=rows).astype(np.float64)
    return {"y": y}
