"""float64 reference for vector_add."""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"C": x["A"] + x["B"]}
