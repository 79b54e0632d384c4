"""float64 reference and input generator for spmv_csc: y = A x with A (rows x columns) in CSC.

The matrix is the published regular CSC (bench_tasks/gen_sparse.py): every column gets
floor(nnz / columns) entries and the first nnz mod columns one more; row indices are uniform WITH
replacement (duplicates in a column are summed) and unsorted, so some rows may be empty (y = 0
there); values ~ U(-1, 1). x ~ U(-1, 1) is drawn by the harness.
"""

import numpy as np

from bench_tasks import gen_sparse


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    col_offsets, row_indices, values = gen_sparse.compressed(rng, int(names["columns"]), int(names["rows"]), int(names["nnz"]))
    return {"col_offsets": col_offsets, "row_indices": row_indices, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, columns = int(p["rows"]), int(p["columns"])
    offsets = np.asarray(x["col_offsets"], dtype=np.int64)
    first, last = offsets[0], offsets[columns]
    col_of_entry = np.repeat(np.arange(columns, dtype=np.int64), np.diff(offsets))
    row_of_entry = np.asarray(x["row_indices"][first:last], dtype=np.int64)
    products = x["values"][first:last] * x["x"][col_of_entry]
    return {"y": np.bincount(row_of_entry, weights=products, minlength=rows).astype(np.float64)}
