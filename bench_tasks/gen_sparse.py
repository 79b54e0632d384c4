"""Input generators of the sparse tasks, as published (shared/spec/mskernelbench-tasks.md, the
sparse-format conventions before §3.18):

- CSR and CSC are *regular*: each row (CSC: column) gets floor(nnz/n) entries and the first nnz mod n
  one more;
- COO and ELL are *irregular*: entry j < rows is in row j (one guaranteed entry per row), the other
  nnz - rows go to uniformly random rows;
- the minor indices (CSR/COO/ELL columns, CSC rows) are uniform WITH replacement (duplicates in a
  row or column are possible and are summed) and not sorted; values ~ U(-1, 1).
- ELL is row-major (slot e of row r at r*m + e), each row packed to the left, padding slots hold
  col = -1 and value 0. Its row counts, and so m = max_nnz_per_row, come from a generator seeded by
  the sizes only (`ell_row_counts`), so that m and the buffer lengths are known before a dataset is
  drawn (reference.derive()); the columns and values come from the dataset's generator.

Only generate() uses this module; the float64 references compute with numpy/scipy on the arrays
as the kernel saw them and share nothing with it. Values are drawn in float32 (what the kernels
read; half the memory of float64 at the 10^7-10^8-entry sizes).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

_ELL_TAG = 0x5E11  # part of the ELL structure seed: (rows, cols, nnz, tag)


def uniform_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """n values ~ U(-1, 1) in float32."""
    return np.float32(-1.0) + np.float32(2.0) * rng.random(n, dtype=np.float32)


def regular_counts(n: int, nnz: int) -> np.ndarray:
    """Entries per row (CSC: per column): floor(nnz/n) each, one more for the first nnz mod n."""
    if n < 1 or nnz < 0:
        raise ValueError(f"regular_counts: need n >= 1 and nnz >= 0, got n={n}, nnz={nnz}")
    counts = np.full(n, nnz // n, dtype=np.int64)
    counts[: nnz % n] += 1
    return counts


def compressed(rng: np.random.Generator, n_major: int, n_minor: int, nnz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A regular compressed matrix: (offsets[n_major + 1], indices[nnz], values[nnz]).

    CSR: major = rows, minor = cols (row_offsets, col_indices). CSC: major = columns, minor = rows
    (col_offsets, row_indices). Minor indices uniform in [0, n_minor) with replacement, unsorted."""
    offsets = np.zeros(n_major + 1, dtype=np.int64)
    np.cumsum(regular_counts(n_major, nnz), out=offsets[1:])
    return offsets.astype(np.int32), rng.integers(0, n_minor, nnz, dtype=np.int32), uniform_values(rng, nnz)


def coo(rng: np.random.Generator, rows: int, cols: int, nnz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Irregular COO: (row_indices, col_indices, values), entry j < rows in row j, the rest in random rows."""
    if nnz < rows:
        raise ValueError(f"coo: nnz = {nnz} < rows = {rows}; every row gets one entry")
    row_indices = np.concatenate([np.arange(rows, dtype=np.int32), rng.integers(0, rows, nnz - rows, dtype=np.int32)])
    return row_indices, rng.integers(0, cols, nnz, dtype=np.int32), uniform_values(rng, nnz)


@lru_cache(maxsize=16)
def _ell_row_counts(rows: int, cols: int, nnz: int) -> np.ndarray:
    if nnz < rows or rows < 1:
        raise ValueError(f"ell: need rows >= 1 and nnz >= rows, got rows={rows}, nnz={nnz}")
    rng = np.random.default_rng([rows, cols, nnz, _ELL_TAG])
    # nnz - rows entries in uniformly random rows: the counts are multinomial (drawn in O(rows)).
    counts = 1 + rng.multinomial(nnz - rows, np.full(rows, 1.0 / rows)).astype(np.int64)
    counts.flags.writeable = False
    return counts


def ell_row_counts(rows: int, cols: int, nnz: int) -> np.ndarray:
    """Entries per ELL row: 1 + the multinomial share of the other nnz - rows entries, drawn from a
    generator seeded by (rows, cols, nnz) only: the same for every dataset of a size. Read-only."""
    return _ell_row_counts(int(rows), int(cols), int(nnz))


def ell_max_nnz_per_row(rows: int, cols: int, nnz: int) -> int:
    return int(ell_row_counts(rows, cols, nnz).max())


def ell(rng: np.random.Generator, rows: int, cols: int, nnz: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-major ELL: (col_ids[rows*m], values[rows*m]) with m = ell_max_nnz_per_row(rows, cols, nnz);
    row r's entries fill its first counts[r] slots, padding slots are col -1 / value 0."""
    counts = ell_row_counts(rows, cols, nnz)
    m = int(counts.max())
    filled = (np.arange(m, dtype=np.int64)[None, :] < counts[:, None]).reshape(-1)
    col_ids = np.full(rows * m, -1, dtype=np.int32)
    values = np.zeros(rows * m, dtype=np.float32)
    col_ids[filled] = rng.integers(0, cols, nnz, dtype=np.int32)
    values[filled] = uniform_values(rng, nnz)
    return col_ids, values
