"""float64 reference for hinge_loss, a per-sample loss (N outputs, not a reduction):

    y[i] = +1 if targets[i] == 1 else -1,  loss[i] = max(0, 1 - y[i] * predictions[i])

With a sample (large N), only the sampled elements are computed.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    pred, targets = x["predictions"], x["targets"]
    if sample is not None and "loss" in sample:
        idx = np.asarray(sample["loss"], dtype=np.int64)
        pred, targets = pred[idx], targets[idx]
    y = np.where(targets == 1, 1.0, -1.0)
    return {"loss": np.maximum(0.0, 1.0 - y * pred)}
