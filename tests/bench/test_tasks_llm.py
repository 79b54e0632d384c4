"""The LLM-operator and scientific tasks (issue 12): silu_and_mul, rope, merge_attn_states,
softmax_attention, triangle_attention, FFT, stencil_3d, monte_carlo_int, simpson_int.

Each float64 reference is checked against an independent computation on small hand-made inputs (values
worked out in comments, or a plain Python loop with `math`), layouts and argument orders are pinned down,
sampled paths equal full ones, generators keep their invariants, and each task's trap from the issue is
shown to be caught by its tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench_tasks import data, load_task
from bench_tasks.spec import Tolerance


def _ref(task: str, x: dict, names: dict, precision: str = "fp32", sample: dict | None = None) -> dict[str, np.ndarray]:
    x = {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, precision, sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


def _dataset(task: str, precision: str, params: dict, seed: int) -> tuple[dict, dict]:
    """(inputs as the kernel saw them in float64, the names a reference sees) for one seeded draw."""
    variant = load_task(task).variant(precision)
    stored = data.generate(variant, params, seed)
    return data.float64_inputs(variant, stored), data.reference_names(variant, params)


def _tol(task: str, precision: str, output: str, params: dict) -> Tolerance:
    """The tolerance of one output at one size (numbers resolved from the task's expressions)."""
    t = load_task(task)
    return t.variant(precision).tolerance_for(output, t.names(params, precision))


def _sample(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.unique(np.concatenate([rng.choice(n, size=min(n, k), replace=False), [0, n - 1]])).astype(np.int64)


# -- silu_and_mul --------------------------------------------------------------------------------------


def _silu(v: float) -> float:
    return v / (1.0 + math.exp(-v))


def test_silu_and_mul_by_hand_activation_on_the_first_half():
    # B = 1, D = 2: in = [x0, x1 | g0, g1] = [0, 2 | 3, -1]
    #   out[0] = silu(0) * 3 = 0;  out[1] = silu(2) * -1 = -2 / (1 + e^-2) = -1.7615941559557649
    out = _ref("silu_and_mul", {"in": [0.0, 2.0, 3.0, -1.0]}, {"B": 1, "D": 2})["out"]
    assert out[0] == 0.0
    assert out[1] == pytest.approx(-1.7615941559557649, rel=1e-15)
    # B = 1, D = 1: in = [x | g] = [1 | 2] -> 2 * silu(1) = 2 / (1 + e^-1) = 1.4621171572600098,
    # not silu(2) * 1 = 1.7616 (the activation on the gate half would be the other convention).
    one = _ref("silu_and_mul", {"in": [1.0, 2.0]}, {"B": 1, "D": 1})["out"]
    assert one[0] == pytest.approx(1.4621171572600098, rel=1e-15)


def test_silu_and_mul_rows_are_2d_wide_in_and_d_wide_out():
    # B = 2, D = 1: rows [1 | 1] and [-1 | 4]: out = [silu(1), 4 silu(-1)] = [0.7310585786300049, -1.0757656854799804]
    out = _ref("silu_and_mul", {"in": [1.0, 1.0, -1.0, 4.0]}, {"B": 2, "D": 1})["out"]
    np.testing.assert_allclose(out, [0.7310585786300049, -1.0757656854799804], rtol=1e-15)


def test_silu_and_mul_matches_a_loop():
    B, D = 3, 5
    v = np.random.default_rng(4).uniform(-6, 6, 2 * B * D)
    expected = [_silu(v[b * 2 * D + d]) * v[b * 2 * D + D + d] for b in range(B) for d in range(D)]
    np.testing.assert_allclose(_ref("silu_and_mul", {"in": v}, {"B": B, "D": D})["out"], expected, rtol=1e-14, atol=1e-15)


def test_silu_and_mul_has_no_overflow_for_large_negative_inputs():
    out = _ref("silu_and_mul", {"in": [-1000.0, 1000.0, 1.0, 1.0]}, {"B": 1, "D": 2})["out"]
    assert np.all(np.isfinite(out)) and out[0] == pytest.approx(0.0, abs=1e-300) and out[1] == 1000.0


# -- rope ----------------------------------------------------------------------------------------------


def test_rope_by_hand_interleaved_pairs_and_row_positions():
    # M = 2, D = 4, base 10000: theta_0 = 1, theta_1 = 10000^(-2/4) = 0.01.
    # Row 0 (position 0): no rotation. Row 1 (position 1): pair 0 = (1, 0) rotated by 1 rad -> (cos 1, sin 1);
    # pair 1 = (0, 1) rotated by 0.01 rad -> (-sin 0.01, cos 0.01).
    x = [0.5, -0.25, 2.0, 3.0, 1.0, 0.0, 0.0, 1.0]
    out = _ref("rope", {"input": x}, {"M": 2, "D": 4, "base": 10000.0})["output"]
    expected = [0.5, -0.25, 2.0, 3.0, math.cos(1.0), math.sin(1.0), -math.sin(0.01), math.cos(0.01)]
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=1e-16)


def test_rope_matches_a_loop():
    M, D, base = 5, 6, 10000.0
    v = np.random.default_rng(2).uniform(-1, 1, M * D)
    expected = np.empty(M * D)
    for m in range(M):
        for p in range(D // 2):
            angle = m * base ** (-2.0 * p / D)
            x0, x1 = v[m * D + 2 * p], v[m * D + 2 * p + 1]
            expected[m * D + 2 * p] = x0 * math.cos(angle) - x1 * math.sin(angle)
            expected[m * D + 2 * p + 1] = x0 * math.sin(angle) + x1 * math.cos(angle)
    np.testing.assert_allclose(_ref("rope", {"input": v}, {"M": M, "D": D, "base": base})["output"], expected, rtol=1e-14, atol=1e-15)


def test_rope_base_is_passed_as_10000():
    assert load_task("rope").scalar_values({"M": 16, "D": 256}, "bf16")["base"] == 10000.0


def test_rope_sampled_equals_full():
    M, D = 37, 18
    v = np.random.default_rng(3).uniform(-1, 1, M * D)
    names = {"M": M, "D": D, "base": 10000.0}
    full = _ref("rope", {"input": v}, names)["output"]
    idx = _sample(M * D, 200, 5)
    assert np.array_equal(_ref("rope", {"input": v}, names, sample={"output": idx})["output"], full[idx])


@pytest.mark.parametrize("M, D", [(128, 16384), (1024, 512)])
def test_rope_fp32_tolerance_covers_the_fp32_angle_error_with_margin(M, D):
    # FP32 emulation of the baseline (correctly rounded powf/cos/sin, FP32 products) at the largest
    # paper M and the largest M of our sizes; the atol grows with M.
    f32 = np.float32
    x, names = _dataset("rope", "fp32", {"M": M, "D": D}, 1)
    theta = np.power(10000.0, ((f32(-2.0) * np.arange(D // 2, dtype=f32)) / f32(D)).astype(np.float64)).astype(f32)
    angle = np.arange(M, dtype=f32)[:, None] * theta[None, :]
    cos, sin = np.cos(angle.astype(np.float64)).astype(f32), np.sin(angle.astype(np.float64)).astype(f32)
    pairs = x["input"].astype(f32).reshape(M, D // 2, 2)
    got = np.stack([pairs[..., 0] * cos - pairs[..., 1] * sin, pairs[..., 0] * sin + pairs[..., 1] * cos], -1)
    ref = _ref("rope", x, names)["output"]
    tol = _tol("rope", "fp32", "output", {"M": M, "D": D})
    err = np.abs(got.reshape(-1).astype(np.float64) - ref)
    assert err.max() < 0.2 * tol.atol
    assert tol.atol < 2e-4 if M <= 128 else tol.atol < 2e-3  # still far below a bf16-level error


# -- stencil_3d ----------------------------------------------------------------------------------------


def _stencil_3d(u: np.ndarray, dims: tuple[int, int, int], sample: dict | None = None) -> np.ndarray:
    nx, ny, nz = dims
    return _ref("stencil_3d", {"u_old": u.reshape(-1)}, {"nx": nx, "ny": ny, "nz": nz, "r": 0.25}, sample=sample)["u_new"]


def test_stencil_3d_by_hand():
    # 3 x 3 x 3 zeros with the centre 1 and the boundary cell u[0,1,1] = 2 (r = 0.25):
    #   the only interior cell (1,1,1): 1 + 0.25 * (2 [i-1] + 0 * 5 - 6 * 1) = 1 + 0.25 * (-4) = 0;
    #   the boundary is copied (u[0,1,1] stays 2, the rest 0).
    u = np.zeros((3, 3, 3))
    u[1, 1, 1], u[0, 1, 1] = 1.0, 2.0
    out = _stencil_3d(u, (3, 3, 3)).reshape(3, 3, 3)
    expected = np.zeros((3, 3, 3))
    expected[0, 1, 1] = 2.0
    assert np.array_equal(out, expected)


def test_stencil_3d_quadratic_field_pins_the_axes():
    # u = i^2 + 2 j^2 + 3 k^2 on 4 x 5 x 6 (i slowest, k fastest): the 7-point Laplacian is 2 + 4 + 6 = 12
    # everywhere, so interior cells become u + 0.25 * 12 = u + 3; boundary cells are unchanged.
    # A transposed layout would see other extents and put the +3 on other cells.
    i, j, k = np.meshgrid(np.arange(4), np.arange(5), np.arange(6), indexing="ij")
    u = (i**2 + 2 * j**2 + 3 * k**2).astype(np.float64)
    out = _stencil_3d(u, (4, 5, 6)).reshape(4, 5, 6)
    expected = u.copy()
    expected[1:3, 1:4, 1:5] += 3.0
    assert np.array_equal(out, expected)


def test_stencil_3d_matches_a_loop():
    nx, ny, nz = 4, 6, 5
    u = np.random.default_rng(8).uniform(-1, 1, nx * ny * nz)
    expected = u.copy()
    at = lambda a, b, c: u[(a * ny + b) * nz + c]  # noqa: E731
    for a in range(1, nx - 1):
        for b in range(1, ny - 1):
            for c in range(1, nz - 1):
                s = at(a - 1, b, c) + at(a + 1, b, c) + at(a, b - 1, c) + at(a, b + 1, c) + at(a, b, c - 1) + at(a, b, c + 1)
                expected[(a * ny + b) * nz + c] = at(a, b, c) + 0.25 * (s - 6 * at(a, b, c))
    np.testing.assert_allclose(_stencil_3d(u, (nx, ny, nz)), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dims", [(1, 1, 1), (2, 5, 5), (5, 2, 5), (5, 5, 2), (1, 7, 3)])
def test_stencil_3d_without_interior_copies_everything(dims):
    u = np.arange(math.prod(dims), dtype=np.float64) - 3.5
    assert np.array_equal(_stencil_3d(u, dims), u)


def test_stencil_3d_sampled_equals_full():
    dims = (9, 11, 13)
    n = math.prod(dims)
    u = np.random.default_rng(11).uniform(-1, 1, n)
    idx = _sample(n, 600, 12)
    assert np.array_equal(_stencil_3d(u, dims, sample={"u_new": idx}), _stencil_3d(u, dims)[idx])


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_stencil_3d_check_covers_the_boundary(precision):
    # The published check was vacuous; ours compares every cell: an output that skips the boundary
    # (left as poison, or zero) fails, and so does a plain copy of u_old.
    from bench_tasks.compare import compare

    params = {"nx": 64, "ny": 64, "nz": 64}
    x, names = _dataset("stencil_3d", precision, params, 1)
    ref = _ref("stencil_3d", x, names, precision)["u_new"]
    tol = _tol("stencil_3d", precision, "u_new", params)
    assert compare("u_new", ref, ref, tol).passed
    boundary = np.ones((64, 64, 64), dtype=bool)
    boundary[1:-1, 1:-1, 1:-1] = False
    for fill in (np.nan, 0.0):
        interior_only = np.where(boundary.reshape(-1), fill, ref)
        assert not compare("u_new", interior_only, ref, tol).passed
    one_face = ref.copy().reshape(64, 64, 64)
    one_face[:, :, -1] = 0.0  # the k = nz-1 face only
    assert not compare("u_new", one_face.reshape(-1), ref, tol).passed
    assert not compare("u_new", x["u_old"], ref, tol).passed


# -- shared: bf16 rounding for emulations of the BF16 baselines ----------------------------------------


def _bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to bf16 (nearest even), back in float32: what __float2bfloat16 stores."""
    return data.from_bf16_bits(data.to_bf16_bits(np.asarray(a, dtype=np.float32)))


# -- softmax_attention ---------------------------------------------------------------------------------


def _attention_names(q: int, kv: int, dqk: int, dv: int) -> dict:
    return {"q_seq_len": q, "kv_seq_len": kv, "dim_qk": dqk, "dim_v": dv}


def test_softmax_attention_by_hand_scale_and_layouts():
    # q = 1, kv = 2, dqk = 4 (scale 1/2), dv = 2. Q = [1, 0, 0, 0]; K rows [0,0,0,0] and [2 ln 3, 0,0,0]
    # -> scores [0, ln 3] -> weights [1/4, 3/4]. V = [[1, 2], [3, 4]] (row-major [kv][dv])
    # -> Y = [1/4 + 9/4, 2/4 + 12/4] = [2.5, 3.5].
    x = {"Q": [1, 0, 0, 0], "K": [0, 0, 0, 0, 2 * math.log(3), 0, 0, 0], "V": [1, 2, 3, 4]}
    y = _ref("softmax_attention", x, _attention_names(1, 2, 4, 2))["Y"]
    np.testing.assert_allclose(y, [2.5, 3.5], rtol=1e-14)


def test_softmax_attention_matches_a_loop():
    q, kv, dqk, dv = 3, 4, 5, 2
    rng = np.random.default_rng(6)
    Q, K, V = rng.normal(0, 2, q * dqk), rng.normal(0, 2, kv * dqk), rng.uniform(-1, 1, kv * dv)
    expected = []
    for i in range(q):
        s = [sum(Q[i * dqk + k] * K[j * dqk + k] for k in range(dqk)) / math.sqrt(dqk) for j in range(kv)]
        w = [math.exp(v) for v in s]
        for e in range(dv):
            expected.append(sum(w[j] * V[j * dv + e] for j in range(kv)) / sum(w))
    y = _ref("softmax_attention", {"Q": Q, "K": K, "V": V}, _attention_names(q, kv, dqk, dv))["Y"]
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-14)


def test_softmax_attention_large_scores_do_not_overflow():
    # scores +-1000: a plain exp would overflow; the log-sum-exp form puts all weight on key 1
    x = {"Q": [1.0], "K": [-1000.0, 1000.0, 0.0], "V": [5.0, 7.0, 9.0]}
    y = _ref("softmax_attention", x, _attention_names(1, 3, 1, 1))["Y"]
    assert y.tolist() == [7.0]


def test_softmax_attention_sampled_equals_full():
    q, kv, dqk, dv = 37, 19, 8, 11
    rng = np.random.default_rng(9)
    x = {"Q": rng.uniform(-1, 1, q * dqk), "K": rng.uniform(-1, 1, kv * dqk), "V": rng.uniform(-1, 1, kv * dv)}
    names = _attention_names(q, kv, dqk, dv)
    idx = _sample(q * dv, 60, 10)
    np.testing.assert_allclose(
        _ref("softmax_attention", x, names, sample={"Y": idx})["Y"], _ref("softmax_attention", x, names)["Y"][idx], rtol=1e-13, atol=1e-15
    )


def _softmax_attention_bf16_baseline(x: dict, q: int, kv: int, dqk: int, dv: int) -> np.ndarray:
    """The BF16 baseline's arithmetic in numpy: bf16 S, bf16 exp, bf16 P, FP32 sums, bf16 Y."""
    f32 = np.float32
    Q, K, V = (x[n].astype(f32).reshape(r, c) for n, r, c in (("Q", q, dqk), ("K", kv, dqk), ("V", kv, dv)))
    S = _bf16((Q @ K.T) * (f32(1) / np.sqrt(f32(dqk))))
    E = np.exp(S - S.max(axis=1, keepdims=True))
    P = _bf16(_bf16(E) * (f32(1) / E.sum(axis=1, keepdims=True, dtype=f32)))
    return _bf16(P @ V).astype(np.float64).reshape(-1)


@pytest.mark.parametrize("index", [0, 1, 4, 5])
def test_softmax_attention_bf16_tolerance_covers_the_baselines_bf16_intermediates(index):
    from bench_tasks.compare import compare

    task = load_task("softmax_attention")
    params = task.size_list("paper")[index]
    x, names = _dataset("softmax_attention", "bf16", params, 2)
    ref = _ref("softmax_attention", x, names, "bf16")["Y"]
    got = _softmax_attention_bf16_baseline(x, *(params[k] for k in ("q_seq_len", "kv_seq_len", "dim_qk", "dim_v")))
    tol = _tol("softmax_attention", "bf16", "Y", params)
    assert compare("Y", got, ref, tol).passed
    # with margin: the excess over rtol*|ref| stays under half of atol
    assert (np.abs(got - ref) - tol.rtol * np.abs(ref)).max() < 0.5 * tol.atol


# -- triangle_attention --------------------------------------------------------------------------------

_HALF_UP = float(np.nextafter(np.float32(0.5), np.float32(1.0)))


def _tri(x: dict, B: int, H: int, S: int, D: int, sample: dict | None = None) -> np.ndarray:
    return _ref("triangle_attention", x, {"B": B, "H": H, "S": S, "D": D}, sample=sample)["output"]


def _tri_loop(x: dict, B: int, H: int, S: int, D: int, masked=lambda m: m > 0.5) -> np.ndarray:
    """Plain loops with math.exp: the spec's three passes (max, sum, weighted sum) per output element."""
    q, k, v, mask = (np.asarray(x[n], dtype=np.float64) for n in ("query", "key", "value", "attention_mask"))
    out = np.zeros(B * H * S * D)
    for b in range(B):
        for h in range(H):
            for i in range(S):
                for d in range(D):
                    at = lambda j, b=b, h=h, d=d: ((b * H + h) * S + j) * D + d  # noqa: E731
                    keys = [j for j in range(i + 1) if not masked(mask[(b * S + i) * S + j])]
                    if not keys:
                        continue
                    s = {j: q[at(i)] * k[at(j)] / math.sqrt(D) for j in keys}
                    top = max(s.values())
                    total = sum(math.exp(s[j] - top) for j in keys)
                    out[at(i)] = sum(math.exp(s[j] - top) / total * v[at(j)] for j in keys)
    return out


def test_triangle_attention_by_hand():
    # B = H = 1, S = 3, D = 1 (scale 1): k = [0, 1, 2], v = [10, 20, 30], q = [5, ln 3, ln(2)/2].
    #   i = 0: key 0 only -> 10.
    #   i = 1: scores [0, ln 3] -> weights [1/4, 3/4] -> 2.5 + 15 = 17.5.
    #   i = 2: key 1 masked (1.0); scores of keys 0, 2: [0, ln 2] -> weights [1/3, 2/3] -> 10/3 + 20.
    # The upper triangle holds 1.0 (masked), as published.
    mask = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    x = {"query": [5.0, math.log(3), math.log(2) / 2], "key": [0.0, 1.0, 2.0], "value": [10.0, 20.0, 30.0], "attention_mask": mask}
    np.testing.assert_allclose(_tri(x, 1, 1, 3, 1), [10.0, 17.5, 10 / 3 + 20], rtol=1e-14)


def test_triangle_attention_by_hand_per_feature_scale_threshold_and_fully_masked_row():
    # B = H = 1, S = 2, D = 4 (scale 1/2). Row 0: mask 0.50000006 > 0.5 -> fully masked -> 0 everywhere.
    # Row 1: key 0 has mask exactly 0.5 (NOT masked), key 1 has 0. Feature d only sees q[1,d]*k[j,d]/2:
    #   d = 0: q = 2, k = [0, ln 4] -> scores [0, ln 4] -> weights [1/5, 4/5], v = [1, 6] -> 0.2 + 4.8 = 5;
    #   d = 1: q = 0 -> equal weights -> mean of v = (3 + 5)/2 = 4;
    #   d = 2, 3: k equal for both keys -> equal weights -> means (0 + 2)/2 = 1 and (-1 - 3)/2 = -2.
    mask = [_HALF_UP, 1.0, 0.5, 0.0]
    q = [9.0, 9.0, 9.0, 9.0, 2.0, 0.0, 7.0, -3.0]
    k = [0.0, 1.0, 0.3, 0.3, math.log(4), 2.0, 0.3, 0.3]
    v = [1.0, 3.0, 0.0, -1.0, 6.0, 5.0, 2.0, -3.0]
    x = {"query": q, "key": k, "value": v, "attention_mask": mask}
    np.testing.assert_allclose(_tri(x, 1, 1, 2, 4), [0, 0, 0, 0, 5.0, 4.0, 1.0, -2.0], rtol=1e-14, atol=1e-15)


def test_triangle_attention_matches_a_loop_with_masks_across_the_threshold():
    B, H, S, D = 2, 2, 5, 3
    rng = np.random.default_rng(13)
    x = {n: rng.normal(0, 3, B * H * S * D) for n in ("query", "key", "value")}
    x["attention_mask"] = rng.choice([0.0, 0.25, 0.5, _HALF_UP, 0.75, 1.0], B * S * S)
    expected = _tri_loop(x, B, H, S, D)
    np.testing.assert_allclose(_tri(x, B, H, S, D), expected, rtol=1e-12, atol=1e-14)
    assert np.count_nonzero(expected == 0.0) > 0  # some rows are fully masked in this draw


def test_triangle_attention_upper_triangle_is_never_read():
    B, H, S, D = 1, 2, 6, 2
    rng = np.random.default_rng(14)
    x = {n: rng.uniform(-1, 1, B * H * S * D) for n in ("query", "key", "value")}
    x["attention_mask"] = np.zeros(S * S)
    causal = _tri(x, B, H, S, D)
    x["attention_mask"] = np.triu(np.ones((S, S)), 1).reshape(-1)
    assert np.array_equal(_tri(x, B, H, S, D), causal)


def test_triangle_attention_large_scores_use_the_log_sum_exp_form():
    # q*k = +-2000: exp would overflow without the max shift; all weight on key 1 for row 1
    x = {"query": [1.0, 2000.0], "key": [-1.0, 1.0], "value": [3.0, 4.0], "attention_mask": [0.0, 1.0, 0.0, 0.0]}
    assert _tri(x, 1, 1, 2, 1).tolist() == [3.0, 4.0]


@pytest.mark.parametrize("S, D, masked_rows", [(1, 1, 0), (3, 5, 1), (64, 128, 2), (257, 1, 5), (100, 7, 0)])
def test_triangle_attention_power_series_equals_the_exponentials_on_the_same_heads(S, D, masked_rows):
    """Heads with small scores (the task's draws) are computed as a power series of matrix products; the direct
    computation (one exponential per score) gives the same outputs on the same heads, fully masked rows included."""
    ref = load_task("triangle_attention").reference_module
    rng = np.random.default_rng(S * 1000 + D)
    q, k, v = (rng.uniform(-1, 1, (S, D)) for _ in range(3))
    q /= math.sqrt(D)
    mask = ref.generate(rng, {"B": 1, "S": S}, "fp32")["attention_mask"][0]
    mask[rng.choice(S, masked_rows, replace=False)] = 1.0
    valid = (mask <= 0.5) & np.tril(np.ones((S, S), dtype=bool))
    assert np.abs(q).max() * np.abs(k).max() <= ref._SERIES_BOUND
    series = ref._head_by_series(q, k, v, valid.astype(np.float64))
    direct = ref._head_direct(q, k, v, valid)
    np.testing.assert_allclose(series, direct, rtol=1e-12, atol=1e-15)
    assert (series[~valid.any(axis=1)] == 0.0).all()


def test_triangle_attention_takes_the_series_only_for_finite_small_scores(monkeypatch):
    ref = load_task("triangle_attention").reference_module
    taken = []
    monkeypatch.setattr(ref, "_head_by_series", lambda *a: taken.append("series") or np.zeros(a[0].shape))
    monkeypatch.setattr(ref, "_head_direct", lambda *a: taken.append("direct") or np.zeros(a[0].shape))
    valid = np.ones((2, 2), dtype=bool)
    small, large = np.full((2, 3), 0.5), np.full((2, 3), 3.0)
    for q, k, v in [(small, small, small), (large, small, small), (small, small, np.full((2, 3), np.inf)), (small * np.nan, small, small)]:
        ref._head(q, k, v, valid)
    assert taken == ["series", "direct", "direct", "direct"]
    # the series is cut where its next term falls below _SERIES_CUT
    for bound in (0.01, 0.0884, 0.5, 1.0):
        n = ref._series_terms(bound)
        assert bound**n / math.factorial(n) < ref._SERIES_CUT <= bound ** (n - 1) / math.factorial(n - 1)


def test_triangle_attention_sampled_equals_full():
    B, H, S, D = 2, 3, 9, 5
    rng = np.random.default_rng(15)
    variant = load_task("triangle_attention").variant("fp32")
    x = {n: rng.uniform(-1, 1, B * H * S * D) for n in ("query", "key", "value")}
    x["attention_mask"] = variant.task.reference_module.generate(rng, {"B": B, "S": S}, "fp32")["attention_mask"]
    idx = _sample(B * H * S * D, 150, 16)
    np.testing.assert_allclose(_tri(x, B, H, S, D, sample={"output": idx}), _tri(x, B, H, S, D)[idx], rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize(
    "params", [{"B": 1, "H": 1, "S": 1, "D": 1}, {"B": 4, "H": 8, "S": 32, "D": 128}, {"B": 2, "H": 16, "S": 256, "D": 256}]
)
def test_triangle_attention_mask_generator_invariants(params):
    B, S = params["B"], params["S"]
    x, _ = _dataset("triangle_attention", "bf16", params, 3)
    stored = data.generate(load_task("triangle_attention").variant("bf16"), params, 3)
    assert stored["attention_mask"].dtype == np.float32  # float in both precisions
    mask = x["attention_mask"].reshape(B, S, S)
    assert mask.min() >= 0.0 and mask.max() <= 1.0
    upper = np.triu(np.ones((S, S), dtype=bool), 1)
    assert np.all(mask[:, upper] > 0.5)  # j > i masked, as published
    lower = ~upper
    masked = mask > 0.5
    for b in range(B):
        full_rows = [i for i in range(S) if masked[b, i, : i + 1].all()]
        assert len(full_rows) >= 1  # at least one fully masked row per batch
    if S >= 32:
        share = masked[:, lower].mean()
        assert 0.10 < share < 0.25  # ~10 % random + the fully masked rows
        assert np.any(mask[:, lower] == 0.5) and np.any(mask[:, lower] == _HALF_UP)  # both sides of the threshold


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_triangle_attention_mask_traps_fail(precision):
    # Wrong mask rules (>= 0.5, != 0, or no mask but the causal bound) and NaN for fully masked rows fail.
    from bench_tasks.compare import compare

    B, H, S, D = 4, 8, 32, 128
    x, names = _dataset("triangle_attention", precision, {"B": B, "H": H, "S": S, "D": D}, 1)
    ref = _ref("triangle_attention", x, names, precision)["output"]
    tol = _tol("triangle_attention", precision, "output", {"B": B, "H": H, "S": S, "D": D})
    for wrong in (lambda m: m >= 0.5, lambda m: m != 0.0, lambda m: np.zeros_like(m, dtype=bool)):
        y = dict(x, attention_mask=np.where(wrong(x["attention_mask"]), 1.0, 0.0))
        assert not compare("output", _ref("triangle_attention", y, names, precision)["output"], ref, tol).passed
    nan_rows = np.where(ref == 0.0, np.nan, ref)
    assert not compare("output", nan_rows, ref, tol).passed


def test_triangle_attention_fp32_tolerance_covers_an_emulated_baseline():
    # The FP32 baseline's arithmetic (FP32 scores, expf, sequential sums) on the smallest paper size.
    f32 = np.float32
    B, H, S, D = 4, 8, 32, 128
    x, names = _dataset("triangle_attention", "fp32", {"B": B, "H": H, "S": S, "D": D}, 2)
    q, k, v = (x[n].astype(f32).reshape(B * H, S, D) for n in ("query", "key", "value"))
    mask = x["attention_mask"].astype(f32).reshape(B, S, S)
    got = np.zeros((B * H, S, D), dtype=f32)
    for bh in range(B * H):
        for i in range(S):
            ok = ~(mask[bh // H, i, : i + 1] > 0.5)
            if ok.any():
                s = q[bh, i][None, :] * k[bh, : i + 1] / np.sqrt(f32(D))
                e = np.exp(s - np.where(ok[:, None], s, -np.finfo(f32).max).max(axis=0)) * ok[:, None]
                got[bh, i] = np.cumsum(e / np.cumsum(e, axis=0, dtype=f32)[-1] * v[bh, : i + 1], axis=0, dtype=f32)[-1]
    ref = _ref("triangle_attention", x, names)["output"]
    tol = _tol("triangle_attention", "fp32", "output", {"B": B, "H": H, "S": S, "D": D})
    assert (np.abs(got.reshape(-1) - ref) - tol.rtol * np.abs(ref)).max() < 0.2 * tol.atol


# -- merge_attn_states ---------------------------------------------------------------------------------

FLT_MAX = float(np.finfo(np.float32).max)


def _merge_names(T: int, H: int, S: int) -> dict:
    return {"num_tokens": T, "num_heads": H, "head_size": S}


def _merge_loop(x: dict, T: int, H: int, S: int) -> tuple[np.ndarray, np.ndarray]:
    v_out, lse_out = np.empty(T * H * S), np.empty(H * T)
    for t in range(T):
        for h in range(H):
            pa, pb = x["lse_a"][h * T + t], x["lse_b"][h * T + t]
            pa = -FLT_MAX if math.isinf(pa) else pa
            pb = -FLT_MAX if math.isinf(pb) else pb
            m = max(pa, pb)
            ea, eb = math.exp(pa - m), math.exp(pb - m)
            lse_out[h * T + t] = math.log(ea + eb) + m
            for e in range(S):
                i = (t * H + h) * S + e
                v_out[i] = x["V_a"][i] * ea / (ea + eb) + x["V_b"][i] * eb / (ea + eb)
    return v_out, lse_out


def test_merge_attn_states_by_hand():
    # lse_a = 0, lse_b = ln 3: m = ln 3, weights 1/4 and 3/4. V_a = [4, 8], V_b = [0, 4]
    # -> V_out = [1 + 0, 2 + 3] = [1, 5]; LSE_out = ln(1/3 + 1) + ln 3 = ln 4.
    x = {"V_a": [4.0, 8.0], "lse_a": [0.0], "V_b": [0.0, 4.0], "lse_b": [math.log(3)]}
    out = _ref("merge_attn_states", x, _merge_names(1, 1, 2))
    np.testing.assert_allclose(out["V_out"], [1.0, 5.0], rtol=1e-15)
    assert out["LSE_out"][0] == pytest.approx(math.log(4), rel=1e-15)


def test_merge_attn_states_infinite_lse_is_an_empty_state():
    # 4 (t, h) pairs, S = 1 (T = 4, H = 1): lse_a / lse_b = (+inf, 0.5), (-inf, 0.5), (0.25, +inf), (+inf, -inf).
    # An infinite lse of either sign becomes -FLT_MAX: the other state is taken as is; two empty states
    # average V and give log 2 - FLT_MAX = -FLT_MAX.
    inf = math.inf
    x = {"V_a": [1.0, 2.0, 3.0, 4.0], "lse_a": [inf, -inf, 0.25, inf], "V_b": [-1.0, -2.0, -3.0, 6.0], "lse_b": [0.5, 0.5, inf, -inf]}
    out = _ref("merge_attn_states", x, _merge_names(4, 1, 1))
    assert out["V_out"].tolist() == [-1.0, -2.0, 3.0, 5.0]
    assert out["LSE_out"].tolist() == [0.5, 0.5, 0.25, -FLT_MAX]


def test_merge_attn_states_matches_a_loop_with_head_major_lse():
    T, H, S = 3, 4, 5
    rng = np.random.default_rng(17)
    x = {
        "V_a": rng.uniform(-1, 1, T * H * S),
        "V_b": rng.uniform(-1, 1, T * H * S),
        "lse_a": rng.choice([-math.inf, math.inf, -3.0, 0.5, 7.0], H * T),
        "lse_b": rng.normal(0, 4, H * T),
    }
    x["lse_b"][[1, 6]] = [math.inf, -math.inf]
    v, lse = _merge_loop(x, T, H, S)
    out = _ref("merge_attn_states", x, _merge_names(T, H, S))
    np.testing.assert_allclose(out["V_out"], v, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out["LSE_out"], lse, rtol=1e-14, atol=1e-15)


def test_merge_attn_states_sampled_equals_full():
    T, H, S = 7, 3, 5
    x, _ = _dataset("merge_attn_states", "fp32", _merge_names(T, H, S), 4)
    names = _merge_names(T, H, S)
    full = _ref("merge_attn_states", x, names)
    sample = {"V_out": _sample(T * H * S, 40, 1), "LSE_out": _sample(H * T, 8, 2)}
    part = _ref("merge_attn_states", x, names, sample=sample)
    for o in ("V_out", "LSE_out"):
        assert np.array_equal(part[o], full[o][sample[o]])


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_merge_attn_states_generator_puts_infinities_on_each_side_and_both(precision):
    params = {"num_tokens": 512, "num_heads": 32, "head_size": 128}
    x, _ = _dataset("merge_attn_states", precision, params, 1)
    a, b = x["lse_a"], x["lse_b"]
    assert a.size == b.size == 512 * 32
    finite = np.isfinite(a) & np.isfinite(b)
    assert 0.65 < finite.mean() < 0.75 and np.abs(a[np.isfinite(a)]).max() <= 1.0
    for sa in (math.inf, -math.inf):
        assert 0.03 < np.mean((a == sa) & np.isfinite(b)) < 0.07
        assert 0.03 < np.mean((b == sa) & np.isfinite(a)) < 0.07
        for sb in (math.inf, -math.inf):
            assert 0.015 < np.mean((a == sa) & (b == sb)) < 0.035


def _merge_case(precision: str, seed: int = 1) -> tuple:
    from bench_tasks.compare import check_outputs

    variant = load_task("merge_attn_states").variant(precision)
    params = {"num_tokens": 512, "num_heads": 32, "head_size": 128}
    x, names = _dataset("merge_attn_states", precision, params, seed)
    ref = _ref("merge_attn_states", x, names, precision)
    dtype = "bfloat16" if precision == "bf16" else "float32"
    rounded = {k: data.to_float64(data.to_storage(v, dtype), dtype) for k, v in ref.items()}

    def passes(got: dict) -> bool:
        return all(c.passed for c in check_outputs(variant, got, ref, x, names))

    return x, names, ref, rounded, passes


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_merge_attn_states_check_accepts_the_stored_empty_state_lse(precision):
    _x, _, ref, rounded, passes = _merge_case(precision)
    empty = ref["LSE_out"] == -FLT_MAX
    assert empty.sum() > 0.08 * empty.size  # ~10 % of (t, h) merge two empty states
    # FP32 stores -FLT_MAX exactly; bf16 rounds it to -inf: both are the published result
    assert np.all(rounded["LSE_out"][empty] == (-math.inf if precision == "bf16" else -FLT_MAX))
    assert passes(rounded)
    assert passes(dict(rounded, LSE_out=np.where(empty, -math.inf, rounded["LSE_out"])))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_merge_attn_states_check_rejects_wrong_infinity_handling(precision):
    x, _names, ref, rounded, passes = _merge_case(precision)
    empty = ref["LSE_out"] == -FLT_MAX
    for wrong in (np.nan, 0.0, -1e30, math.inf):  # at the empty states only
        assert not passes(dict(rounded, LSE_out=np.where(empty, wrong, rounded["LSE_out"])))
    # +inf taken as "dominant" (the textbook merge) instead of empty: V_out = V_a where lse_a = +inf
    T, H, S = 512, 32, 128
    a_plus = np.repeat((x["lse_a"] == math.inf).reshape(H, T).T[:, :, None], S, axis=2).reshape(-1)
    textbook = np.where(a_plus & (x["lse_b"].reshape(H, T).T.repeat(S).reshape(-1) != math.inf), x["V_a"], rounded["V_out"])
    assert not passes(dict(rounded, V_out=textbook))


# -- FFT -----------------------------------------------------------------------------------------------


def _fft(re, im, precision: str = "fp32") -> tuple[np.ndarray, np.ndarray]:
    out = _ref("FFT", {"input_real": re, "input_img": im}, {"N": len(re)}, precision)
    return out["output_real"], out["output_img"]


def test_fft_by_hand_forward_unnormalised_natural_order():
    # N = 4. A unit impulse at n = 0 -> X = [1, 1, 1, 1]. At n = 1: X[k] = e^(-2 pi i k/4) = [1, -i, -1, i]
    # (the forward sign, no 1/N, natural order). The constant 1 + i -> X = [4 + 4i, 0, 0, 0].
    re, im = _fft([1.0, 0, 0, 0], [0.0, 0, 0, 0])
    assert np.allclose(re, [1, 1, 1, 1], atol=1e-15) and np.allclose(im, 0, atol=1e-15)
    re, im = _fft([0.0, 1, 0, 0], [0.0, 0, 0, 0])
    assert np.allclose(re, [1, 0, -1, 0], atol=1e-15) and np.allclose(im, [0, -1, 0, 1], atol=1e-15)
    re, im = _fft([1.0] * 4, [1.0] * 4)
    assert np.allclose(re, [4, 0, 0, 0], atol=1e-15) and np.allclose(im, [4, 0, 0, 0], atol=1e-15)


@pytest.mark.parametrize("N", [1, 2, 4, 8, 16, 64, 256])
def test_fft_matches_a_naive_dft(N):
    rng = np.random.default_rng(N)
    re, im = rng.uniform(-1, 1, N), rng.uniform(-1, 1, N)
    n = np.arange(N)
    dft = np.exp(-2j * np.pi * np.outer(n, n) / N) @ (re + 1j * im)  # O(N^2) sum, no FFT
    got_re, got_im = _fft(re, im)
    np.testing.assert_allclose(got_re, dft.real, atol=1e-12 * N)
    np.testing.assert_allclose(got_im, dft.imag, atol=1e-12 * N)


def test_fft_pointer_kinds_are_host_in_fp32_and_device_in_bf16():
    task = load_task("FFT")
    for name in ("input_real", "input_img", "output_real", "output_img"):
        assert task.arg(name).memory_for("fp32") == "host"
        assert task.arg(name).memory_for("bf16") == "device"


def _fft_baseline(re: np.ndarray, im: np.ndarray, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """The baseline's arithmetic in numpy: bit reversal, then radix-2 stages in FP32 with float twiddles
    from double (BF16: bf16 twiddles and the data rounded to bf16 after every stage)."""
    f32 = np.float32
    N = re.size
    L = N.bit_length() - 1
    rnd = _bf16 if precision == "bf16" else (lambda a: np.asarray(a, dtype=f32))
    t = np.arange(N // 2)
    wr, wi = rnd(np.cos(-2 * np.pi * t / N).astype(f32)), rnd(np.sin(-2 * np.pi * t / N).astype(f32))
    i = np.arange(N)
    rev = np.zeros(N, dtype=np.int64)
    for b in range(L):
        rev |= ((i >> b) & 1) << (L - 1 - b)
    ar, ai = re.astype(f32)[rev], im.astype(f32)[rev]
    for s in range(1, L + 1):
        h = 1 << (s - 1)
        ar, ai = ar.reshape(-1, 2 * h), ai.reshape(-1, 2 * h)
        w_r, w_i = wr[np.arange(h) * (N >> s)], wi[np.arange(h) * (N >> s)]
        yr = w_r * ar[:, h:] - w_i * ai[:, h:]
        yi = w_r * ai[:, h:] + w_i * ar[:, h:]
        ar = rnd(np.concatenate([ar[:, :h] + yr, ar[:, :h] - yr], axis=1)).reshape(-1)
        ai = rnd(np.concatenate([ai[:, :h] + yi, ai[:, :h] - yi], axis=1)).reshape(-1)
    return ar.astype(np.float64), ai.astype(np.float64)


def _fft_limit(precision: str, N: int, ref: np.ndarray) -> np.ndarray:
    tol = _tol("FFT", precision, "output_real", {"N": N})
    assert tol.scale == "max_abs"
    return tol.atol * np.abs(ref).max() + tol.rtol * np.abs(ref)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("N", [4, 16, 1024, 2048, 4096, 8192, 16384])
def test_fft_tolerance_covers_the_emulated_baseline_with_margin(precision, N):
    # Every paper size (and two small ones), seeds 1-3: the baseline's error uses < half of the limit.
    for seed in (1, 2, 3):
        x, names = _dataset("FFT", precision, {"N": N}, seed)
        ref = _ref("FFT", x, names, precision)
        got = _fft_baseline(x["input_real"], x["input_img"], precision)
        for g, name in zip(got, ("output_real", "output_img"), strict=True):
            r = ref[name]
            assert np.max(np.abs(g - r) / _fft_limit(precision, N, r)) < 0.5


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("N", [1024, 2048, 4096, 8192, 16384])
def test_fft_tolerance_rejects_cheats_and_classic_mistakes_at_every_paper_size(precision, N):
    from bench_tasks.compare import check_outputs

    variant = load_task("FFT").variant(precision)
    x, names = _dataset("FFT", precision, {"N": N}, 1)
    ref = _ref("FFT", x, names, precision)
    rng = np.random.default_rng(N)
    z = x["input_real"] + 1j * x["input_img"]
    spectrum = np.fft.fft(z)
    L = N.bit_length() - 1
    rev = np.array([int(format(k, f"0{L}b")[::-1], 2) for k in range(N)])
    wrong = {
        "zeros": np.zeros(N, dtype=complex),
        "constant": np.full(N, ref["output_real"].mean() + 1j * ref["output_img"].mean()),
        "nan": np.full(N, np.nan + 0j),
        "shuffled": rng.permutation(spectrum),
        "bit-reversed order": spectrum[rev],
        "inverse sign": np.fft.ifft(z) * N,
        "normalised by 1/N": spectrum / N,
        "normalised by 1/sqrt(N)": spectrum / math.sqrt(N),
        "last stage skipped": np.concatenate([np.fft.fft(z[0::2]), np.fft.fft(z[1::2])]),
    }
    for what, w in wrong.items():
        got = {"output_real": w.real.copy(), "output_img": w.imag.copy()}
        assert not all(c.passed for c in check_outputs(variant, got, ref, x, names)), what


# -- monte_carlo_int and simpson_int -------------------------------------------------------------------

PAPER_N = [16384, 65536, 262144, 1048576, 4194304]
# The emulations at 2^22 take ~5 s here.
PAPER_N_SLOW_LAST = [*PAPER_N[:-1], pytest.param(PAPER_N[-1], marks=pytest.mark.slow)]


def _scalar_case(task: str, precision: str, N: int, seed: int) -> tuple[dict, dict, float, Tolerance]:
    x, names = _dataset(task, precision, {"N": N}, seed)
    ref = float(_ref(task, x, names, precision)["result"][0])
    return x, names, ref, _tol(task, precision, "result", {"N": N})


def _stored(value: float, precision: str) -> float:
    """What a kernel stores for `value`: a float, or a bf16 (round to nearest even)."""
    if precision == "bf16":
        return float(_bf16(np.array([value], dtype=np.float32))[0])
    return float(np.float32(value))


def _passes(value: float, ref: float, tol: Tolerance) -> bool:
    from bench_tasks.compare import compare

    return compare("result", np.array([value]), np.array([ref]), tol).passed


def test_monte_carlo_int_by_hand():
    # y = [1, 2, 3, 6], a = -1, b = 3: (b - a) * mean = 4 * 3 = 12
    out = _ref("monte_carlo_int", {"y_samples": [1.0, 2.0, 3.0, 6.0]}, {"N": 4, "a": -1.0, "b": 3.0})["result"]
    assert out.tolist() == [12.0]


def test_monte_carlo_int_matches_fsum():
    y = np.random.default_rng(21).uniform(-10, 10, 1001)
    out = _ref("monte_carlo_int", {"y_samples": y}, {"N": 1001, "a": -618.5, "b": 437.25})["result"][0]
    assert out == pytest.approx(1055.75 * math.fsum(y) / 1001, rel=1e-13)


@pytest.mark.parametrize("task", ["monte_carlo_int", "simpson_int"])
def test_result_is_accumulated_in_fp32_and_overwritten_in_bf16(task):
    t = load_task(task)
    result = t.arg("result")
    assert result.role_for("fp32") == "accumulate" and result.role_for("bf16") == "output"
    assert t.variant("fp32").prototype.param("result").dtype == "float32"
    assert t.variant("bf16").prototype.param("result").dtype == "bfloat16"
    assert t.lengths({"N": 16384}, "bf16")["result"] == 1
    scalars = t.scalar_values({"N": 16384}, "fp32")
    assert (scalars["a"], scalars["b"]) == (-618.5, 437.25)


@pytest.mark.parametrize("task", ["monte_carlo_int", "simpson_int"])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_samples_are_mean_zero_in_fp32_and_positive_in_bf16(task, precision):
    x, _ = _dataset(task, precision, {"N": 65536}, 1)
    y = x["y_samples"]
    if precision == "fp32":
        assert y.min() >= -10 and y.max() <= 10 and abs(y.mean()) < 0.1
    else:
        assert y.min() >= 0 and y.max() <= 20 and abs(y.mean() - 10) < 0.1


def _mc_skipping(y: np.ndarray, a: float, b: float, keep: np.ndarray) -> float:
    """A kernel that skips the samples outside `keep` but still divides by N."""
    return (b - a) * np.sum(y[keep]) / y.size


def _skips(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    k = math.ceil(0.01 * n)
    first, last, rand = np.ones(n, bool), np.ones(n, bool), np.ones(n, bool)
    first[:k], last[n - k :] = False, False
    rand[rng.choice(n, k, replace=False)] = False
    return {"first 1 %": first, "last 1 %": last, "random 1 %": rand}


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("N", PAPER_N)
def test_monte_carlo_int_skipping_one_percent_of_the_samples_fails_on_seeds_1_to_3(precision, N):
    for seed in (1, 2, 3):
        x, names, ref, tol = _scalar_case("monte_carlo_int", precision, N, seed)
        assert _passes(_stored(ref, precision), ref, tol)
        for what, keep in _skips(N, np.random.default_rng(seed)).items():
            got = _stored(_mc_skipping(x["y_samples"], names["a"], names["b"], keep), precision)
            assert not _passes(got, ref, tol), (seed, what, got, ref)


def _atomic_float_sum(terms: np.ndarray, rng: np.random.Generator) -> np.float32:
    """float32 atomics into one address in an arbitrary (here random) order: a sequential float32 sum."""
    return np.cumsum(terms[rng.permutation(terms.size)], dtype=np.float32)[-1]


@pytest.mark.parametrize("N", PAPER_N_SLOW_LAST)
def test_monte_carlo_int_emulated_baselines_pass_with_margin(N):
    f32 = np.float32
    for seed in (1, 2, 3):
        rng = np.random.default_rng(seed)
        # FP32: (b - a) * y_i / N per sample, float atomics in arbitrary order
        x, names, ref, tol = _scalar_case("monte_carlo_int", "fp32", N, seed)
        a, b = f32(names["a"]), f32(names["b"])
        got = float(_atomic_float_sum((b - a) * x["y_samples"].astype(f32) / f32(N), rng))
        assert abs(got - ref) < 0.25 * (tol.atol + tol.rtol * abs(ref))
        # BF16: per-thread FP32 partials of a grid-stride loop (262144 threads at most), their atomics,
        # then bf16((b - a) * (sum / N))
        x, names, ref, tol = _scalar_case("monte_carlo_int", "bf16", N, seed)
        threads = min(N, 262144)
        partials = np.zeros(threads, dtype=f32)
        y = x["y_samples"].astype(f32)
        for start in range(0, N, threads):
            chunk = y[start : start + threads]
            partials[: chunk.size] += chunk
        total = _atomic_float_sum(partials, rng)
        got = _stored(float((b - a) * (total / f32(N))), "bf16")
        assert abs(got - ref) <= tol.atol + tol.rtol * abs(ref)


def _simpson(y, a: float, b: float) -> float:
    return float(_ref("simpson_int", {"y_samples": y}, {"N": len(y), "a": a, "b": b})["result"][0])


def test_simpson_int_by_hand_exact_for_a_quadratic():
    # N = 5 on [0, 4] (h = 1), y = x^2: pairs (1/3)(0 + 4*1 + 4) = 8/3 and (1/3)(4 + 4*9 + 16) = 56/3;
    # total 64/3 = the integral of x^2 over [0, 4] (Simpson is exact for cubics).
    assert _simpson([0.0, 1.0, 4.0, 9.0, 16.0], 0.0, 4.0) == pytest.approx(64 / 3, rel=1e-15)
    x = np.linspace(-1.0, 2.0, 7)  # h = 0.5, 3 pairs; integral of x^3 - x over [-1, 2] = 15/4 - 3/2 = 2.25
    assert _simpson(x**3 - x, -1.0, 2.0) == pytest.approx(2.25, rel=1e-14)


def test_simpson_int_drops_the_last_interval_for_even_n():
    # N = 4 on [0, 3] (h = 1): one full pair (1/3)(1 + 4 + 1) = 2; the interval [2, 3] (y = 100) is dropped.
    assert _simpson([1.0, 1.0, 1.0, 100.0], 0.0, 3.0) == pytest.approx(2.0, rel=1e-15)
    # N = 1 and N = 2 hold no full pair: 0.
    assert _simpson([5.0], 0.0, 1.0) == 0.0 and _simpson([5.0, 7.0], 0.0, 1.0) == 0.0


@pytest.mark.parametrize("N", [3, 10, 11])
def test_simpson_int_matches_a_loop(N):
    y = np.random.default_rng(N).uniform(-10, 10, N)
    a, b = -618.5, 437.25
    h = (b - a) / (N - 1)
    expected = math.fsum(h / 3 * (y[i] + 4 * y[i + 1] + y[i + 2]) for i in range(0, N, 2) if i + 2 < N)
    assert _simpson(y, a, b) == pytest.approx(expected, rel=1e-13)


def _simpson_skipping(y: np.ndarray, a: float, b: float, keep: np.ndarray) -> float:
    """A kernel that skips the samples outside `keep` (reads them as 0) but is otherwise right."""
    return _simpson(np.where(keep, y, 0.0), a, b)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("N", PAPER_N)
def test_simpson_int_skipping_one_percent_of_the_samples_fails_on_seeds_1_to_3(precision, N):
    for seed in (1, 2, 3):
        x, names, ref, tol = _scalar_case("simpson_int", precision, N, seed)
        assert _passes(_stored(ref, precision), ref, tol)
        for what, keep in _skips(N, np.random.default_rng(seed)).items():
            got = _stored(_simpson_skipping(x["y_samples"], names["a"], names["b"], keep), precision)
            assert not _passes(got, ref, tol), (seed, what, got, ref)


@pytest.mark.parametrize("N", PAPER_N)
def test_simpson_int_fp32_rejects_other_quadrature_rules(N):
    # With the published mean-0 samples the FP32 check pins the weights: the trapezoid rule, or Simpson
    # weights shifted by one sample, fail. (Integrating the dropped last interval as well moves the result
    # by only ~h*|y| ~ 1e-3 at 2^20: not caught, a boundary convention of 1 interval in N.)
    x, names, ref, tol = _scalar_case("simpson_int", "fp32", N, 1)
    y, h = x["y_samples"], (names["b"] - names["a"]) / (N - 1)
    trapezoid = h * (y.sum() - (y[0] + y[-1]) / 2)
    shifted = _simpson(np.roll(y, 1), names["a"], names["b"])
    for got in (trapezoid, shifted):
        assert not _passes(_stored(got, "fp32"), ref, tol)


@pytest.mark.parametrize("N", PAPER_N_SLOW_LAST)
def test_simpson_int_emulated_baselines_pass_with_margin(N):
    f32 = np.float32
    for seed in (1, 2, 3):
        rng = np.random.default_rng(seed)
        for precision in ("fp32", "bf16"):
            x, names, ref, tol = _scalar_case("simpson_int", precision, N, seed)
            y, a, b = x["y_samples"].astype(f32), f32(names["a"]), f32(names["b"])
            h = (b - a) / f32(N - 1)
            i = np.arange(0, N - 2, 2)
            terms = h / f32(3) * (y[i] + f32(4) * y[i + 1] + y[i + 2])
            if precision == "fp32":  # one thread per sample, one float atomic each (odd ones add 0)
                got = float(_atomic_float_sum(terms, rng))
                assert abs(got - ref) < 0.25 * (tol.atol + tol.rtol * abs(ref))
            else:  # per-thread partials over a 262144-thread grid-stride loop, atomics, one bf16 rounding
                threads = min(N, 262144)
                partials = np.zeros(threads, dtype=f32)
                np.add.at(partials, i % threads, terms)
                got = _stored(float(_atomic_float_sum(partials, rng)), "bf16")
                assert abs(got - ref) <= tol.atol + tol.rtol * abs(ref)


# -- all nine: shapes at the edge sizes, sampling thresholds -------------------------------------------

MY_TASKS = (
    "silu_and_mul",
    "rope",
    "merge_attn_states",
    "softmax_attention",
    "triangle_attention",
    "FFT",
    "stencil_3d",
    "monte_carlo_int",
    "simpson_int",
)


@pytest.mark.parametrize("name", MY_TASKS)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_reference_shapes_at_the_edge_sizes(name, precision):
    task = load_task(name)
    variant = task.variant(precision)
    for params in task.size_list("edge"):
        x, names = _dataset(name, precision, params, 1)
        out = task.reference_module.reference(x, names, precision, None)
        assert sorted(out) == sorted(variant.outputs())
        lengths = task.lengths(params, precision)
        for o in variant.outputs():
            r = np.asarray(out[o]).reshape(-1)
            assert r.size == lengths[o] and np.all(np.isfinite(r)), (params, o)


def test_merge_attn_states_large_sizes_are_checked_in_full():
    # A sampled check fails non-finite elements as unwritten, and BF16 LSE_out is -inf where both states
    # are empty: the large sizes must stay below the sampling thresholds.
    from settings import HarnessSettings

    settings = HarnessSettings()
    task = load_task("merge_attn_states")
    for params in task.size_list("large") + task.size_list("paper"):
        lengths = task.lengths(params, "bf16")
        assert max(lengths["V_out"], lengths["LSE_out"]) <= settings.reference_full_elements
        assert task.work(params, "bf16")[0] <= settings.reference_full_flops
