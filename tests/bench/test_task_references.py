"""The float64 references of dot_product, matrix_mul, spmv_csr, rms_norm and stencil_2d against values
worked out by hand, their sampled paths against their full ones, and the CSR generator's invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse

from bench_tasks import data, load_task

MY_TASKS = ("dot_product", "matrix_mul", "spmv_csr", "rms_norm", "stencil_2d")


def _ref(task: str, x: dict, names: dict, precision: str = "fp32", sample=None) -> dict:
    x = {k: np.asarray(v, dtype=np.int64 if np.asarray(v).dtype.kind in "iu" else np.float64) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, precision, sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


# -- dot_product ---------------------------------------------------------------------------------


def test_dot_product_by_hand():
    # 1*4 + 2*(-5) + 3*6 = 12
    out = _ref("dot_product", {"X": [1.0, 2.0, 3.0], "Y": [4.0, -5.0, 6.0]}, {"N": 3})
    assert out["loss"].shape == (1,)
    assert out["loss"][0] == 12.0


def test_dot_product_loss_is_a_float_accumulator_in_both_precisions():
    task = load_task("dot_product")
    assert task.arg("loss").role == "accumulate"
    for precision in ("fp32", "bf16"):
        assert task.variant(precision).param("loss").dtype == "float32"
        assert task.lengths({"N": 65536}, precision)["loss"] == 1


# -- matrix_mul ----------------------------------------------------------------------------------


def test_matrix_mul_by_hand():
    # A (2x3) = [[1,2,3],[4,5,6]], B (3x2) = [[7,8],[9,10],[11,12]]
    # C = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]] = [[58, 64], [139, 154]]
    x = {"A": [1, 2, 3, 4, 5, 6], "B": [7, 8, 9, 10, 11, 12]}
    out = _ref("matrix_mul", x, {"M": 2, "N": 2, "K": 3})
    assert out["C"].tolist() == [58.0, 64.0, 139.0, 154.0]


def test_matrix_mul_argument_order_is_m_n_k():
    # A 1x2 = [1, 2], B 2x3 = [[1,0,2],[0,1,3]] -> C 1x3 = [1, 2, 8]
    out = _ref("matrix_mul", {"A": [1, 2], "B": [1, 0, 2, 0, 1, 3]}, {"M": 1, "N": 3, "K": 2})
    assert out["C"].tolist() == [1.0, 2.0, 8.0]


@pytest.mark.parametrize("M, N, K", [(37, 29, 13), (5, 3000, 7), (3000, 5, 4)])
def test_matrix_mul_sampled_equals_full(M, N, K):
    rng = np.random.default_rng(7)
    x = {"A": rng.uniform(-1, 1, M * K), "B": rng.uniform(-1, 1, K * N)}
    names = {"M": M, "N": N, "K": K}
    full = _ref("matrix_mul", x, names)["C"]
    idx = np.unique(np.concatenate([rng.choice(M * N, size=min(M * N, 5000), replace=False), [0, M * N - 1]]))
    sampled = _ref("matrix_mul", x, names, sample={"C": idx})["C"]
    assert sampled.shape == idx.shape
    np.testing.assert_allclose(sampled, full[idx], rtol=1e-13, atol=1e-13)


# -- spmv_csr ------------------------------------------------------------------------------------


def test_spmv_csr_by_hand():
    # 4 x 4, x = [1, 2, 3, 4]
    # row 0: (col 3, -0.5), (col 1, 2.0)  -> -2 + 4 = 2     (unsorted columns)
    # row 1: (col 0, 0.5), (col 0, 2.5)   -> 0.5 + 2.5 = 3  (duplicate column: summed)
    # row 2: empty                        -> 0
    # row 3: (col 2, 4.0)                 -> 12
    x = {
        "row_offsets": [0, 2, 4, 4, 5],
        "col_indices": [3, 1, 0, 0, 2],
        "values": [-0.5, 2.0, 0.5, 2.5, 4.0],
        "x": [1.0, 2.0, 3.0, 4.0],
    }
    out = _ref("spmv_csr", x, {"rows": 4, "cols": 4, "nnz": 5})
    assert out["y"].tolist() == [2.0, 3.0, 0.0, 12.0]


def test_spmv_csr_nnz_formula_matches_the_published_numbers():
    task = load_task("spmv_csr")
    published = {
        256: 5242,
        1024: 20971,
        2048: 41943,
        4096: 83886,
        8192: 167772,
        16384: 335544,
        32768: 671088,
        65536: 1342177,
        262144: 5368709,
    }
    for rows, nnz in published.items():
        assert task.names({"rows": rows, "cols": 2048}, "fp32")["nnz"] == nnz
    for params in task.size_list("paper"):
        rows, cols = params["rows"], params["cols"]
        as_published = max(int(np.float32(rows * cols) * np.float32(0.01)), rows)  # (int)(rows*cols*0.01f)
        assert task.names(params, "fp32")["nnz"] == as_published
    # the floor nnz >= rows
    assert task.names({"rows": 33, "cols": 7}, "fp32")["nnz"] == 33
    assert task.names({"rows": 1, "cols": 1}, "fp32")["nnz"] == 1


@pytest.mark.parametrize(
    "params",
    [
        {"rows": 1024, "cols": 2048},
        {"rows": 1000, "cols": 2048},
        {"rows": 31, "cols": 2048},
        {"rows": 33, "cols": 7},
        {"rows": 1, "cols": 1},
    ],
)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_spmv_csr_generator_invariants(params, precision):
    variant = load_task("spmv_csr").variant(precision)
    names = variant.task.names(params, precision)
    rows, cols, nnz = params["rows"], params["cols"], names["nnz"]
    stored = data.generate(variant, params, seed=5)
    assert stored["row_offsets"].dtype == np.int32 and stored["col_indices"].dtype == np.int32
    off = stored["row_offsets"].astype(np.int64)
    col = stored["col_indices"].astype(np.int64)
    assert off.size == rows + 1 and off[0] == 0 and off[-1] == nnz == col.size
    counts = np.diff(off)
    assert np.all(counts >= 0)
    # regular rows: floor(nnz/rows) each, one more for the first nnz mod rows rows
    expected = np.full(rows, nnz // rows)
    expected[: nnz % rows] += 1
    assert np.array_equal(counts, expected)
    assert col.min() >= 0 and col.max() < cols
    values = data.to_float64(stored["values"], variant.param("values").dtype)
    assert np.all(np.abs(values) <= 1.0) and np.count_nonzero(values) > 0.9 * nnz
    assert stored["x"].size == cols
    if rows == 1024:
        # with replacement: some rows hold a column twice; unsorted: some rows are not ascending
        row_of = np.repeat(np.arange(rows), counts)
        pairs = row_of * cols + col
        assert np.unique(pairs).size < nnz
        assert any(np.any(np.diff(col[off[r] : off[r + 1]]) < 0) for r in range(rows))


def test_spmv_csr_generator_is_uniform_over_columns():
    variant = load_task("spmv_csr").variant("fp32")
    stored = data.generate(variant, {"rows": 32768, "cols": 2048}, seed=1)
    hist = np.bincount(stored["col_indices"], minlength=2048)
    mean = stored["col_indices"].size / 2048  # ~328 per column
    assert hist.min() > 0.7 * mean and hist.max() < 1.3 * mean


def test_spmv_csr_reference_matches_scipy_on_generated_data():
    variant = load_task("spmv_csr").variant("bf16")
    params = {"rows": 2048, "cols": 2048}
    x = data.float64_inputs(variant, data.generate(variant, params, seed=3))
    names = variant.task.names(params, "bf16")
    y = _ref("spmv_csr", x, names, "bf16")["y"]
    A = scipy.sparse.csr_matrix((x["values"], x["col_indices"], x["row_offsets"]), shape=(2048, 2048))
    A.sum_duplicates()
    np.testing.assert_allclose(y, A @ x["x"], rtol=1e-12, atol=1e-12)


# -- rms_norm ------------------------------------------------------------------------------------


def test_rms_norm_by_hand():
    # x = [3, 4]: sum x^2 = 25, / N = 12.5, rms = sqrt(12.5 + 1e-5)
    # weight = [1, 2], bias = [0, 1] -> out = [3 / rms, 2*4 / rms + 1]
    out = _ref("rms_norm", {"input": [3.0, 4.0], "weight": [1.0, 2.0], "bias": [0.0, 1.0]}, {"N": 2, "epsilon": 1e-5})["output"]
    rms = math.sqrt(12.5 + 1e-5)
    assert out[0] == pytest.approx(3 / rms, rel=1e-15)
    assert out[1] == pytest.approx(8 / rms + 1, rel=1e-15)
    assert out[0] == pytest.approx(0.848528, abs=1e-6)  # 3 / sqrt(12.5) = 0.8485281...


def test_rms_norm_epsilon_is_inside_the_sqrt_after_the_mean():
    # N = 2, x = [1e-3, 0]: mean of squares 5e-7; rms = sqrt(5e-7 + 1e-5) = sqrt(1.05e-5)
    out = _ref("rms_norm", {"input": [1e-3, 0.0], "weight": [1.0, 1.0], "bias": [0.5, -0.5]}, {"N": 2, "epsilon": 1e-5})["output"]
    assert out[0] == pytest.approx(1e-3 / math.sqrt(1.05e-5) + 0.5, rel=1e-14)
    assert out[1] == -0.5


def test_rms_norm_epsilon_matches_the_task():
    task = load_task("rms_norm")
    assert task.scalar_values({"N": 64}, "fp32")["epsilon"] == 1e-5


# -- stencil_2d ----------------------------------------------------------------------------------


def test_stencil_2d_by_hand():
    # 4 x 4 zeros with u[1,1] = 1 and the boundary cell u[0,2] = 2 (layout u[i*ny + j], r = 0.25):
    #   (1,1): 1 + 0.25*(0 + 0 + 0 + 0 - 4)   = 0
    #   (1,2): 0 + 0.25*(1 [left] + 2 [up])   = 0.75
    #   (2,1): 0 + 0.25*(1 [up])              = 0.25
    #   (2,2): 0
    #   boundary copied: (0,2) stays 2, the rest 0.
    u = np.zeros((4, 4))
    u[1, 1], u[0, 2] = 1.0, 2.0
    out = _ref("stencil_2d", {"u_old": u.reshape(-1)}, {"nx": 4, "ny": 4, "r": 0.25})["u_new"].reshape(4, 4)
    expected = np.zeros((4, 4))
    expected[0, 2], expected[1, 2], expected[2, 1] = 2.0, 0.75, 0.25
    assert np.array_equal(out, expected)


def test_stencil_2d_quadratic_field():
    # u = i^2 + 2 j^2 on 4 x 5 (nx = 4 slow, ny = 5 fast): the 5-point Laplacian is 2 + 4 = 6 everywhere,
    # so interior cells become u + 0.25 * 6 = u + 1.5; boundary cells are unchanged.
    i, j = np.meshgrid(np.arange(4), np.arange(5), indexing="ij")
    u = (i**2 + 2 * j**2).astype(np.float64)
    out = _ref("stencil_2d", {"u_old": u.reshape(-1)}, {"nx": 4, "ny": 5, "r": 0.25})["u_new"].reshape(4, 5)
    expected = u.copy()
    expected[1:3, 1:4] += 1.5
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("nx, ny", [(1, 1), (2, 5), (5, 2), (1, 7)])
def test_stencil_2d_without_interior_copies_everything(nx, ny):
    u = np.arange(nx * ny, dtype=np.float64) - 3.5
    assert np.array_equal(_ref("stencil_2d", {"u_old": u}, {"nx": nx, "ny": ny, "r": 0.25})["u_new"], u)


def test_stencil_2d_sampled_equals_full():
    rng = np.random.default_rng(11)
    nx, ny = 37, 53
    u = rng.uniform(-1, 1, nx * ny)
    full = _ref("stencil_2d", {"u_old": u}, {"nx": nx, "ny": ny, "r": 0.25})["u_new"]
    idx = np.unique(np.concatenate([rng.choice(nx * ny, 700, replace=False), [0, ny - 1, ny, nx * ny - 1]]))
    sampled = _ref("stencil_2d", {"u_old": u}, {"nx": nx, "ny": ny, "r": 0.25}, sample={"u_new": idx})["u_new"]
    assert np.array_equal(sampled, full[idx])


def test_stencil_2d_r_matches_the_task():
    task = load_task("stencil_2d")
    assert task.scalar_values({"nx": 4, "ny": 4}, "fp32")["r"] == 0.25


# -- all five: shapes on real draws ----------------------------------------------------------------


@pytest.mark.parametrize("name", MY_TASKS)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_reference_shapes_on_edge_and_smallest_paper_sizes(name, precision):
    task = load_task(name)
    variant = task.variant(precision)
    for params in task.size_list("edge") + task.size_list("paper")[:1]:
        x = data.float64_inputs(variant, data.generate(variant, params, seed=1))
        names = data.reference_names(variant, params)
        lengths = task.lengths(params, precision)
        out = task.reference_module.reference(x, names, precision, None)
        outputs = task.variant(precision).outputs()
        assert sorted(out) == sorted(outputs)
        for o in outputs:
            r = np.asarray(out[o]).reshape(-1)
            assert r.size == lengths[o] and np.all(np.isfinite(r)), (params, o)
