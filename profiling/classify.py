"""Bottleneck classes of a kernel from its Speed-Of-Light throughputs.

Two rules:
- "published": the seed paper's table, read literally (threshold 30 %, found there with Otsu):
  compute if SM > T; else memory bandwidth if DRAM > T or Memory > T; else memory latency.
  ncu reports each throughput as its busiest constituent, so a streaming kernel whose SM % passes
  30 % (the saxpy in shared/notes/ncu.md: DRAM 70.7 %, SM 34.9 %) is called compute bound.
- "sol" (default): compare the two sides as ncu's own SOLBottleneck rule does. The memory side is
  max(DRAM %, Memory %). If neither side reaches L (60 % by default) the kernel keeps neither busy
  and waits on latency; otherwise the busier side is the bottleneck (memory wins a tie).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .errors import ClassificationError
from .metrics import DRAM_THROUGHPUT, MEMORY_THROUGHPUT_PCT, SM_THROUGHPUT

RULES = ("published", "sol")


class Bottleneck(StrEnum):
    compute = "compute"
    memory_latency = "memory_latency"
    memory_bandwidth = "memory_bandwidth"

    @property
    def title(self) -> str:  # type: ignore[override]
        return {"compute": "compute bound", "memory_latency": "memory latency bound", "memory_bandwidth": "memory bandwidth bound"}[
            self.value
        ]


class Thresholds(BaseModel):
    """Percent-of-peak thresholds of both rules."""

    published_pct: float = 30.0
    sol_latency_pct: float = 60.0

    @classmethod
    def load(cls, path: Path) -> Thresholds:
        """Read a file written by `cudamaster profile fit-thresholds` (its "thresholds" object)."""
        try:
            data = json.loads(Path(path).read_text())
            return cls.model_validate(data.get("thresholds", data))
        except (OSError, ValueError, AttributeError) as exc:
            raise ClassificationError(f"cannot read thresholds from {path}: {exc}") from exc


class Classification(BaseModel):
    bottleneck: Bottleneck
    rule: str
    reason: str
    sm_pct: float
    dram_pct: float
    memory_pct: float


def _value(summary: Any, name: str) -> float | None:
    if hasattr(summary, "summary"):  # a ProfileReport
        summary = summary.summary
    if not isinstance(summary, Mapping):
        raise ClassificationError(f"expected a mapping of metrics, got {type(summary).__name__}")
    v = summary.get(name)
    if v is not None and hasattr(v, "value"):
        v = v.value
    return None if v is None else float(v)


def throughputs(summary: Any) -> tuple[float, float, float]:
    """(SM %, DRAM %, Memory %) from a summary; raises ClassificationError naming what is missing."""
    got = {n: _value(summary, n) for n in (SM_THROUGHPUT, DRAM_THROUGHPUT, MEMORY_THROUGHPUT_PCT)}
    missing = [n for n, v in got.items() if v is None]
    if missing:
        raise ClassificationError(
            "the profile lacks " + ", ".join(missing) + ": collect the SpeedOfLight section "
            "(ncu --section SpeedOfLight) and save it with --csv --page raw"
        )
    return got[SM_THROUGHPUT], got[DRAM_THROUGHPUT], got[MEMORY_THROUGHPUT_PCT]  # type: ignore[return-value]


def classify(summary: Any, rule: str = "sol", thresholds: Thresholds | None = None) -> Classification:
    """Classify a kernel (or a duration-weighted summary of several) by `rule` ("published" | "sol")."""
    t = thresholds or Thresholds()
    sm, dram, mem = throughputs(summary)
    memory_side = max(dram, mem)
    nums = f"SM {sm:.1f} %, DRAM {dram:.1f} %, Memory {mem:.1f} %"
    if rule == "published":
        p = t.published_pct
        if sm > p:
            b, why = Bottleneck.compute, f"SM throughput above {p:g} % ({nums})"
        elif dram > p or mem > p:
            b, why = Bottleneck.memory_bandwidth, f"SM throughput at most {p:g} %, DRAM or Memory above it ({nums})"
        else:
            b, why = Bottleneck.memory_latency, f"all three throughputs at most {p:g} % ({nums})"
    elif rule == "sol":
        low = t.sol_latency_pct
        if max(sm, memory_side) < low:
            b, why = (
                Bottleneck.memory_latency,
                (
                    f"neither the SM ({sm:.1f} %) nor the memory side ({memory_side:.1f} %) reaches {low:g} % of peak: "
                    f"the kernel waits on latency, not on a unit's throughput ({nums})"
                ),
            )
        elif memory_side >= sm:
            b, why = (
                Bottleneck.memory_bandwidth,
                (f"the memory side ({memory_side:.1f} % = max of DRAM and Memory) is the busiest and above {low:g} % ({nums})"),
            )
        else:
            b, why = (
                Bottleneck.compute,
                f"the SM ({sm:.1f} %) is busier than the memory side ({memory_side:.1f} %) and above {low:g} % ({nums})",
            )
    else:
        raise ClassificationError(f"unknown rule {rule!r}: choose one of {', '.join(RULES)}")
    return Classification(bottleneck=b, rule=rule, reason=why, sm_pct=sm, dram_pct=dram, memory_pct=mem)
