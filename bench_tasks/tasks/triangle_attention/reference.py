"""float64 reference and input generator for triangle_attention: per-FEATURE causal attention.

q, k, v and output are [B][H][S][D]; attention_mask is float [B][S][S], shared by the heads. For each
(b, h, i, d), over the keys j <= i whose mask[b, i, j] <= 0.5 (a mask value > 0.5 masks the key):

    s_j = q[b,h,i,d] * k[b,h,j,d] / sqrt(D),  out[b,h,i,d] = sum_j exp(s_j - lse) v[b,h,j,d],
    lse = m + log sum_j exp(s_j - m)  (m = max_j s_j);

a row with no valid key gives 0. With a sample (large sizes), only the sampled outputs are computed.

A head whose scores are all small (|q[i,d] k[j,d]| / sqrt(D) <= 1, as the task's draws give: <= 0.09 at D = 128)
is computed as a power series instead of S^2 D / 2 exponentials: exp(q k) = sum_n q^n k^n / n!, so
sum_j valid[i,j] exp(q_i k_j) v_j = sum_n q_i^n / n! (valid @ (k^n v))[i] — two matrix products per term
(BLAS), cut where the next term is below 1e-17 of the first (12 terms at D = 128). Bounded scores need no max
shift (each weight lies in [1/e, e]). Any other head (larger scores, or non-finite values) takes the direct
computation. tests/bench/test_tasks_llm.py compares the two on the same heads.

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


_SERIES_BOUND = 1.0  # the largest |score| a head may have to be computed as a power series
_SERIES_CUT = 1e-17  # the series stops where the next term's bound falls below this (relative to the first)


def _series_terms(bound: float) -> int:
    """The number of terms N + 1 after which bound^(N+1) / (N+1)! < _SERIES_CUT (the remainder is within e^bound of it)."""
    n, term = 0, 1.0
    while term >= _SERIES_CUT:
        n += 1
        term *= bound / n
    return n


def _head_by_series(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """One head's outputs [S, D] (q scaled; q, k, v [S, D]; valid [S, S] as 0/1 float64), all |q k| <= _SERIES_BOUND."""
    S, D = q.shape
    terms = _series_terms(float(np.abs(q).max() * np.abs(k).max()))
    powers = np.empty((S, 2, terms, D))  # k^n v and k^n, n < terms
    powers[:, 1, 0] = 1.0
    for n in range(1, terms):
        powers[:, 1, n] = powers[:, 1, n - 1] * k
    powers[:, 0] = powers[:, 1] * v[:, None, :]
    sums = (valid @ powers.reshape(S, -1)).reshape(S, 2, terms, D)  # sums over the valid keys j <= i
    num, den = np.zeros((S, D)), np.zeros((S, D))
    coef = np.ones((S, D))  # q^n / n!
    for n in range(terms):
        if n:
            coef = coef * q / n
        num += coef * sums[:, 0, n]
        den += coef * sums[:, 1, n]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _head_direct(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """One head's outputs [S, D] (q scaled; q, k, v [S, D]; valid [S, S] bool), rows in chunks of exponentials."""
    S, D = q.shape
    out = np.empty((S, D))
    step = max(1, _CHUNK // (S * D))
    for s in range(0, S, step):
        rows = slice(s, min(S, s + step))
        J = rows.stop  # keys j <= i < rows.stop
        n = rows.stop - rows.start
        out[rows] = _rows(q[rows], np.broadcast_to(k[None, :J], (n, J, D)), np.broadcast_to(v[None, :J], (n, J, D)), valid[rows, :J])
    return out


def _head(q: np.ndarray, k: np.ndarray, v: np.ndarray, valid: np.ndarray) -> np.ndarray:
    bound = float(np.abs(q).max() * np.abs(k).max()) if q.size else 0.0
    if np.isfinite(bound) and bound <= _SERIES_BOUND and np.isfinite(v).all():
        return _head_by_series(q, k, v, valid.astype(np.float64))
    return _head_direct(q, k, v, valid)


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
    for b in range(B):
        for h in range(H):
            out[b, h] = _head(q[b, h], k[b, h], v[b, h], valid[b])
    return {"output": out.reshape(-1)}
