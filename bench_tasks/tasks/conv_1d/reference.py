"""float64 reference for conv_1d: the "valid" cross-correlation (no kernel flip)

    output[i] = sum_{j < kernel_size} input[i + j] * kernel[j],  0 <= i <= input_size - kernel_size.

Full: numpy's correlate in "valid" mode (which does not flip its second argument). With a sample
(large sizes), only the sampled outputs are computed from gathered windows.
"""

import numpy as np

_CHUNK = 8192  # sampled outputs per vectorised step (a 64 MiB window gather at 1024 taps)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    signal, taps = x["input"], x["kernel"]
    if sample is None or "output" not in sample:
        return {"output": np.correlate(signal, taps, mode="valid")}
    idx = np.asarray(sample["output"], dtype=np.int64)
    offsets = np.arange(taps.size, dtype=np.int64)
    out = np.empty(idx.size, dtype=np.float64)
    for s in range(0, idx.size, _CHUNK):
        window = signal[idx[s:s + _CHUNK, None] + offsets]
        out[s:s + _CHUNK] = window @ taps
    return {"output": out}
