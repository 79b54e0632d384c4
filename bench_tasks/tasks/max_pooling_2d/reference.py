"""float64 reference for max_pooling_2d over NCHW input:

    output[n, c, oh, ow] = max { input[n, c, h, w] : h in [oh*s - p, oh*s - p + k), w likewise, 0 <= h < H, 0 <= w < W }

with out_H = (H + 2p - k) // s + 1 (likewise out_W). Positions outside the image are ignored
(padding is -inf, not 0). With a sample (more than 2^24 outputs), only the sampled outputs are
computed from gathered windows.
"""

import numpy as np

_CHUNK = 65536  # sampled outputs per vectorised step


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    N, C, H, W = (int(p[k]) for k in ("N", "C", "H", "W"))
    k, s, pad = int(p["kernel_size"]), int(p["stride"]), int(p["padding"])
    oh, ow = (H + 2 * pad - k) // s + 1, (W + 2 * pad - k) // s + 1
    image = x["input"]
    if sample is None or "output" not in sample:
        padded = np.full((N * C, H + 2 * pad, W + 2 * pad), -np.inf)
        padded[:, pad:pad + H, pad:pad + W] = image.reshape(N * C, H, W)
        out = np.full((N * C, oh, ow), -np.inf)
        for i in range(k):
            for j in range(k):
                np.maximum(out, padded[:, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s], out=out)
        return {"output": out.reshape(-1)}
    idx = np.asarray(sample["output"], dtype=np.int64)
    plane, rest = idx // (oh * ow), idx % (oh * ow)
    h = (rest // ow)[:, None] * s - pad + np.repeat(np.arange(k), k)[None, :]  # (n, k*k) window rows
    w = (rest % ow)[:, None] * s - pad + np.tile(np.arange(k), k)[None, :]    # (n, k*k) window columns
    out = np.empty(idx.size, dtype=np.float64)
    for a in range(0, idx.size, _CHUNK):
        sl = slice(a, a + _CHUNK)
        inside = (h[sl] >= 0) & (h[sl] < H) & (w[sl] >= 0) & (w[sl] < W)
        flat = (plane[sl, None] * H + np.clip(h[sl], 0, H - 1)) * W + np.clip(w[sl], 0, W - 1)
        out[sl] = np.where(inside, image[flat], -np.inf).max(axis=1)
    return {"output": out}
