"""float64 reference for reverse_array: output[i] = input[N - 1 - i].

With a sample (more than 2^24 elements), only the sampled outputs are returned.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    v = x["input"]
    if sample is not None and "output" in sample:
        return {"output": v[v.size - 1 - np.asarray(sample["output"], dtype=np.int64)]}
    return {"output": v[::-1].copy()}
