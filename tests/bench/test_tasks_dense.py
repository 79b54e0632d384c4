"""The dense-algebra tasks of issue 11 (matrix_copy ... top_k): every float64 reference against an
independent computation on small hand-made inputs (values worked out by hand, or a naive loop), the
layouts and argument orders, sampled paths against full ones, the tolerances against a numpy emulation
of the baseline's FP32 arithmetic, and each task's trap (a partial copy, a shifted scan, a tie-permuted
top_k ...). The generic checks every variant gets are in test_tasks.py."""

from __future__ import annotations


import numpy as np
import pytest

from bench_tasks import data, load_task
from bench_tasks.compare import compare
from bench_tasks.spec import Tolerance


def _ref(task: str, x: dict, names: dict, precision: str = "fp32", sample: dict | None = None) -> dict[str, np.ndarray]:
    x = {k: np.asarray(v, dtype=np.int64 if np.asarray(v).dtype.kind in "iu" else np.float64).reshape(-1) for k, v in x.items()}
    out = load_task(task).reference_module.reference(x, names, precision, sample)
    return {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in out.items()}


def _tol(task: str, precision: str) -> Tolerance:
    return load_task(task).variant(precision).tolerance


def _inputs(task: str, precision: str, params: dict, seed: int) -> tuple[dict[str, np.ndarray], dict]:
    """The seeded inputs as the kernel sees them (float64), and the names the reference gets."""
    variant = load_task(task).variant(precision)
    x = data.float64_inputs(variant, data.generate(variant, params, seed))
    return x, data.reference_names(variant, params)


def _sample(n: int, rng: np.random.Generator, k: int = 3000) -> np.ndarray:
    return np.unique(np.concatenate([rng.choice(n, size=min(n, k), replace=False), [0, n - 1]])).astype(np.int64)


def _f32(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


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
