"""Otsu's threshold, exact: the cut between two sorted values that maximises between-class variance.

skimage's threshold_otsu works on a 256-bin histogram; for the few hundred values we fit, an exact
search over the midpoints of the sorted distinct values is simple and has no binning error.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from .classify import Thresholds, throughputs
from .errors import ClassificationError, ReportFormatError
from .report import ProfileReport


def otsu_threshold(values) -> float:
    """Threshold t maximising w0·w1·(mu0 - mu1)^2 with class 0 = values <= t; t is a midpoint of
    two consecutive distinct sorted values. Needs at least two distinct finite values."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = np.sort(v[np.isfinite(v)])
    if v.size < 2 or v[0] == v[-1]:
        raise ValueError("Otsu's threshold needs at least two distinct finite values")
    n = v.size
    csum = np.cumsum(v)
    k = np.arange(1, n)  # class 0 = v[:k]
    w0, w1 = k / n, (n - k) / n
    mu0 = csum[:-1] / k
    mu1 = (csum[-1] - csum[:-1]) / (n - k)
    between = w0 * w1 * (mu0 - mu1) ** 2
    cuts = v[1:] > v[:-1]  # only between distinct values
    between = np.where(cuts, between, -np.inf)
    best = int(np.argmax(between))
    return float((v[best] + v[best + 1]) / 2)


def load_corpus(path: Path) -> list[ProfileReport]:
    """RUN.json: a JSON list of ProfileReport dumps (`ProfileReport.model_dump(mode="json")`)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ReportFormatError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ReportFormatError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ReportFormatError(f"{path} must hold a JSON list of profile reports, not {type(data).__name__}")
    try:
        return [ProfileReport.model_validate(d) for d in data]
    except ValidationError as exc:
        raise ReportFormatError(f"{path}: an entry is not a profile report: {str(exc).splitlines()[0]}") from exc


def _label(r: ProfileReport) -> str:
    return "/".join(str(x) for x in (r.task, r.precision, r.impl) if x) or (r.kernels[0].name if r.kernels else "?")


def fit_thresholds(reports: list[ProfileReport], source: str = "") -> dict:
    """Fit both rules' thresholds with Otsu and return them with the data they came from.

    published: one threshold over the pooled SM, DRAM and Memory throughput percentages of every
    kernel (the paper fitted its 30 % over its kernels' throughputs).
    sol: one threshold over each kernel's busiest side, max(SM %, DRAM %, Memory %): below it, no
    unit is busy, so the kernel is latency bound.
    """
    points, skipped = [], []
    for r in reports:
        try:
            sm, dram, mem = throughputs(r.summary)
        except ClassificationError as exc:
            skipped.append({"report": _label(r), "why": str(exc)})
            continue
        points.append({"report": _label(r), "sm_pct": sm, "dram_pct": dram, "memory_pct": mem})
    if len(points) < 2:
        raise ValueError(f"need at least two profiles with SpeedOfLight throughputs to fit thresholds, got {len(points)}")
    pooled = [p[k] for p in points for k in ("sm_pct", "dram_pct", "memory_pct")]
    busiest = [max(p["sm_pct"], p["dram_pct"], p["memory_pct"]) for p in points]  # type: ignore[call-overload]
    thresholds = Thresholds(published_pct=otsu_threshold(pooled), sol_latency_pct=otsu_threshold(busiest))
    return {
        "thresholds": thresholds.model_dump(),
        "method": "exact Otsu over midpoints of sorted values (profiling/otsu.py)",
        "published_values": "pooled sm_pct, dram_pct, memory_pct of every profile",
        "sol_values": "max(sm_pct, dram_pct, memory_pct) of every profile",
        "source": source,
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "count": len(points),
        "data": points,
        "skipped": skipped,
    }
