"""float64 reference and input generator for spmv_csr: y[r] = sum over j in row r of values[j] * x[col_indices[j]].

The matrix is the published regular CSR (bench_tasks/gen_sparse.py): every row gets floor(nnz / rows) entries and the first
nnz mod rows rows one more; column indices are uniform WITH replacement (duplicates inside a row are
possible and are summed) and unsorted; values ~ U(-1, 1). x ~ U(-1, 1) is drawn by the harness.
"""

import numpy as np

from bench_tasks import gen_sparse


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    row_offsets, col_indices, values = gen_sparse.compressed(rng, int(names["rows"]), int(names["cols"]), int(names["nnz"]))
    return {"row_offsets": row_offsets, "col_indices": col_indices, "values": values}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows = int(p["rows"])
    offsets = np.asarray(x["row_offsets"], dtype=np.int64)
    cols = np.asarray(x["col_indices"], dtype=np.int64)
    row_of_entry = np.repeat(np.arange(rows, dtype=np.int64), np.diff(offsets))
    products = x["values"][offsets[0]:offsets[rows]] * x["x"][cols[offsets[0]:offsets[rows]]]
    y = np.bincount(row_of_entry, weights=products, minlength=rows).astype(np.float64)
    return {"y": y}
