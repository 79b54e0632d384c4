"""float64 reference and input generator for simpson_int: composite Simpson's rule over pairs of intervals
of N equally spaced samples y_i = f(a + i h), h = (b - a)/(N - 1):

    result = sum over even i with i + 2 < N of (h/3) (y_i + 4 y_{i+1} + y_{i+2}),

floor((N - 1)/2) segments: for even N the last interval [N-2, N-1] is dropped, as published. a and b
are the scalar arguments, passed in `p` as the kernel receives them (floats).

generate(): as monte_carlo_int's (the published tasks share a generator): FP32 keeps y ~ U(-10, 10);
BF16 integrates a positive integrand, y ~ U(0, 20), so that a 1 % change of the result is larger than
one bf16 rounding on every seed (with mean-0 samples the result is noise around 0).
"""

import numpy as np

SAMPLES = {"fp32": (-10.0, 10.0), "bf16": (0.0, 20.0)}


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    low, high = SAMPLES[precision]
    n = int(names["N"])
    return {"y_samples": np.float32(low) + np.float32(high - low) * rng.random(n, dtype=np.float32)}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    y = x["y_samples"]
    n = y.size
    pairs = (n - 1) // 2
    if pairs <= 0:
        return {"result": np.zeros(1)}
    h = (p["b"] - p["a"]) / (n - 1)
    left, mid, right = y[0:2 * pairs:2], y[1:2 * pairs:2], y[2:2 * pairs + 1:2]
    return {"result": np.array([h / 3.0 * np.sum(left + 4.0 * mid + right)])}
