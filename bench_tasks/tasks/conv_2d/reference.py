"""float64 reference for conv_2d: the "valid" 2-D cross-correlation (no kernel flip), row-major,

    output[r, c] = sum_m sum_n input[r + m, c + n] * kernel[m, n],

output (input_rows - kernel_rows + 1) x (input_cols - kernel_cols + 1). Full: scipy.signal.correlate
in "valid" mode (which does not flip). With a sample (over 2e9 FLOPs), only the sampled outputs are
computed from gathered windows.
"""

import numpy as np
import scipy.signal

_CHUNK = 2048  # sampled outputs per vectorised step (a 16 MiB window gather at 32 x 32 taps)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    rows, cols, kr, kc = (int(p[k]) for k in ("input_rows", "input_cols", "kernel_rows", "kernel_cols"))
    image, taps = x["input"], x["kernel"]
    if sample is None or "output" not in sample:
        out = scipy.signal.correlate(image.reshape(rows, cols), taps.reshape(kr, kc), mode="valid")
        return {"output": out.reshape(-1)}
    out_cols = cols - kc + 1
    idx = np.asarray(sample["output"], dtype=np.int64)
    corner = (idx // out_cols) * cols + idx % out_cols  # input index of input[r, c]
    offsets = (np.arange(kr, dtype=np.int64)[:, None] * cols + np.arange(kc, dtype=np.int64)).reshape(-1)
    out = np.empty(idx.size, dtype=np.float64)
    for s in range(0, idx.size, _CHUNK):
        out[s:s + _CHUNK] = image[corner[s:s + _CHUNK, None] + offsets] @ taps
    return {"output": out}
