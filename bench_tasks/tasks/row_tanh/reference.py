"""float64 reference for row_tanh: out[i] = tanh(x[i]) over the flat array (no row structure)."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"out": np.tanh(x["input"])}
