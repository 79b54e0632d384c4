"""float64 reference, input generator and check for merge_attn_states: the merge of two partial attention
results. V arrays are [num_tokens][num_heads][head_size] (index (t*H + h)*S + e); the log-sum-exps are
[num_heads][num_tokens] (index h*T + t). Per (t, h), as published:

    pa, pb = lse_a, lse_b with any +-inf replaced by -FLT_MAX,
    m = max(pa, pb), ea = exp(pa - m), eb = exp(pb - m), s = ea + eb,
    V_out = V_a ea/s + V_b eb/s,  LSE_out = log(s) + m.

So an infinite lse (either sign) counts as an empty partial state: the other state is taken as is, and
two empty states average their V and give LSE_out = log 2 - FLT_MAX = -FLT_MAX.

generate(): lse values U(-1, 1) as published, with infinities: per (h, t), 5 % each of lse_a = +inf,
lse_a = -inf, lse_b = +inf, lse_b = -inf, and 10 % with both infinite (the four sign pairs alike).

check(): V_out, and LSE_out where a state is non-empty, elementwise with atol + rtol; where both states
are empty the reference is -FLT_MAX, which bf16 cannot hold (__float2bfloat16(-FLT_MAX) = -inf), so there
any value <= -0.99 FLT_MAX is accepted: -FLT_MAX, the largest finite bf16 (-3.39e38) or -inf.
"""

from collections.abc import Callable

import numpy as np

from bench_tasks.compare import Comparison, compare
from bench_tasks.spec import Tolerance

FLT_MAX = float(np.finfo(np.float32).max)
EMPTY_BOUND = -0.99 * FLT_MAX


def generate(rng: np.random.Generator, names: dict, precision: str) -> dict[str, np.ndarray]:
    n = int(names["num_heads"]) * int(names["num_tokens"])
    lse_a, lse_b = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
    kind = rng.choice(9, size=n, p=[0.70, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025])
    inf = np.inf
    for k, a, b in ((1, inf, None), (2, -inf, None), (3, None, inf), (4, None, -inf),
                    (5, inf, inf), (6, inf, -inf), (7, -inf, inf), (8, -inf, -inf)):
        if a is not None:
            lse_a[kind == k] = a
        if b is not None:
            lse_b[kind == k] = b
    return {"lse_a": lse_a, "lse_b": lse_b}


def _merge(va: np.ndarray, la: np.ndarray, vb: np.ndarray, lb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pa = np.where(np.isinf(la), -FLT_MAX, la)
    pb = np.where(np.isinf(lb), -FLT_MAX, lb)
    m = np.maximum(pa, pb)
    ea, eb = np.exp(pa - m), np.exp(pb - m)
    s = ea + eb
    return va * (ea / s) + vb * (eb / s), np.log(s) + m


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    T, H, S = int(p["num_tokens"]), int(p["num_heads"]), int(p["head_size"])
    la, lb = x["lse_a"], x["lse_b"]
    if sample is None:
        v, _ = _merge(x["V_a"].reshape(T, H, S), la.reshape(H, T).T[:, :, None], x["V_b"].reshape(T, H, S), lb.reshape(H, T).T[:, :, None])
        _, lse = _merge(0.0, la, 0.0, lb)
        return {"V_out": v.reshape(-1), "LSE_out": lse}
    out = {}
    if "V_out" in sample:
        idx = np.asarray(sample["V_out"], dtype=np.int64)
        t, h = idx // (H * S), (idx // S) % H
        out["V_out"], _ = _merge(x["V_a"][idx], la[h * T + t], x["V_b"][idx], lb[h * T + t])
    if "LSE_out" in sample:
        idx = np.asarray(sample["LSE_out"], dtype=np.int64)
        _, out["LSE_out"] = _merge(0.0, la[idx], 0.0, lb[idx])
    return out


def check(got: dict[str, np.ndarray], ref: dict[str, np.ndarray], x: dict[str, np.ndarray], p: dict, precision: str,
          tolerance: Callable[[str], Tolerance]) -> list[Comparison]:
    sample = p.get("sample") or {}
    results = [compare("V_out", got["V_out"], ref["V_out"], tolerance("V_out"), sample.get("V_out"))]
    g, r = np.asarray(got["LSE_out"], dtype=np.float64), np.asarray(ref["LSE_out"], dtype=np.float64)
    index = sample.get("LSE_out")
    index = np.arange(r.size) if index is None else np.asarray(index)
    empty = r <= EMPTY_BOUND
    lse = compare("LSE_out", g[~empty], r[~empty], tolerance("LSE_out"), index[~empty])
    bad = empty & ~(g <= EMPTY_BOUND)  # NaN compares False: fails
    if bad.any():
        first = int(np.argmax(bad))
        lse = Comparison.failure(f"LSE_out: {int(bad.sum())} of {int(empty.sum())} elements merging two empty states (both lse "
                                 f"infinite) are not <= -0.99*FLT_MAX (first at index {int(index[first])}: got {g[first]:.6g}, "
                                 f"expected -FLT_MAX = {-FLT_MAX:.6g}, or -inf in bf16)" + ("; " + lse.message if lse.message else ""),
                                 r.size, int(index[first]))
    elif lse.passed:
        lse.checked = r.size
    results.append(lse)
    return results
