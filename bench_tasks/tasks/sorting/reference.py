"""float64 reference for sorting: data sorted ascending (in place in the kernel; role inout).

The ascending sort of a multiset is unique as a value array, ties included.
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    return {"data": np.sort(x["data"], kind="stable")}
