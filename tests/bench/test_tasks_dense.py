"""The dense-algebra tasks of issue 11 (matrix_copy ... top_k): every float64 reference against an
independent computation on small hand-made inputs (values worked out by hand, or a naive loop), the
layouts and argument orders, sampled paths against full ones, the tolerances against a numpy emulation
of the baseline's FP32 arithmetic, and each task's trap (a partial copy, a shifted scan, a tie-permuted
top_k ...). The generic checks every variant gets are in test_tasks.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench_tasks import data, load_task
from bench_tasks.compare import check_outputs, compare
from bench_tasks.spec import Tolerance


def _ref(task: str, x: dict, names: dict, precision: str = "fp32", sample: dict | None = None) -> dict[str, np.ndarray]:
    x = {k: np.asarray(v, dtype=np.int64 if np.asarray(v).dtype.kind in "iu" else np.float64).reshape(-1) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, precision, sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


def _tol(task: str, precision: str, output: str | None = None, params: dict | None = None) -> Tolerance:
    """The tolerance of `output` (default: the first output) at the size `params` (none: numbers only)."""
    t = load_task(task)
    variant = t.variant(precision)
    return variant.tolerance_for(output or variant.outputs()[0], t.names(params, precision) if params else {})


def _inputs(task: str, precision: str, params: dict, seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """The seeded inputs as the kernel sees them (float64), and the names the reference gets."""
    variant = load_task(task).variant(precision)
    x = data.float64_inputs(variant, data.generate(variant, params, seed))
    return x, data.reference_names(variant, params)


def _sample(n: int, rng: np.random.Generator, k: int = 3000) -> np.ndarray:
    return np.unique(np.concatenate([rng.choice(n, size=min(n, k), replace=False), [0, n - 1]])).astype(np.int64)


def _f32(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def _sequential_fp32_dots(a: np.ndarray, b: np.ndarray, chunk: int = 512) -> np.ndarray:
    """Emulates the baselines' FP32 loop `sum += a[k] * b[k]` (an FMA: one rounding per step) for
    every row of a (R x K) against b (R x K, or one vector of K shared by all rows): the product is
    exact in float64, the sum rounded to float32 after every step. Rows are done `chunk` at a time."""
    out = np.empty(a.shape[0], dtype=np.float32)
    for r0 in range(0, a.shape[0], chunk):
        at = np.ascontiguousarray(_f32(a[r0 : r0 + chunk]).T).astype(np.float64)  # K x rows
        bt = np.asarray(b, dtype=np.float64) if b.ndim == 1 else np.ascontiguousarray(_f32(b[r0 : r0 + chunk]).T).astype(np.float64)
        s = np.zeros(at.shape[1], dtype=np.float32)
        for k in range(at.shape[0]):
            s = (s + at[k] * bt[k]).astype(np.float32)
        out[r0 : r0 + chunk] = s
    return out


def _emulated_dots(rows: int, k: int, precision: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`rows` independent length-k dot products of U(-1, 1) operands drawn as the harness draws them
    (float32, rounded to bf16 for BF16): (the baseline's stored results emulated, the float64 values)."""
    rng = np.random.default_rng(seed)
    a, b = (data.draw("uniform(-1, 1)", rng, rows * k, single=True).reshape(rows, k) for _ in range(2))
    if precision == "bf16":
        a, b = (data.to_float64(data.to_bf16_bits(v), "bfloat16").reshape(rows, k) for v in (a, b))
    exact = np.einsum("ij,ij->i", np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return _stored(_sequential_fp32_dots(a, b), precision), exact


def _stored(values: np.ndarray, precision: str) -> np.ndarray:
    """float32 results as the kernel stores them (BF16: rounded once), back in float64."""
    values = _f32(values)
    return values.astype(np.float64) if precision == "fp32" else data.to_float64(data.to_bf16_bits(values), "bfloat16")


# -- matrix_copy ---------------------------------------------------------------------------------


def test_matrix_copy_by_hand() -> None:
    out = _ref("matrix_copy", {"A": [1.5, -2.0, 0.25, 7.0, -0.0, 3.0]}, {"M": 2, "N": 3})
    assert out["B"].tolist() == [1.5, -2.0, 0.25, 7.0, 0.0, 3.0]


def test_matrix_copy_sampled_equals_full() -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, 37 * 53)
    idx = _sample(a.size, rng, 500)
    full = _ref("matrix_copy", {"A": a}, {"M": 37, "N": 53})["B"]
    assert np.array_equal(_ref("matrix_copy", {"A": a}, {"M": 37, "N": 53}, sample={"B": idx})["B"], full[idx])


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matrix_copy_is_exact_and_a_partial_copy_fails(precision: str) -> None:
    x, names = _inputs("matrix_copy", precision, {"M": 17, "N": 33}, seed=5)
    ref = _ref("matrix_copy", x, names, precision)["B"]
    tol = _tol("matrix_copy", precision)
    assert compare("B", ref.copy(), ref, tol).passed
    one_ulp = ref.copy()
    one_ulp[100] = np.nextafter(_f32(one_ulp[100]), np.float32(np.inf))
    assert not compare("B", one_ulp, ref, tol).passed, "a value off by one float32 ulp is not a copy"
    partial = ref.copy()
    partial[-1] = np.nan  # the last element left unwritten (poisoned)
    assert not compare("B", partial, ref, tol).passed


# -- matrix_scalar_mul ---------------------------------------------------------------------------


def test_matrix_scalar_mul_by_hand() -> None:
    # 2 x 2 times -0.5: [[2, -4], [0.5, 1]] -> [[-1, 2], [-0.25, -0.5]]
    out = _ref("matrix_scalar_mul", {"A": [2.0, -4.0, 0.5, 1.0]}, {"M": 2, "N": 2, "scalar": -0.5})
    assert out["B"].tolist() == [-1.0, 2.0, -0.25, -0.5]


def test_matrix_scalar_mul_scalar_is_the_same_bf16_exact_value_in_both_precisions() -> None:
    task = load_task("matrix_scalar_mul")
    assert task.variant("bf16").prototype.param("scalar").dtype == "bfloat16"
    seen = {p: data.reference_names(task.variant(p), {"M": 2, "N": 2})["scalar"] for p in ("fp32", "bf16")}
    assert seen["fp32"] == seen["bf16"] == -0.73046875


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matrix_scalar_mul_emulated_baseline_passes_and_ignoring_the_scalar_fails(precision: str) -> None:
    x, names = _inputs("matrix_scalar_mul", precision, {"M": 64, "N": 2048}, seed=2)
    ref = _ref("matrix_scalar_mul", x, names, precision)["B"]
    tol = _tol("matrix_scalar_mul", precision)
    product = _f32(x["A"]) * np.float32(names["scalar"])  # the baseline's FP32 product
    got = product.astype(np.float64) if precision == "fp32" else data.to_float64(data.to_bf16_bits(product), "bfloat16")
    assert compare("B", got, ref, tol).passed
    assert not compare("B", x["A"], ref, tol).passed, "B = A ignores the scalar"
    other = -0.73 if precision == "fp32" else -0.75  # bf16: 5 ulps away; fp32: 0.06 %
    assert not compare("B", other * x["A"], ref, tol).passed, "another scalar"


@pytest.mark.parametrize("M, N", [(5, 7), (300, 11)])
def test_matrix_scalar_mul_sampled_equals_full(M: int, N: int) -> None:
    rng = np.random.default_rng(M)
    x, names = {"A": rng.uniform(-1, 1, M * N)}, {"M": M, "N": N, "scalar": 0.375}
    idx = _sample(M * N, rng, 100)
    full = _ref("matrix_scalar_mul", x, names)["B"]
    assert np.array_equal(_ref("matrix_scalar_mul", x, names, sample={"B": idx})["B"], full[idx])


# -- matrix_transpose ----------------------------------------------------------------------------


def test_matrix_transpose_by_hand() -> None:
    # A (2x3) = [[1,2,3],[4,5,6]] -> B (3x2) = [[1,4],[2,5],[3,6]]
    out = _ref("matrix_transpose", {"A": [1, 2, 3, 4, 5, 6]}, {"M": 2, "N": 3})
    assert out["B"].tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matrix_transpose_rejects_a_copy_and_the_swapped_shape(precision: str) -> None:
    M, N = 17, 33
    x, names = _inputs("matrix_transpose", precision, {"M": M, "N": N}, seed=4)
    ref = _ref("matrix_transpose", x, names, precision)["B"]
    tol = _tol("matrix_transpose", precision)
    naive = np.array([x["A"][r * N + c] for c in range(N) for r in range(M)])  # B[c*M + r] = A[r*N + c]
    assert compare("B", naive, ref, tol).passed
    assert not compare("B", x["A"], ref, tol).passed, "a copy is not a transpose"
    swapped = x["A"].reshape(N, M).T.reshape(-1)  # A read as N x M
    assert not compare("B", swapped, ref, tol).passed


@pytest.mark.parametrize("M, N", [(37, 53), (1, 9), (9, 1), (300, 7)])
def test_matrix_transpose_sampled_equals_full(M: int, N: int) -> None:
    rng = np.random.default_rng(M * N)
    x, names = {"A": rng.uniform(-1, 1, M * N)}, {"M": M, "N": N}
    idx = _sample(M * N, rng, 200)
    full = _ref("matrix_transpose", x, names)["B"]
    assert np.array_equal(_ref("matrix_transpose", x, names, sample={"B": idx})["B"], full[idx])


# -- matrix_vector_mul ---------------------------------------------------------------------------


def test_matrix_vector_mul_by_hand() -> None:
    # A (2x3) = [[1,2,3],[4,5,6]], x = [1, 0, -1] -> y = [1-3, 4-6] = [-2, -2]
    # A (3x2) = [[1,2],[3,4],[5,6]], x = [1, -1] -> y = [-1, -1, -1]
    assert _ref("matrix_vector_mul", {"A": [1, 2, 3, 4, 5, 6], "x": [1, 0, -1]}, {"M": 2, "N": 3})["y"].tolist() == [-2.0, -2.0]
    assert _ref("matrix_vector_mul", {"A": [1, 2, 3, 4, 5, 6], "x": [1, -1]}, {"M": 3, "N": 2})["y"].tolist() == [-1.0] * 3


def test_matrix_vector_mul_complexity_is_the_origin_harness_m_times_n() -> None:
    task = load_task("matrix_vector_mul")
    assert task.complexity_of({"M": 2048, "N": 65536}) == 2048 * 65536  # not the optimized harness's M*N*N
    assert "origin" in task.notes["complexity"]


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_matrix_vector_mul_emulated_baseline_passes_at_the_largest_paper_n(precision: str) -> None:
    # The error grows with the row length N, not with M: 512 rows of the largest paper N (65536).
    M, N = 512, max(s["N"] for s in load_task("matrix_vector_mul").size_list("paper"))
    params = {"M": M, "N": N}
    x, names = _inputs("matrix_vector_mul", precision, params, seed=1)
    ref = _ref("matrix_vector_mul", x, names, precision)["y"]
    tol = _tol("matrix_vector_mul", precision, params=params)  # atol scales with N (issue 39)
    A = x["A"].reshape(M, N)
    got = _stored(_sequential_fp32_dots(A, x["x"]), precision)
    cmp = compare("y", got, ref, tol)
    assert cmp.passed, cmp.message
    assert cmp.max_abs_err < 0.5 * (tol.atol + tol.rtol * np.abs(ref)).max()
    column_major = x["A"].reshape(N, M).T @ x["x"]  # A read as column-major
    assert not compare("y", column_major, ref, tol).passed, "the wrong layout"


# -- square_matrix_mul ---------------------------------------------------------------------------


def test_square_matrix_mul_by_hand_and_order() -> None:
    # A = [[1,2],[3,4]], B = [[0,1],[1,0]]: A @ B = [[2,1],[4,3]] (columns swapped), B @ A = [[3,4],[1,2]]
    out = _ref("square_matrix_mul", {"A": [1, 2, 3, 4], "B": [0, 1, 1, 0]}, {"M": 2})
    assert out["C"].tolist() == [2.0, 1.0, 4.0, 3.0]


@pytest.mark.parametrize("M", [1, 37, 300])
def test_square_matrix_mul_sampled_equals_full_and_a_naive_loop(M: int) -> None:
    rng = np.random.default_rng(M)
    x, names = {"A": rng.uniform(-1, 1, M * M), "B": rng.uniform(-1, 1, M * M)}, {"M": M}
    full = _ref("square_matrix_mul", x, names)["C"]
    idx = _sample(M * M, rng, 500)
    assert np.allclose(_ref("square_matrix_mul", x, names, sample={"C": idx})["C"], full[idx], rtol=1e-13, atol=1e-13)
    for i in idx[:20]:
        r, c = divmod(int(i), M)
        assert math.isclose(full[i], sum(x["A"][r * M + k] * x["B"][k * M + c] for k in range(M)), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("M", [4096, 8191])  # the largest paper and large sizes: the error grows with M
def test_square_matrix_mul_tolerance_covers_the_emulated_baseline(precision: str, M: int) -> None:
    got, exact = _emulated_dots(1024, M, precision, seed=M)
    tol = _tol("square_matrix_mul", precision, params={"M": M})  # atol scales with M (issue 39)
    cmp = compare("C", got, exact, tol)
    assert cmp.passed, cmp.message
    if precision == "fp32":  # margin: the worst emulated error is under half of atol
        assert np.max(np.abs(got - exact)) < 0.5 * tol.atol


# -- high_order_contraction ----------------------------------------------------------------------


def _hoc_names(a: int, b: int, c: int, x: int, y: int) -> dict[str, int]:
    return {"a_dim": a, "b_dim": b, "c_dim": c, "x_dim": x, "y_dim": y}


def test_high_order_contraction_by_hand() -> None:
    # a = b = c = 1, x = y = 2: A[0,x,0,y] = [[1,2],[3,4]], B[x,0,y] = [[5,6],[7,8]] -> 5+12+21+32 = 70
    out = _ref("high_order_contraction", {"A": [1, 2, 3, 4], "B": [5, 6, 7, 8]}, _hoc_names(1, 1, 1, 2, 2))
    assert out["C"].tolist() == [70.0]


def test_high_order_contraction_layout_is_a_x_b_y() -> None:
    # a = 1, x = 2, b = 2, y = 1, c = 1: A[0,x,b,0] = [[1,2],[3,4]] (x major), B[x,0,0] = [10, 100]
    # C[0,b,0] = sum_x A[x,b] B[x]: b=0 -> 1*10 + 3*100 = 310, b=1 -> 2*10 + 4*100 = 420
    # (A read as [a][b][x][y] would give 210 and 430)
    out = _ref("high_order_contraction", {"A": [1, 2, 3, 4], "B": [10, 100]}, _hoc_names(1, 2, 1, 2, 1))
    assert out["C"].tolist() == [310.0, 420.0]


def test_high_order_contraction_equals_a_naive_loop_and_the_sampled_path() -> None:
    na, nb, nc, nx, ny = 3, 4, 5, 2, 3
    rng = np.random.default_rng(11)
    A, B = rng.uniform(-1, 1, na * nx * nb * ny), rng.uniform(-1, 1, nx * nc * ny)
    names = _hoc_names(na, nb, nc, nx, ny)
    full = _ref("high_order_contraction", {"A": A, "B": B}, names)["C"]
    naive = [
        sum(A[((a * nx + x) * nb + b) * ny + y] * B[(x * nc + c) * ny + y] for x in range(nx) for y in range(ny))
        for a in range(na)
        for b in range(nb)
        for c in range(nc)
    ]
    assert np.allclose(full, naive, rtol=1e-13, atol=1e-13)
    idx = _sample(full.size, rng, 25)
    sampled = _ref("high_order_contraction", {"A": A, "B": B}, names, sample={"C": idx})["C"]
    assert np.allclose(sampled, full[idx], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("terms", [256, 1024])  # x*y of the largest paper and large sizes
def test_high_order_contraction_tolerance_covers_the_emulated_baseline(precision: str, terms: int) -> None:
    got, exact = _emulated_dots(8192, terms, precision, seed=terms)
    tol = _tol("high_order_contraction", precision, params=_hoc_names(1, 1, 1, terms // 16, 16))  # atol scales with x*y
    cmp = compare("C", got, exact, tol)
    assert cmp.passed, cmp.message
    if precision == "fp32":
        assert np.max(np.abs(got - exact)) < 0.5 * tol.atol


# -- conv_1d -------------------------------------------------------------------------------------


def test_conv_1d_by_hand_is_a_cross_correlation_without_flip() -> None:
    # input [1, 2, 3], kernel [1, 10]: [1*1 + 2*10, 2*1 + 3*10] = [21, 32] (a flipped kernel gives [12, 23])
    out = _ref("conv_1d", {"input": [1, 2, 3], "kernel": [1, 10]}, {"input_size": 3, "kernel_size": 2})
    assert out["output"].tolist() == [21.0, 32.0]
    # kernel as long as the input: one output, the dot product 1*4 + 2*5 + 3*6 = 32
    assert _ref("conv_1d", {"input": [1, 2, 3], "kernel": [4, 5, 6]}, {"input_size": 3, "kernel_size": 3})["output"].tolist() == [32.0]


@pytest.mark.parametrize("n, k", [(50, 7), (1000, 1), (257, 256), (3000, 64)])
def test_conv_1d_equals_a_naive_loop_and_the_sampled_path(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    x, names = {"input": rng.uniform(-1, 1, n), "kernel": rng.uniform(-1, 1, k)}, {"input_size": n, "kernel_size": k}
    full = _ref("conv_1d", x, names)["output"]
    assert full.size == n - k + 1 == load_task("conv_1d").lengths(names, "fp32")["output"]
    naive = [sum(x["input"][i + j] * x["kernel"][j] for j in range(k)) for i in range(n - k + 1)]
    assert np.allclose(full, naive, rtol=1e-12, atol=1e-12)
    idx = _sample(full.size, rng, 100)
    assert np.allclose(_ref("conv_1d", x, names, sample={"output": idx})["output"], full[idx], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("taps", [256, 1024])  # the largest paper and large kernels
def test_conv_1d_tolerance_covers_the_emulated_baseline(precision: str, taps: int) -> None:
    got, exact = _emulated_dots(8192, taps, precision, seed=taps + 1)
    tol = _tol("conv_1d", precision, params={"input_size": 8192 + taps - 1, "kernel_size": taps})  # atol scales with the taps
    cmp = compare("output", got, exact, tol)
    assert cmp.passed, cmp.message
    if precision == "fp32":
        assert np.max(np.abs(got - exact)) < 0.5 * tol.atol


# -- conv_2d -------------------------------------------------------------------------------------


def _conv2d_names(rows: int, cols: int, kr: int, kc: int) -> dict[str, int]:
    return {"input_rows": rows, "input_cols": cols, "kernel_rows": kr, "kernel_cols": kc}


def test_conv_2d_by_hand_is_a_cross_correlation_without_flip() -> None:
    # input [[1,2,3],[4,5,6],[7,8,9]], kernel [[1,10],[100,1000]]:
    # out[0,0] = 1 + 2*10 + 4*100 + 5*1000 = 5421, out[0,1] = 2 + 30 + 500 + 6000 = 6532,
    # out[1,0] = 4 + 50 + 700 + 8000 = 8754,     out[1,1] = 5 + 60 + 800 + 9000 = 9865
    x = {"input": [1, 2, 3, 4, 5, 6, 7, 8, 9], "kernel": [1, 10, 100, 1000]}
    assert _ref("conv_2d", x, _conv2d_names(3, 3, 2, 2))["output"].tolist() == [5421.0, 6532.0, 8754.0, 9865.0]
    # a non-square input and kernel, row-major: input 2x3 [[1,2,3],[4,5,6]], kernel 1x2 [1,-1] -> [[-1,-1],[-1,-1]]
    # kernel 2x1 [[1],[2]] -> [1+8, 2+10, 3+12] = [9, 12, 15]
    assert _ref("conv_2d", {"input": [1, 2, 3, 4, 5, 6], "kernel": [1, -1]}, _conv2d_names(2, 3, 1, 2))["output"].tolist() == [-1.0] * 4
    assert _ref("conv_2d", {"input": [1, 2, 3, 4, 5, 6], "kernel": [1, 2]}, _conv2d_names(2, 3, 2, 1))["output"].tolist() == [
        9.0,
        12.0,
        15.0,
    ]


@pytest.mark.parametrize("rows, cols, kr, kc", [(9, 13, 3, 5), (20, 4, 1, 4), (16, 16, 16, 16), (40, 70, 8, 3)])
def test_conv_2d_equals_a_naive_loop_and_the_sampled_path(rows: int, cols: int, kr: int, kc: int) -> None:
    rng = np.random.default_rng(rows * cols + kr)
    x = {"input": rng.uniform(-1, 1, rows * cols), "kernel": rng.uniform(-1, 1, kr * kc)}
    names = _conv2d_names(rows, cols, kr, kc)
    full = _ref("conv_2d", x, names)["output"]
    orows, ocols = rows - kr + 1, cols - kc + 1
    assert full.size == orows * ocols == load_task("conv_2d").lengths(names, "fp32")["output"]
    img, k = x["input"].reshape(rows, cols), x["kernel"].reshape(kr, kc)
    naive = [sum(img[r + m, c + n] * k[m, n] for m in range(kr) for n in range(kc)) for r in range(orows) for c in range(ocols)]
    assert np.allclose(full, naive, rtol=1e-11, atol=1e-12)
    idx = _sample(full.size, rng, 200)
    assert np.allclose(_ref("conv_2d", x, names, sample={"output": idx})["output"], full[idx], rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_conv_2d_tolerance_covers_the_emulated_baseline(precision: str) -> None:
    got, exact = _emulated_dots(8192, 32 * 32, precision, seed=32)  # the largest kernel, paper and large
    tol = _tol("conv_2d", precision, params=_conv2d_names(128, 64 + 31, 32, 32))  # 8192 outputs of a 32 x 32 kernel
    cmp = compare("output", got, exact, tol)
    assert cmp.passed, cmp.message
    if precision == "fp32":
        assert np.max(np.abs(got - exact)) < 0.5 * tol.atol


# -- max_pooling_2d ------------------------------------------------------------------------------


def _pool_names(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> dict[str, int]:
    return {"N": n, "C": c, "H": h, "W": w, "kernel_size": k, "stride": s, "padding": p}


def test_max_pooling_2d_by_hand() -> None:
    # [[1,2,3],[4,5,6],[7,8,9]], k = 2, s = 1, p = 0 -> [[5,6],[8,9]]
    out = _ref("max_pooling_2d", {"input": range(1, 10)}, _pool_names(1, 1, 3, 3, 2, 1, 0))
    assert out["output"].tolist() == [5.0, 6.0, 8.0, 9.0]


def test_max_pooling_2d_padding_is_ignored_not_zero() -> None:
    # -[[1,2,3],[4,5,6],[7,8,9]], k = 2, s = 1, p = 1: out 4x4, each window clipped to the image;
    # a zero padding would give 0 on the whole border.
    out = _ref("max_pooling_2d", {"input": [-v for v in range(1, 10)]}, _pool_names(1, 1, 3, 3, 2, 1, 1))
    assert out["output"].tolist() == [-1, -1, -2, -3, -1, -1, -2, -3, -4, -4, -5, -6, -7, -7, -8, -9]


def test_max_pooling_2d_layout_is_nchw_planes_pooled_separately() -> None:
    # N = 1, C = 2, H = 1, W = 4, k = 1, s = 2: out_W = 2 picks columns 0 and 2 of each plane:
    # plane 0 [1, 9, 2, 3] -> [1, 2], plane 1 [8, 0, 7, 6] -> [8, 7]
    out = _ref("max_pooling_2d", {"input": [1, 9, 2, 3, 8, 0, 7, 6]}, _pool_names(1, 2, 1, 4, 1, 2, 0))
    assert out["output"].tolist() == [1.0, 2.0, 8.0, 7.0]
    # N = 2, C = 1, H = 2, W = 4, k = 2, s = 2: image 0 [[1,9,2,3],[5,5,5,5]] -> [9, 5],
    # image 1 [[8,0,7,6],[1,1,1,1]] -> [8, 7]
    x = {"input": [1, 9, 2, 3, 5, 5, 5, 5, 8, 0, 7, 6, 1, 1, 1, 1]}
    assert _ref("max_pooling_2d", x, _pool_names(2, 1, 2, 4, 2, 2, 0))["output"].tolist() == [9.0, 5.0, 8.0, 7.0]


@pytest.mark.parametrize(
    "n, c, h, w, k, s, p", [(2, 3, 9, 11, 3, 2, 1), (1, 1, 10, 10, 2, 3, 0), (1, 2, 7, 5, 4, 1, 3), (3, 1, 13, 6, 5, 2, 2)]
)
def test_max_pooling_2d_equals_a_naive_loop_and_the_sampled_path(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> None:
    rng = np.random.default_rng(h * w + k)
    names = _pool_names(n, c, h, w, k, s, p)
    x = {"input": rng.uniform(-1, 1, n * c * h * w)}
    full = _ref("max_pooling_2d", x, names)["output"]
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    img = x["input"].reshape(n * c, h, w)
    naive = [
        max(img[pl, r, q] for r in range(i * s - p, i * s - p + k) for q in range(j * s - p, j * s - p + k) if 0 <= r < h and 0 <= q < w)
        for pl in range(n * c)
        for i in range(oh)
        for j in range(ow)
    ]
    assert full.size == load_task("max_pooling_2d").lengths(names, "fp32")["output"]
    assert full.tolist() == naive
    idx = _sample(full.size, rng, 60)
    assert _ref("max_pooling_2d", x, names, sample={"output": idx})["output"].tolist() == full[idx].tolist()


def test_max_pooling_2d_sizes_have_no_empty_window() -> None:
    task = load_task("max_pooling_2d")
    for size_set in ("paper", "large", "edge"):
        for s in task.size_list(size_set):
            assert s["padding"] < s["kernel_size"] <= s["H"] + 2 * s["padding"], s
            assert s["kernel_size"] <= s["W"] + 2 * s["padding"] and s["N"] * s["C"] <= 65535, s  # grid.z
    assert len(task.size_list("paper")) == 24


# -- reverse_array -------------------------------------------------------------------------------


def test_reverse_array_by_hand() -> None:
    assert _ref("reverse_array", {"input": [1, 2, 3]}, {"N": 3})["output"].tolist() == [3.0, 2.0, 1.0]
    assert _ref("reverse_array", {"input": [1, 2, 3, 4]}, {"N": 4})["output"].tolist() == [4.0, 3.0, 2.0, 1.0]
    assert _ref("reverse_array", {"input": [7]}, {"N": 1})["output"].tolist() == [7.0]


@pytest.mark.parametrize("N", [1, 2, 3, 511, 512, 513, 100001])
def test_reverse_array_emulated_baseline_pairs_cover_every_element(N: int) -> None:
    # The baseline's threads: idx in [0, blocks*256) with idx <= N/2 write the pair (idx, N-1-idx).
    rng = np.random.default_rng(N)
    v = rng.uniform(-1, 1, N)
    blocks = ((N + 1) // 2 + 255) // 256
    out = np.full(N, np.nan)
    idx = np.arange(blocks * 256)
    idx = idx[idx <= N // 2]
    out[idx], out[N - 1 - idx] = v[N - 1 - idx], v[idx]
    ref = _ref("reverse_array", {"input": v}, {"N": N})["output"]
    tol = _tol("reverse_array", "fp32")
    assert compare("output", out, ref, tol).passed
    if N > 1:
        half = out.copy()
        half[N // 2 + N % 2 :] = np.nan  # only the first half written
        assert not compare("output", half, ref, tol).passed
        assert not compare("output", v, ref, tol).passed, "the input unchanged is not reversed"


def test_reverse_array_sampled_equals_full() -> None:
    rng = np.random.default_rng(9)
    v = rng.uniform(-1, 1, 1001)
    idx = _sample(v.size, rng, 100)
    full = _ref("reverse_array", {"input": v}, {"N": v.size})["output"]
    assert np.array_equal(_ref("reverse_array", {"input": v}, {"N": v.size}, sample={"output": idx})["output"], full[idx])


# -- sorting -------------------------------------------------------------------------------------


def _baseline_merge_sort(values: np.ndarray) -> np.ndarray:
    """The baseline's algorithm in Python: bottom-up merges with the double pass and the skip."""
    data, temp = list(values), list(values)
    n, width = len(values), 1

    def merge(src: list, dst: list) -> None:
        for left in range(0, n, 2 * width):
            mid, right = min(left + width, n), min(left + 2 * width, n)
            if mid >= right:
                continue  # second run empty: skipped
            i, j, k = left, mid, left
            while i < mid and j < right:
                if src[i] <= src[j]:
                    dst[k], i = src[i], i + 1
                else:
                    dst[k], j = src[j], j + 1
                k += 1
            dst[k:right] = src[i:mid] + src[j:right]

    while width < n:
        merge(temp, data)
        merge(data, temp)
        width *= 2
    return np.array(temp)


def test_sorting_by_hand_with_ties() -> None:
    out = _ref("sorting", {"data": [0.5, -1.0, 0.5, 0.0, 2.0, -1.0]}, {"N": 6})
    assert out["data"].tolist() == [-1.0, -1.0, 0.0, 0.5, 0.5, 2.0]


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("N", [1, 2, 3, 255, 257, 1000])
def test_sorting_emulated_baseline_passes_and_wrong_sorts_fail(precision: str, N: int) -> None:
    x, names = _inputs("sorting", precision, {"N": N}, seed=N)
    ref = _ref("sorting", x, names, precision)["data"]
    tol = _tol("sorting", precision)
    assert compare("data", _baseline_merge_sort(x["data"]), ref, tol).passed
    if N < 3:
        return
    if precision == "bf16" and N >= 255:
        assert np.unique(ref).size < ref.size, "bf16 inputs have ties"
    assert not compare("data", ref[::-1], ref, tol).passed, "descending"
    assert not compare("data", x["data"], ref, tol).passed, "unsorted"
    halves = np.concatenate([np.sort(x["data"][: N // 2]), np.sort(x["data"][N // 2 :])])  # last merge missing
    assert not compare("data", halves, ref, tol).passed
    dup = ref.copy()
    dup[-1] = dup[-2]  # sorted but not a permutation of the input (the largest value lost)
    if dup[-1] != ref[-1]:
        assert not compare("data", dup, ref, tol).passed


def test_sorting_accepts_any_order_of_equal_values_and_signed_zeros() -> None:
    ref = _ref("sorting", {"data": [0.0, 1.0, -0.0, 1.0]}, {"N": 4})["data"]
    tol = _tol("sorting", "fp32")
    assert compare("data", np.array([-0.0, 0.0, 1.0, 1.0]), ref, tol).passed
    assert compare("data", np.array([0.0, -0.0, 1.0, 1.0]), ref, tol).passed


def test_sorting_is_in_place_with_the_origin_complexity() -> None:
    task = load_task("sorting")
    assert task.arg("data").role_for("fp32") == task.arg("data").role_for("bf16") == "inout"
    assert task.complexity_of({"N": 65536}) == 65536 * 16
    assert task.complexity_of({"N": 1000}) == 9965  # (long)(1000 * log2(1000)) = (long)9965.78...
    assert task.complexity_of({"N": 1}) == 0
    assert "origin" in task.notes["complexity"]


# -- prefix_sum ----------------------------------------------------------------------------------

_SCAN_SIZES = [s for size_set in ("paper", "large") for s in load_task("prefix_sum").size_list(size_set)]


def test_prefix_sum_by_hand_is_inclusive() -> None:
    # [1, 2, 3, -4] -> [1, 1+2, 1+2+3, 1+2+3-4] = [1, 3, 6, 2] (exclusive would be [0, 1, 3, 6])
    assert _ref("prefix_sum", {"input": [1, 2, 3, -4]}, {"N": 4})["output"].tolist() == [1.0, 3.0, 6.0, 2.0]


def test_prefix_sum_tolerance_grows_with_n() -> None:
    atols = [_tol("prefix_sum", "fp32", "output", s).atol for s in _SCAN_SIZES]
    assert atols == sorted(atols) and atols[-1] > 100 * atols[0]
    assert _tol("prefix_sum", "fp32", "output", {"N": 262144}).atol == pytest.approx(1e-7 * 262144)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("params", _SCAN_SIZES, ids=lambda s: f"N{s['N']}")
def test_prefix_sum_emulated_baseline_passes_and_a_shifted_scan_fails(precision: str, params: dict) -> None:
    tol = _tol("prefix_sum", precision, "output", params)
    for seed in (1, 2, 3):
        x, names = _inputs("prefix_sum", precision, params, seed)
        ref = _ref("prefix_sum", x, names, precision)["output"]
        running = np.cumsum(_f32(x["input"]), dtype=np.float32)  # the baseline: a sequential FP32 running sum
        cmp = compare("output", _stored(running, precision), ref, tol)
        assert cmp.passed, cmp.message
        assert np.abs(running - ref).max() < 0.5 * tol.atol, "margin: the FP32 error stays under half of atol"
        exclusive = np.concatenate([[0.0], ref[:-1]])  # one element late
        early = np.concatenate([ref[1:], ref[-1:]])  # one element early
        assert not compare("output", _stored(exclusive, precision), ref, tol).passed, "an exclusive scan"
        assert not compare("output", _stored(early, precision), ref, tol).passed, "a scan shifted by one"


# -- matrix_power --------------------------------------------------------------------------------


def _bf16(values: np.ndarray) -> np.ndarray:
    return data.to_float64(data.to_bf16_bits(_f32(values)), "bfloat16").reshape(np.shape(values))


def test_matrix_power_by_hand() -> None:
    # [[1,1],[0,1]]^5 = [[1,5],[0,1]];  [[2,0],[1,3]]^3: [[2,0],[1,3]]^2 = [[4,0],[5,9]], times it = [[8,0],[19,27]]
    assert _ref("matrix_power", {"A": [1, 1, 0, 1]}, {"N": 2, "P": 5})["B"].tolist() == [1.0, 5.0, 0.0, 1.0]
    assert _ref("matrix_power", {"A": [2, 0, 1, 3]}, {"N": 2, "P": 3})["B"].tolist() == [8.0, 0.0, 19.0, 27.0]


def test_matrix_power_fp32_takes_host_pointers_and_bf16_device_pointers() -> None:
    task = load_task("matrix_power")
    for name in ("A", "B"):
        assert task.arg(name).memory_for("fp32") == "host" and task.arg(name).memory_for("bf16") == "device"
    assert all(s["P"] >= 2 for set_ in ("paper", "large", "edge") for s in task.size_list(set_))
    assert "cudaMalloc" in task.notes["timed"] and "host" in task.notes["timed"]


@pytest.mark.parametrize("N, P", [(256, 16), (256, 2), (512, 11)])
def test_matrix_power_bf16_tolerance_covers_per_product_rounding(N: int, P: int) -> None:
    x, names = _inputs("matrix_power", "bf16", {"N": N, "P": P}, seed=N + P)
    ref = _ref("matrix_power", x, names, "bf16")["B"]
    tol = _tol("matrix_power", "bf16", "B", {"N": N, "P": P})
    A = x["A"].reshape(N, N)
    R = _bf16(A @ A)  # the baseline: every product rounded to bf16 (its FP32 sums are far finer)
    for _ in range(P - 2):
        R = _bf16(R @ A)
    got = R.reshape(-1)
    cmp = compare("B", got, ref, tol)
    assert cmp.passed, cmp.message
    margin = Tolerance(tol.atol / 2, tol.rtol, tol.scale)  # the same error passes half the atol
    assert compare("B", got, ref, margin).passed
    assert compare("B", _bf16(ref), ref, tol).passed, "rounding only the final result passes too"
    assert not compare("B", np.linalg.matrix_power(A, P - 1).reshape(-1), ref, tol).passed, "A^(P-1)"
    if P > 2:
        assert not compare("B", _bf16(A @ A).reshape(-1), ref, tol).passed, "A^2"


@pytest.mark.parametrize("N, P", [(64, 16), (96, 5)])
def test_matrix_power_fp32_tolerance_covers_the_emulated_naive_products(N: int, P: int) -> None:
    x, names = _inputs("matrix_power", "fp32", {"N": N, "P": P}, seed=N)
    ref = _ref("matrix_power", x, names)["B"]
    tol = _tol("matrix_power", "fp32", "B", {"N": N, "P": P})
    A = _f32(x["A"].reshape(N, N))

    def naive(X: np.ndarray, Y: np.ndarray) -> np.ndarray:  # sequential FP32 sums, one per output
        return _sequential_fp32_dots(np.repeat(X, N, axis=0), np.tile(Y.T, (N, 1)), chunk=4096).reshape(N, N)

    R = naive(A, A)
    for _ in range(P - 2):
        R = naive(R, A)
    got = R.astype(np.float64).reshape(-1)
    assert compare("B", got, ref, Tolerance(tol.atol / 4, tol.rtol, tol.scale)).passed, "4x margin"
    A_tf32 = (A.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)  # 10-bit mantissa
    assert not compare("B", np.linalg.matrix_power(A_tf32, P).reshape(-1), ref, tol).passed, "TF32 inputs"


@pytest.mark.parametrize("params", load_task("matrix_power").size_list("edge"), ids=lambda s: f"N{s['N']}P{s['P']}")
def test_matrix_power_edge_sizes_pass_the_emulated_bf16_baseline_on_many_seeds(params: dict) -> None:
    N, P = params["N"], params["P"]
    tol = _tol("matrix_power", "bf16", "B", params)
    for seed in range(40 if N < 100 else 4):
        x, names = _inputs("matrix_power", "bf16", params, seed)
        A = x["A"].reshape(N, N)
        R = _bf16(A @ A)
        for _ in range(P - 2):
            R = _bf16(R @ A)
        ref = _ref("matrix_power", x, names, "bf16")["B"]
        cmp = compare("B", R.reshape(-1), ref, tol)
        assert cmp.passed, f"seed {seed}: {cmp.message}"


# -- top_k ---------------------------------------------------------------------------------------


def _top_k_check(got_values: np.ndarray, got_indices: np.ndarray, x: dict, names: dict, precision: str = "fp32") -> list:
    variant = load_task("top_k").variant(precision)
    ref = _ref("top_k", x, names, precision)
    got = {"top_k_values": np.asarray(got_values, dtype=np.float64), "top_k_indices": np.asarray(got_indices, dtype=np.int64)}
    return check_outputs(variant, got, ref, {k: np.asarray(v, dtype=np.float64) for k, v in x.items()}, names)


def _top_k_passes(got_values: np.ndarray, got_indices: np.ndarray, x: dict, names: dict, precision: str = "fp32") -> bool:
    return all(c.passed for c in _top_k_check(got_values, got_indices, x, names, precision))


def _baseline_top_k(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The baseline in Python: the merge sort of (value, index) pairs, value descending then index ascending."""
    keys = [(-float(v), i) for i, v in enumerate(values)]
    order = [i for _, i in sorted(keys)][:k]  # (-value, index) ascending == value descending, index ascending
    return values[order], np.array(order)


def test_top_k_by_hand_ties_go_to_the_smaller_index() -> None:
    # input [0.5, 0.9, 0.5, -1, 0.9], k = 3 -> values [0.9, 0.9, 0.5], indices [1, 4, 0]
    x, names = {"input": np.array([0.5, 0.9, 0.5, -1.0, 0.9])}, {"N": 5, "k": 3}
    out = _ref("top_k", x, names)
    assert out["top_k_values"].tolist() == [0.9, 0.9, 0.5]
    assert out["top_k_indices"].tolist() == [1.0, 4.0, 0.0]


def test_top_k_accepts_every_valid_tie_choice_and_rejects_invalid_indices() -> None:
    x, names = {"input": np.array([0.5, 0.9, 0.5, -1.0, 0.9, 0.1])}, {"N": 6, "k": 3}
    v = [0.9, 0.9, 0.5]
    assert _top_k_passes(v, [1, 4, 0], x, names), "the reference"
    assert _top_k_passes(v, [4, 1, 0], x, names), "equal values in the other order"
    assert _top_k_passes(v, [1, 4, 2], x, names), "the other tied element at the k-th value"
    assert not _top_k_passes(v, [1, 4, 3], x, names), "index 3 holds -1, not 0.5"
    assert not _top_k_passes(v, [1, 1, 0], x, names), "a duplicated index"
    assert not _top_k_passes(v, [1, 4, 6], x, names), "out of range"
    assert not _top_k_passes(v, [1, 4, -1], x, names), "unwritten (poisoned to -1)"
    assert not _top_k_passes([0.9, 0.5, 0.9], [1, 0, 4], x, names), "not descending"
    assert not _top_k_passes([0.9, 0.9, 0.1], [1, 4, 5], x, names), "not the k largest"
    # [0.5, 0.9, 0.2, 0.7, 0.9, 0.1]: top 3 = [0.9, 0.9, 0.7]; 0.7 is unique (index 3): index 2 is wrong
    unique = _top_k_check([0.9, 0.9, 0.7], [1, 4, 2], {"input": np.array([0.5, 0.9, 0.2, 0.7, 0.9, 0.1])}, names)
    assert unique[0].passed and not unique[1].passed
    assert "unique in the input, at index 3" in unique[1].message


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize(
    "params",
    [{"N": 1, "k": 1}, {"N": 3, "k": 3}, {"N": 257, "k": 32}, {"N": 1000, "k": 999}, {"N": 4096, "k": 128}],
    ids=lambda s: f"N{s['N']}k{s['k']}",
)
def test_top_k_emulated_baseline_and_tie_permutations_pass_corruptions_fail(precision: str, params: dict) -> None:
    x, names = _inputs("top_k", precision, params, seed=params["N"])
    ref = _ref("top_k", x, names, precision)
    base_values, base_indices = _baseline_top_k(x["input"], params["k"])
    assert np.array_equal(base_values, ref["top_k_values"]) and np.array_equal(base_indices, ref["top_k_indices"])
    assert _top_k_passes(base_values, base_indices, x, names, precision)
    rng = np.random.default_rng(1)
    v = ref["top_k_values"]
    # Any valid answer: among the input elements equal to each value, a random choice in a random order.
    valid = np.empty(v.size, dtype=np.int64)
    for value in np.unique(v):
        slots = np.flatnonzero(v == value)
        valid[slots] = rng.choice(np.flatnonzero(x["input"] == value), size=slots.size, replace=False)
    assert _top_k_passes(v, valid, x, names, precision)
    if precision == "bf16" and params["N"] >= 1000:
        assert not np.array_equal(valid, ref["top_k_indices"]), "bf16 data has ties, so the valid answer differs"
    if v.size > 1:
        if np.unique(v).size > 1:
            assert not _top_k_passes(v, np.roll(valid, 1), x, names, precision), "indices rotated"
        dup = valid.copy()
        dup[-1] = dup[0]
        assert not _top_k_passes(v, dup, x, names, precision), "a duplicated index"
        ascending = np.sort(v)
        assert not _top_k_passes(ascending, valid[::-1], x, names, precision), "ascending order"
