"""float64 reference and input generator for spmv_csr: y[r] = sum over j in row r of values[j] * x[col_indices[j]].

The matrix is the published regular CSR: every row gets floor(nnz / rows) entries and the first
nnz mod rows rows one more; column indices are uniform WITH replacement (duplicates inside a row are
possible and are summed) and unsorted; values ~ U(-1, 1). x ~ U(-1, 1) is drawn by the harness.
"""

import numpy as np


def csr_row_counts(rows: int, nnz: int) -> np.ndarray:
    counts = np.full(rows, nnz // rows, dtype=np.int64)
    counts[: nnz % rows] += 1
    return counts


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    rows, cols, nnz = int(names["rows"]), int(names["cols"]), int(names["nnz"])
    row_offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(csr_row_counts(rows, nnz), out=row_offsets[1:])
    return {
        "row_offsets": row_offsets,
        "col_indices": rng.integers(0, cols, nnz, dtype=np.int64),
        "values": rng.uniform(-1.0, 1.0, nnz),
    }


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows = int(p["rows"])
    offsets = np.asarray(x["row_offsets"], dtype=np.int64)
    cols = np.asarray(x["col_indices"], dtype=np.int64)
    row_of_entry = np.repeat(np.arange(rows, dtype=np.int64), np.diff(offsets))
    products = x["values"][offsets[0]:offsets[rows]] * x["x"][cols[offsets[0]:offsets[rows]]]
    y = np.bincount(row_of_entry, weights=products, minlength=rows).astype(np.float64)
    return {"y": y}
