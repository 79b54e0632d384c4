"""float64 reference and input generator for triangle_attention: per-FEATURE causal attention.

q, k, v and output are [B][H][S][D]; attention_mask is float [B][S][S], shared by the heads. For each
(b, h, i, d), over the keys j <= i whose mask[b, i, j] <= 0.5 (a mask value > 0.5 masks the key):

    s_j = q[b,h,i,d] * k[b,h,j,d] / sqrt(D),  out[b,h,i,d] = sum_j exp(s_j - lse) v[b,h,j,d],
    lse = m + log sum_j exp(s_j - m)  (m = max_j s_j);

a row with no valid key gives 0. With a sample (large sizes), only the sampled outputs are computed.

The mask (generate): 1.0 above the diagonal (j > i), as published; below and on it, about 10 % of the
entries masked at random and S // 64 + 1 rows per batch masked entirely, masked values in (0.5, 1]
(some exactly the float after 0.5) and unmasked ones in [0, 0.5] (some exactly 0.5), so that only the
> 0.5 rule reads it right.
"""

import numpy as np

_CHUNK = 1 << 16  # score elements per vectorised step (512 KiB of float64: stays in cache; one row at S*D = 2^16)
_HALF_UP = float(np.nextafter(np.float32(0.5), np.float32(1.0)))  # 0.50000006: the smallest masked float


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    B, S = int(names["B"]), int(names["S"])
    lower = np.tril(np.ones((S, S), dtype=bool))
    masked = rng.random((B, S, S)) < 0.10
    for b in range(B):
        masked[b, rng.choice(S, size=min(S, S // 64 + 1), replace=False), :] = True
    masked |= ~lower  # j > i: masked, as in the published harness (the causal bound excludes it anyway)
    value = np.where(masked, rng.uniform(0.5, 1.0, (B, S, S)), rng.uniform(0.0, 0.5, (B, S, S)))
    value = value.astype(np.float32)
    value[masked & (value <= 0.5)] = 1.0  # a draw that rounded to 0.5 must stay masked
    pick = rng.random((B, S, S))
    value[masked & (pick < 0.02)] = _HALF_UP
    value[~masked & (pick < 0.02)] = 0.5
    return {"attention_mask": value}


def _rows(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Outputs [n, D] for n query rows: q [n, D] (already scaled), k and v [n, J, D], valid [n, J]."""
    scores = np.where(valid[:, :, None], q[:, None, :] * k, -np.inf)
    m = scores.max(axis=1)
    m = np.where(np.isfinite(m), m, 0.0)
    w = np.exp(scores - m[:, None, :])
    den = w.sum(axis=1)
    num = np.einsum("njd,njd->nd", w, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    B, H, S, D = int(p["B"]), int(p["H"]), int(p["S"]), int(p["D"])
    q = x["query"].reshape(B, H, S, D) / np.sqrt(D)
    k = x["key"].reshape(B, H, S, D)
    v = x["value"].reshape(B, H, S, D)
    valid = (x["attention_mask"].reshape(B, S, S) <= 0.5) & np.tril(np.ones((S, S), dtype=bool))
    if sample is not None and "output" in sample:
        idx = np.asarray(sample["output"], dtype=np.int64)
        bh, rest = np.divmod(idx, S * D)
        i, d = np.divmod(rest, D)
        b, h = np.divmod(bh, H)
        out = np.empty(idx.size)
        step = max(1, _CHUNK // S)
        j = np.arange(S)
        for s in range(0, idx.size, step):
            sl = slice(s, s + step)
            kk = k[b[sl, None], h[sl, None], j[None, :], d[sl, None]]
            vv = v[b[sl, None], h[sl, None], j[None, :], d[sl, None]]
            qq = q[b[sl], h[sl], i[sl], d[sl]]
            out[sl] = _rows(qq[:, None], kk[:, :, None], vv[:, :, None], valid[b[sl], i[sl]])[:, 0]
        return {"output": out}
    out = np.empty((B, H, S, D))
    step = max(1, _CHUNK // (S * D))
    for b in range(B):
        for h in range(H):
            for s in range(0, S, step):
                rows = slice(s, min(S, s + step))
                J = rows.stop  # keys j <= i < rows.stop
                n = rows.stop - rows.start
                out[b, h, rows] = _rows(q[b, h, rows], np.broadcast_to(k[b, h, None, :J], (n, J, D)),
                                        np.broadcast_to(v[b, h, None, :J], (n, J, D)), valid[b, rows, :J])
    return {"output": out.reshape(-1)}
