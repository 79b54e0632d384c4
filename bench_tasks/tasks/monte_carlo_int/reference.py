"""float64 reference and input generator for monte_carlo_int: the Monte-Carlo estimate of the integral of
f over [a, b] from N samples y_i = f(x_i) (the x_i are never passed):

    result = (b - a) * (1/N) * sum_i y_i.

a and b are the scalar arguments (task.toml args), passed in `p` as the kernel receives them (floats).

generate(): FP32 keeps the published samples, y ~ U(-10, 10). Their mean is 0, so the estimate is a
noise-sized number around 0, which FP32 can check to ~1e-3 absolute but a bf16 result (8 significant
bits) cannot: a kernel that skips 1 % of the samples moves it by a random amount that is below one
bf16 rounding on some seeds. BF16 therefore integrates a positive integrand, y ~ U(0, 20) (mean 10):
the estimate is ~10 (b - a) and skipping 1 % moves it by 1 % (2.5 bf16 roundings) on every seed.
"""

import numpy as np

SAMPLES = {"fp32": (-10.0, 10.0), "bf16": (0.0, 20.0)}


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    low, high = SAMPLES[precision]
    n = int(names["N"])
    return {"y_samples": np.float32(low) + np.float32(high - low) * rng.random(n, dtype=np.float32)}


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    y = x["y_samples"]
    return {"result": np.array([(p["b"] - p["a"]) * (np.sum(y) / y.size)])}
