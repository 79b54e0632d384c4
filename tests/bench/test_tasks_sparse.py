"""The sparse tasks (spmv_coo, spmv_csc, spmv_ell, spmm_csr, spmm_coo, spmm_csc, spmm_ell): references
against values worked out by hand and against a dense numpy product built independently (np.add.at),
sampled SpMM == full, the shared generators' invariants (bench_tasks/gen_sparse.py), ELL's size-only
structure, nnz and complexity as published, and the traps (duplicates, empty rows, padding, layout)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from bench_tasks import data, gen_sparse, load_task
from bench_tasks.compare import check_outputs

SPMV = ("spmv_coo", "spmv_csc", "spmv_ell")
SPMM = ("spmm_csr", "spmm_coo", "spmm_csc", "spmm_ell")
TASKS = SPMV + SPMM
# The shared spec beside the checkout (`../shared`: where CI and every engineer's worktree have it).
SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "mskernelbench-tasks.md"


def _ref(task: str, x: dict, names: dict, sample=None) -> dict:
    x = {k: np.asarray(v, dtype=np.int64 if np.asarray(v).dtype.kind in "iu" else np.float64) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, "fp32", sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


def _dense(task: str, x: dict, p: dict) -> np.ndarray:
    """A (rows x cols) as a dense float64 matrix, built entry by entry with np.add.at (duplicates add)."""
    rows = int(p["rows"])
    cols = int(p["columns"] if "columns" in p else p["cols"])
    A = np.zeros((rows, cols))
    if task.endswith("coo"):
        np.add.at(A, (x["row_indices"].astype(np.int64), x["col_indices"].astype(np.int64)), x["values"])
    elif task.endswith("csr"):
        r = np.repeat(np.arange(rows), np.diff(x["row_offsets"].astype(np.int64)))
        np.add.at(A, (r, x["col_indices"].astype(np.int64)), x["values"])
    elif task.endswith("csc"):
        c = np.repeat(np.arange(cols), np.diff(x["col_offsets"].astype(np.int64)))
        np.add.at(A, (x["row_indices"].astype(np.int64), c), x["values"])
    else:  # ell
        m = int(p["max_nnz_per_row"])
        col = x["col_ids"].astype(np.int64).reshape(rows, m)
        r = np.repeat(np.arange(rows), m).reshape(rows, m)
        used = col != -1
        np.add.at(A, (r[used], col[used]), x["values"].reshape(rows, m)[used])
    return A


def _generated(task: str, precision: str, params: dict, seed: int):
    variant = load_task(task).variant(precision)
    stored = data.generate(variant, params, seed)
    return variant, stored, data.float64_inputs(variant, stored), data.reference_names(variant, params)


# -- by hand -------------------------------------------------------------------------------------


def test_spmv_coo_by_hand():
    # 3 x 4, x = [1, 2, 3, 4]; entries (row, col, value), unsorted, (2, 0) twice:
    # (0, 3, -0.5) (1, 1, 2.0) (2, 0, 1.5) (2, 2, 1.0) (2, 0, 0.5)
    # y0 = -0.5*4 = -2;  y1 = 2*2 = 4;  y2 = 1.5*1 + 1*3 + 0.5*1 = 5
    x = {"row_indices": [0, 1, 2, 2, 2], "col_indices": [3, 1, 0, 2, 0], "values": [-0.5, 2.0, 1.5, 1.0, 0.5], "x": [1.0, 2.0, 3.0, 4.0]}
    assert _ref("spmv_coo", x, {"rows": 3, "cols": 4, "nnz": 5})["y"].tolist() == [-2.0, 4.0, 5.0]


def test_spmv_csc_by_hand_with_an_empty_row_and_a_duplicate():
    # 3 x 2 (rows x columns), x = [10, 100]
    # column 0: (row 2, 1.0), (row 0, 0.5)  column 1: (row 2, 0.25), (row 2, 0.25)  -> row 1 is empty
    # y0 = 0.5*10 = 5;  y1 = 0;  y2 = 1*10 + 0.25*100 + 0.25*100 = 60
    x = {"col_offsets": [0, 2, 4], "row_indices": [2, 0, 2, 2], "values": [1.0, 0.5, 0.25, 0.25], "x": [10.0, 100.0]}
    assert _ref("spmv_csc", x, {"rows": 3, "columns": 2, "nnz": 4})["y"].tolist() == [5.0, 0.0, 60.0]


def test_spmv_ell_by_hand_skips_padding_by_its_column():
    # 3 rows, m = 3, x = [1, 2, 3]
    # row 0: (col 2, 1.0) (col 0, 2.0) pad          -> 3 + 2 = 5
    # row 1: (col 1, -1.0) pad pad                  -> -2
    # row 2: (col 1, 0.5) (col 1, 0.5) (col 0, 4.0) -> 1 + 1 + 4 = 6   (duplicate column summed)
    # a padding slot is col -1; it is skipped whatever its value (the published kernels test col == -1)
    x = {"col_ids": [2, 0, -1, 1, -1, -1, 1, 1, 0], "values": [1.0, 2.0, 0.0, -1.0, 9.0, 0.0, 0.5, 0.5, 4.0], "x": [1.0, 2.0, 3.0]}
    assert _ref("spmv_ell", x, {"rows": 3, "cols": 3, "max_nnz_per_row": 3})["y"].tolist() == [5.0, -2.0, 6.0]


@pytest.mark.parametrize("task", SPMM)
def test_spmm_layout_by_hand(task):
    # A (2 x 3) = [[1, 0, 2], [0, 3, 0]] (entry (0, 2) stored as 1.5 + 0.5: a duplicate),
    # X (3 x 2, row-major: X[col, k] at col*2 + k) = [[1, 2], [3, 4], [5, 6]]
    # Y = A X = [[1*1 + 2*5, 1*2 + 2*6], [3*3, 3*4]] = [[11, 14], [9, 12]] -> row-major [11, 14, 9, 12]
    X = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    formats = {
        "spmm_csr": (
            {"row_offsets": [0, 3, 4], "col_indices": [2, 0, 2, 1], "values": [1.5, 1.0, 0.5, 3.0]},
            {"rows": 2, "cols": 3, "nnz": 4},
        ),
        "spmm_coo": (
            {"row_indices": [1, 0, 0, 0], "col_indices": [1, 2, 0, 2], "values": [3.0, 0.5, 1.0, 1.5]},
            {"rows": 2, "cols": 3, "nnz": 4},
        ),
        "spmm_csc": (
            {"col_offsets": [0, 1, 2, 4], "row_indices": [0, 1, 0, 0], "values": [1.0, 3.0, 1.5, 0.5]},
            {"rows": 2, "columns": 3, "nnz": 4},
        ),
        "spmm_ell": (
            {"col_ids": [2, 0, 2, 1, -1, -1], "values": [1.5, 1.0, 0.5, 3.0, 0.0, 0.0]},
            {"rows": 2, "cols": 3, "max_nnz_per_row": 3},
        ),
    }
    x, p = formats[task]
    assert _ref(task, {**x, "X": X}, {**p, "K": 2})["Y"].tolist() == [11.0, 14.0, 9.0, 12.0]


# -- against a dense product built independently -------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("seed", [1, 2])
def test_reference_equals_a_dense_product_on_generated_data(task, precision, seed):
    t = load_task(task)
    for params in t.size_list("edge") + t.size_list("paper")[:1]:
        if "K" in params and params["K"] * params.get("cols", params.get("columns", 1)) > 1 << 16:
            params = dict(params, K=7)  # keep the dense product small here
        _variant, _, x, p = _generated(task, precision, params, seed)
        A = _dense(task, x, p)
        got = t.reference_module.reference(x, p, precision, None)
        if task in SPMV:
            np.testing.assert_allclose(got["y"], A @ x["x"], rtol=1e-12, atol=1e-12)
        else:
            K = int(p["K"])
            np.testing.assert_allclose(got["Y"], (A @ x["X"].reshape(-1, K)).reshape(-1), rtol=1e-12, atol=1e-12)


# -- sampled == full -----------------------------------------------------------------------------


@pytest.mark.parametrize("task", SPMM)
@pytest.mark.parametrize(
    "params", [{"rows": 300, "cols": 500, "K": 37}, {"rows": 64, "cols": 3000, "K": 1}, {"rows": 1000, "cols": 40, "K": 129}]
)
def test_spmm_sampled_equals_full(task, params):
    params = dict(params)
    if task == "spmm_csc":
        params["columns"] = params.pop("cols")
    _, _, x, p = _generated(task, "fp32", params, seed=4)
    t = load_task(task)
    full = t.reference_module.reference(x, p, "fp32", None)["Y"]
    n = full.size
    rng = np.random.default_rng(9)
    idx = np.unique(np.concatenate([rng.choice(n, size=min(n, 3000), replace=False), [0, n - 1]]))
    sampled = t.reference_module.reference(x, p, "fp32", {"Y": idx})["Y"]
    assert sampled.shape == idx.shape
    np.testing.assert_allclose(sampled, full[idx], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("task", SPMM)
def test_the_largest_paper_spmm_sizes_are_sampled(task, harness_settings):
    t = load_task(task)
    params = t.size_list("paper")[-1]
    flops, _ = t.work(params, "fp32")
    assert flops > harness_settings.reference_full_flops  # evaluate() samples the reference there


# -- generators ----------------------------------------------------------------------------------


def test_regular_counts_spread_the_remainder_over_the_first_rows():
    assert gen_sparse.regular_counts(4, 10).tolist() == [3, 3, 2, 2]
    assert gen_sparse.regular_counts(3, 3).tolist() == [1, 1, 1]
    assert gen_sparse.regular_counts(5, 2).tolist() == [1, 1, 0, 0, 0]  # CSC: rows > nnz leaves rows empty
    with pytest.raises(ValueError):
        gen_sparse.regular_counts(0, 5)


@pytest.mark.parametrize(
    "task, major, minor, offsets, indices",
    [
        ("spmm_csr", "rows", "cols", "row_offsets", "col_indices"),
        ("spmv_csc", "columns", "rows", "col_offsets", "row_indices"),
        ("spmm_csc", "columns", "rows", "col_offsets", "row_indices"),
    ],
)
def test_compressed_generators_are_regular_with_duplicates_and_unsorted(task, major, minor, offsets, indices):
    params = load_task(task).size_list("paper")[0]
    _variant, stored, x, p = _generated(task, "bf16", params, seed=3)
    n_major, n_minor, nnz = int(p[major]), int(p[minor]), int(p["nnz"])
    assert stored[offsets].dtype == np.int32 and stored[indices].dtype == np.int32
    off = stored[offsets].astype(np.int64)
    idx = stored[indices].astype(np.int64)
    assert off.size == n_major + 1 and off[0] == 0 and off[-1] == nnz == idx.size
    counts = np.diff(off)
    assert counts.max() - counts.min() <= 1 and np.all(counts[:-1] >= counts[1:])  # regular, remainder first
    assert idx.min() >= 0 and idx.max() < n_minor
    owner = np.repeat(np.arange(n_major), counts)
    assert np.unique(owner * n_minor + idx).size < nnz, "with replacement: some duplicates"
    assert any(np.any(np.diff(idx[off[r] : off[r + 1]]) < 0) for r in range(n_major)), "unsorted"
    values = x["values"]
    assert np.all(np.abs(values) <= 1.0) and np.count_nonzero(values) > 0.99 * nnz


@pytest.mark.parametrize("task", ["spmv_coo", "spmm_coo"])
def test_coo_generator_has_one_entry_per_row_first_then_random_rows_with_duplicates(task):
    params = load_task(task).size_list("paper")[1]
    _, stored, _x, p = _generated(task, "fp32", params, seed=2)
    rows, cols, nnz = int(p["rows"]), int(p["cols"]), int(p["nnz"])
    r, c = stored["row_indices"].astype(np.int64), stored["col_indices"].astype(np.int64)
    assert r.size == c.size == nnz
    assert np.array_equal(r[:rows], np.arange(rows))  # entry j < rows is in row j
    assert r.min() >= 0 and r.max() < rows and c.min() >= 0 and c.max() < cols
    counts = np.bincount(r, minlength=rows)
    assert counts.min() >= 1 and counts.max() > counts.min() + 5  # irregular
    assert abs(counts.mean() - nnz / rows) < 1e-9
    assert np.unique(r * cols + c).size < nnz, "duplicate (row, col) pairs"
    assert np.any(np.diff(r[rows:]) < 0), "the rest is in random order"


@pytest.mark.parametrize("task", ["spmv_ell", "spmm_ell"])
@pytest.mark.parametrize("size_set", ["paper", "edge"])
def test_ell_is_packed_left_padded_with_minus_one_and_zero_and_fixed_per_size(task, size_set):
    t = load_task(task)
    for params in t.size_list(size_set)[:3]:
        names = t.names(params, "fp32")
        rows, cols, nnz, m = (int(names[k]) for k in ("rows", "cols", "nnz", "max_nnz_per_row"))
        counts = gen_sparse.ell_row_counts(rows, cols, nnz)
        assert counts.sum() == nnz and counts.min() >= 1 and counts.max() == m
        assert t.names(params, "bf16")["max_nnz_per_row"] == m
        first = None
        for seed in (1, 2):
            _, stored, _x, _ = _generated(task, "fp32", params, seed)
            col = stored["col_ids"].reshape(rows, m)
            val = stored["values"].reshape(rows, m)
            filled = np.arange(m)[None, :] < counts[:, None]
            assert np.all(col[filled] >= 0) and np.all(col[filled] < cols)
            assert np.all(col[~filled] == -1) and np.all(val[~filled] == 0.0)
            assert np.count_nonzero(val[filled]) == nnz
            if first is None:
                first = col
            elif nnz > 1:
                assert not np.array_equal(col, first), "columns come from the dataset seed"
        if size_set == "paper":
            assert (~filled).any(), "the published sizes have padding"


def test_ell_row_counts_depend_on_the_sizes_only():
    np.random.seed(123)  # the global state plays no part
    a = gen_sparse.ell_row_counts(2048, 2048, 41943).copy()
    np.random.seed(456)
    gen_sparse._ell_row_counts.cache_clear()
    b = gen_sparse.ell_row_counts(2048, 2048, 41943)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, gen_sparse.ell_row_counts(2048, 4096, 41943))
    assert not b.flags.writeable
    # 1 + multinomial: mean nnz/rows, spread ~ sqrt(nnz/rows)
    assert abs(a.mean() - 41943 / 2048) < 1e-9 and 2.5 < a.std() < 6.0


def test_generated_columns_are_uniform():
    _, stored, _, _ = _generated("spmv_coo", "fp32", {"rows": 32768, "cols": 2048}, seed=1)
    hist = np.bincount(stored["col_indices"], minlength=2048)
    mean = stored["col_indices"].size / 2048
    assert hist.min() > 0.7 * mean and hist.max() < 1.3 * mean


# -- the published numbers -----------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_nnz_is_the_published_formula_on_the_paper_sizes(task):
    t = load_task(task)
    for params in t.size_list("paper"):
        rows = params["rows"]
        cols = params.get("cols", params.get("columns"))
        floor = cols if "columns" in params else rows  # CSC: nnz >= columns; the others: nnz >= rows
        published = max(int(np.float32(rows * cols) * np.float32(0.01)), floor)  # (int)(rows*cols*0.01f)
        assert t.names(params, "fp32")["nnz"] == published


def test_complexity_is_computed_in_64_bits():
    t = load_task("spmm_csr")
    assert t.complexity_of({"rows": 262144, "cols": 2048, "K": 4096}) == 5368709 * 4096 > 2**31
    assert load_task("spmv_coo").complexity_of({"rows": 32768, "cols": 2048}) == 671088


@pytest.mark.parametrize("task", TASKS)
def test_prototypes_are_the_published_ones_exactly(task):
    assert SPEC.is_file(), f"{SPEC}: the shared spec is missing: clone or link shared/ beside the checkout (../shared)"
    text = SPEC.read_text()
    section = text[text.index(f"`{task}` — sparse") :]
    section = section[: section.index("\n### ")]
    published = dict(re.findall(r"- (FP32|BF16): `(extern \"C\"[^`]*)`", section))
    t = load_task(task)
    assert t.prototypes["fp32"].text == published["FP32"]
    assert t.prototypes["bf16"].text == published["BF16"]


# -- roles and traps -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task, accumulates",
    [
        ("spmv_coo", True),
        ("spmv_csc", True),
        ("spmm_coo", True),
        ("spmm_csc", True),
        ("spmv_ell", False),
        ("spmm_csr", False),
        ("spmm_ell", False),
    ],
)
def test_fp32_atomic_outputs_are_zeroed_and_bf16_outputs_poisoned(task, accumulates):
    t = load_task(task)
    out = t.variant("fp32").outputs()[0]
    assert t.arg(out).role_for("fp32") == ("accumulate" if accumulates else "output")
    assert t.arg(out).role_for("bf16") == "output"


def test_spmm_coo_fp32_row_parameter_is_the_rows_argument():
    t = load_task("spmm_coo")
    assert t.variant("fp32").param("rows").name == "row" and t.variant("bf16").param("rows").name == "rows"


def _passes(variant, got: dict, ref: dict, x: dict, names: dict) -> bool:
    return all(c.passed for c in check_outputs(variant, got, ref, x, names))


@pytest.mark.parametrize("task", ["spmv_coo", "spmm_coo"])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_plain_stores_instead_of_atomic_adds_fail(task, precision):
    # last write wins per (row, k) instead of summing: rows with more than one entry come out wrong
    t = load_task(task)
    params = dict(t.size_list("paper")[0], **({"K": 8} if task == "spmm_coo" else {}))
    variant, _, x, names = _generated(task, precision, params, seed=1)
    ref = {k: np.asarray(v, dtype=np.float64) for k, v in t.reference_module.reference(x, names, precision, None).items()}
    rows = int(names["rows"])
    r, c = x["row_indices"].astype(np.int64), x["col_indices"].astype(np.int64)
    if task == "spmv_coo":
        y = np.zeros(rows)
        y[r] = x["values"] * x["x"][c]  # numpy fancy assignment keeps the last write
        got = {"y": y}
    else:
        K = int(names["K"])
        Y = np.zeros((rows, K))
        Y[r] = x["values"][:, None] * x["X"].reshape(-1, K)[c]
        got = {"Y": Y.reshape(-1)}
    assert _passes(variant, ref, ref, x, names)
    assert not _passes(variant, got, ref, x, names)


@pytest.mark.parametrize("task", ["spmv_csc", "spmm_csc"])
def test_csc_empty_rows_must_be_written_in_bf16(task):
    t = load_task(task)
    params = {"rows": 1000, "columns": 3} | ({"K": 17} if task == "spmm_csc" else {})
    variant, _, x, names = _generated(task, "bf16", params, seed=1)
    ref = {k: np.asarray(v, dtype=np.float64) for k, v in t.reference_module.reference(x, names, "bf16", None).items()}
    out = variant.outputs()[0]
    touched = np.zeros(int(names["rows"]), dtype=bool)
    touched[x["row_indices"].astype(np.int64)] = True
    assert (~touched).sum() > 900  # most rows are empty
    got = ref[out].reshape(int(names["rows"]), -1).copy()
    assert np.all(got[~touched] == 0.0)
    got[~touched] = np.nan  # a kernel that writes only the rows that have entries leaves the poison
    assert not _passes(variant, {out: got.reshape(-1)}, ref, x, names)


@pytest.mark.parametrize("task", SPMM)
def test_spmm_with_x_read_transposed_fails(task):
    t = load_task(task)
    params = dict(t.size_list("edge")[2])  # K = 17 or 3, not square
    variant, _, x, names = _generated(task, "fp32", params, seed=2)
    ref = {k: np.asarray(v, dtype=np.float64) for k, v in t.reference_module.reference(x, names, "fp32", None).items()}
    K = int(names["K"])
    cols = x["X"].size // K
    wrong = dict(x, X=x["X"].reshape(K, cols).T.reshape(-1))  # X read as K x cols
    got = {"Y": np.asarray(t.reference_module.reference(wrong, names, "fp32", None)["Y"], dtype=np.float64)}
    assert not _passes(variant, got, ref, x, names)


# -- FP32 sums: atol covers a row that cancels to about 0, at every size --------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_fp32_atol_covers_the_rounding_of_a_row_that_cancels_at_every_size(task):
    """An output element sums a row's products in FP32 (in order, or atomically in any order). Its rounding error
    grows with the entries a row holds and does not shrink when the sum cancels to about 0, where rtol gives
    nothing: atol alone must cover it. Emulated per size: 256 rows with the most entries a row gets (mean + 4 sd),
    FP32 products summed in FP32 in a random order, the largest error against the float64 sum <= atol; a zero
    output still fails. (spmv_csc at 2048 x 2^20, ~10^4 entries a row, failed on the H200 with atol 1e-4: a row
    that cancelled to -0.098 was 1.2e-4 off.)"""
    variant = load_task(task).variant("fp32")
    (out,) = variant.outputs()
    rng = np.random.default_rng(7)
    for size_set in ("paper", "large", "edge"):
        for params in variant.task.size_list(size_set):
            names = variant.task.names(params, "fp32")
            per_row = names["nnz"] / names["rows"]
            n = max(1, int(np.ceil(per_row + 4 * np.sqrt(per_row))))
            # COO, CSR and ELL give every row one entry first (nnz = rows: one each); CSC's entries go to random
            # rows (one product an output only when the matrix holds one entry).
            if names["nnz"] == (1 if task.endswith("csc") else names["rows"]):
                n = 1  # one FP32 product: one rounding, within rtol (no sum to cancel)
            a = rng.uniform(-1, 1, (256, n)).astype(np.float32)
            terms = a * rng.uniform(-1, 1, (256, n)).astype(np.float32)
            exact = terms.astype(np.float64).sum(axis=1)
            order = rng.permuted(np.tile(np.arange(n), (256, 1)), axis=1)
            fp32 = np.cumsum(np.take_along_axis(terms, order, axis=1), axis=1, dtype=np.float32)[:, -1]
            tol = variant.tolerance_for(out, names)
            allowed = tol.atol + (tol.rtol * np.abs(exact) if n == 1 else 0.0)
            assert np.all(np.abs(fp32 - exact) <= allowed), (size_set, params, np.abs(fp32 - exact).max(), tol)
            if n >= 16:
                assert np.mean(np.abs(exact) > tol.atol + tol.rtol * np.abs(exact)) > 0.9, (size_set, params)  # zero fails
