"""float64 reference for softmax_attention: single head, no mask (the published code has none),

    Y = softmax(Q K^T / sqrt(dim_qk)) V,  Q [q][dqk], K [kv][dqk], V [kv][dv], Y [q][dv] row-major,

the softmax over kv for each query row in the log-sum-exp form: P = exp(S - lse), lse = m + log sum exp(S - m).
With a sample (large sizes), only the query rows that hold a sampled element are computed.
"""

import numpy as np

_ROWS = 1024  # query rows per step (bounds the q x kv temporaries)


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    q, kv, dqk, dv = int(p["q_seq_len"]), int(p["kv_seq_len"]), int(p["dim_qk"]), int(p["dim_v"])
    Q = x["Q"].reshape(q, dqk)
    K = x["K"].reshape(kv, dqk)
    V = x["V"].reshape(kv, dv)
    idx = None if sample is None or "Y" not in sample else np.asarray(sample["Y"], dtype=np.int64)
    rows = np.arange(q) if idx is None else np.unique(idx // dv)
    out = np.empty((rows.size, dv))
    for s in range(0, rows.size, _ROWS):
        r = rows[s:s + _ROWS]
        scores = (Q[r] @ K.T) / np.sqrt(dqk)
        m = scores.max(axis=1, keepdims=True)
        lse = m + np.log(np.exp(scores - m).sum(axis=1, keepdims=True))
        out[s:s + _ROWS] = np.exp(scores - lse) @ V
    if idx is None:
        return {"Y": out.reshape(-1)}
    return {"Y": out[np.searchsorted(rows, idx // dv), idx % dv]}
