"""float64 reference and input generator for cross_entropy_loss, a sum (not a mean) over C classes:

    loss = sum over i with Y[i] != 0 of -Y[i] * ln(max(X[i], 1e-8))

The clamp is the float 1e-8f the kernels use (9.99999993922529e-09). X (predicted probabilities) and Y
(target distribution) are independent U(0, 1) vectors, each normalised to sum 1 in FP32 (values
~2/C), as published; the kernel sees them as stored (FP32, or rounded to bf16).
"""

import numpy as np

MIN_PROB = float(np.float32(1e-8))


def _distribution(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n, dtype=np.float32)
    return u / u.sum(dtype=np.float32)  # float32 / float32 scalar: normalised in FP32


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    c = int(names["C"])
    x = _distribution(rng, c)
    return {"X": x, "Y": _distribution(rng, c)}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    X, Y = x["X"], x["Y"]
    nz = Y != 0.0
    loss = -np.dot(Y[nz], np.log(np.maximum(X[nz], MIN_PROB)))
    return {"loss": np.array([loss], dtype=np.float64)}
