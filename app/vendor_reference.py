"""The vendor libraries' times per task, precision and size, as the review queue compares candidates with them.

`app/vendor_reference.csv` is written by `scripts/vendor_reference.py` from the vendor runs committed under
docs/results (`cudamaster bench run --vendor`: cuBLAS, cuDNN, cuSPARSE, cuFFT or CUB measured by the harness
against the same naive baselines, on the H200). One row per size where the vendor reference was correct:
its median time, its % of the roofline floor (the harness's floor for that size's work), the GPU and the
libraries. A task without a vendor reference (the activations, the norms, the stencils, custom tasks) has no rows.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SHIPPED = Path(__file__).with_name("vendor_reference.csv")
COLUMNS = ("task", "precision", "params", "median_us", "roofline_pct", "gpu", "libraries", "source")


@dataclass(frozen=True)
class VendorTime:
    """The vendor reference at one size."""

    median_us: float
    roofline_pct: float
    gpu: str
    libraries: str  # e.g. "cublas+cub"


def params_key(params: Any) -> str:
    """A size's parameters as one string, in name order: "K=64,M=1024,N=1024"."""
    if not isinstance(params, dict):
        return ""
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


class VendorReference:
    """Vendor times by (task, precision, size)."""

    def __init__(self, times: dict[tuple[str, str, str], VendorTime]):
        self.times = times

    def at(self, task: Any, precision: Any, params: Any) -> VendorTime | None:
        return self.times.get((str(task), str(precision), params_key(params)))

    @classmethod
    def read(cls, path: Path) -> VendorReference:
        """The CSV that scripts/vendor_reference.py writes (lines starting with # are comments)."""
        with open(path, newline="") as f:
            rows = csv.DictReader(line for line in f if not line.startswith("#"))
            return cls(
                {
                    (r["task"], r["precision"], r["params"]): VendorTime(
                        float(r["median_us"]), float(r["roofline_pct"]), r["gpu"], r["libraries"]
                    )
                    for r in rows
                }
            )


@cache
def shipped() -> VendorReference:
    """The reference shipped with the service (read once)."""
    return VendorReference.read(SHIPPED)
