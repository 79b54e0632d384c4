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


def _ref(task: str, x: dict, names: dict, precision: str = "fp32", sample: dict | None = None) -> dict[str, np.ndarray]:
    x = {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, precision, sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


def _dataset(task: str, precision: str, params: dict, seed: int) -> tuple[dict, dict]:
    """(inputs as the kernel saw them in float64, the names a reference sees) for one seeded draw."""
    variant = load_task(task).variant(precision)
    stored = data.generate(variant, params, seed)
    return data.float64_inputs(variant, stored), data.reference_names(variant, params)


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


def test_rope_fp32_tolerance_covers_the_fp32_angle_error_at_the_largest_position():
    # FP32 emulation of the baseline (correctly rounded powf/cos/sin, FP32 products) at the largest M.
    f32 = np.float32
    M, D = 1024, 512
    x, names = _dataset("rope", "fp32", {"M": M, "D": D}, 1)
    theta = np.power(10000.0, ((f32(-2.0) * np.arange(D // 2, dtype=f32)) / f32(D)).astype(np.float64)).astype(f32)
    angle = np.arange(M, dtype=f32)[:, None] * theta[None, :]
    cos, sin = np.cos(angle.astype(np.float64)).astype(f32), np.sin(angle.astype(np.float64)).astype(f32)
    pairs = x["input"].astype(f32).reshape(M, D // 2, 2)
    got = np.stack([pairs[..., 0] * cos - pairs[..., 1] * sin, pairs[..., 0] * sin + pairs[..., 1] * cos], -1)
    ref = _ref("rope", x, names)["output"]
    tol = load_task("rope").variant("fp32").tolerance
    err = np.abs(got.reshape(-1).astype(np.float64) - ref)
    assert err.max() < 0.2 * (tol.atol + tol.rtol * np.abs(ref)).min()
