"""A probe's report as data: JSON (`probe_meta`) and the float64 reference arrays as one .npz (`probe_arrays`).

What the service stores for a PyTorch task and what a work item carries to a worker: the task is rebuilt from the
report (`probe_from`) and never by running the reference again here. Order matters (the prototype lists the
constants in file order and the tensors in the probe's order), so mappings are stored as lists of pairs.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import Any

import numpy as np

from .task import Probe, Tensor

FORMAT = 1  # bump when the shape of the record changes


def probe_meta(probe_: Probe) -> dict[str, Any]:
    """Everything of the probe but its arrays; `references` names each array's entry in the .npz."""
    return {
        "format": FORMAT,
        "constants": [[k, v] for k, v in probe_.constants.items()],
        "sizes": [[[k, v] for k, v in s.items()] for s in probe_.sizes],
        "tensors": [
            {
                "name": t.name,
                "source": t.source,
                "kind": t.kind,
                "dtype": t.dtype,
                "shapes": [list(s) for s in t.shapes],
                "stats": [[k, v] for k, v in t.stats.items()],
            }
            for t in probe_.tensors
        ],
        "flops": list(probe_.flops),
        "references": [
            [[[key, f"r{i}_{j}_{k}"] for k, key in enumerate(seed)] for j, seed in enumerate(size)]
            for i, size in enumerate(probe_.references)
        ],
    }


def probe_arrays(probe_: Probe) -> bytes:
    """The float64 reference arrays (per size, per seed), compressed, under the names `probe_meta` gives them."""
    arrays = {
        f"r{i}_{j}_{k}": arr
        for i, size in enumerate(probe_.references)
        for j, seed in enumerate(size)
        for k, arr in enumerate(seed.values())
    }
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def probe_from(source: str, meta: dict[str, Any], arrays: bytes | None = None) -> Probe:
    """The probe of `source` as recorded (`arrays` None: without its reference arrays, as a work item carries it).
    Raises ValueError (or KeyError, TypeError) for a record of another shape or arrays that are no .npz."""
    if meta.get("format") != FORMAT:
        raise ValueError(f"a PyTorch task record of format {meta.get('format')!r}; this checkout reads format {FORMAT}")
    tensors = tuple(
        Tensor(
            t["name"],
            t["source"],
            t["kind"],
            t["dtype"],
            tuple(tuple(int(d) for d in s) for s in t["shapes"]),
            {k: float(v) for k, v in t["stats"]},
        )
        for t in meta["tensors"]
    )
    references: tuple[tuple[dict[str, np.ndarray], ...], ...] = ()
    if arrays is not None:
        try:
            with np.load(io.BytesIO(arrays), allow_pickle=False) as npz:  # never a pickle: the bytes come from a database
                references = tuple(tuple({key: npz[entry] for key, entry in seed} for seed in size) for size in meta["references"])
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:  # not a whole .npz (what np.load raises for one)
            raise ValueError(f"its reference arrays ({len(arrays)} bytes) are not a readable .npz: {exc}") from None
    return Probe(
        source,
        {k: int(v) for k, v in meta["constants"]},
        tuple({k: int(v) for k, v in s} for s in meta["sizes"]),
        tensors,
        tuple(int(f) for f in meta["flops"]),
        references,
    )
