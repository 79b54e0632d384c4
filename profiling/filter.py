"""The metric filter: a compact text of a profile for the LLM.

"filtered" (default): the bottleneck class and why, only that class's metrics (the seed paper's
per-class lists; for bandwidth-bound kernels also DRAM bytes/s), the launch configuration, achieved
occupancy, registers per thread and, given an evaluation row, the roofline position.
"full": every collected section's metrics as ncu's details page shows them (profiling/details.py),
after the bottleneck, the launch and the roofline lines. "none": the empty string (an ablation
without profiles). A token budget is applied by profiling/budget.py, not here.
"""

from __future__ import annotations

from bench_tasks.harness.result import SizeRow

from . import metrics as m
from .classify import Bottleneck
from .details import full_lines
from .modes import DEFAULT_MODE, MODES
from .report import ProfileReport, format_value

CLASS_METRICS: dict[Bottleneck, tuple[str, ...]] = {
    Bottleneck.compute: (m.SM_THROUGHPUT, m.ISSUE_SLOTS_BUSY, m.IPC_ACTIVE, m.SM_BUSY),
    Bottleneck.memory_latency: (m.L2_HIT_RATE, m.L1_HIT_RATE, m.IPC_ELAPSED, m.MEM_BUSY),
    Bottleneck.memory_bandwidth: (m.DRAM_THROUGHPUT, m.MEMORY_THROUGHPUT_PCT, m.MAX_BANDWIDTH, m.MEM_PIPES_BUSY, m.DRAM_BYTES_PER_S),
}


def _dims(d: tuple[int, int, int] | None) -> str:
    return "?" if d is None else "(" + ", ".join(map(str, d)) + ")"


def _launch(report: ProfileReport) -> list[str]:
    s = report.summary
    lines = []
    ks = report.kernels
    for k in ks[:4]:
        lines.append(
            f"- kernel {_short(k.name)}: grid {_dims(k.grid)}, block {_dims(k.block)}, "
            f"{format_value(k.metrics.get(m.REGISTERS_PER_THREAD))} registers/thread, "
            f"achieved occupancy {format_value(k.metrics.get(m.ACHIEVED_OCCUPANCY))}, "
            f"duration {format_value(k.metrics.get(m.DURATION))}"
        )
    if len(ks) > 4:
        lines.append(f"- ... and {len(ks) - 4} more kernels")
    if len(ks) > 1:
        lines.append(f"- {len(ks)} kernels, total duration {format_value(s.get(m.DURATION))}; metrics above are duration-weighted averages")
    return lines


def _short(name: str, limit: int = 80) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _roofline(row: SizeRow) -> str:
    parts = [f"Roofline at {row.params}:"]
    if row.roofline_floor_us is not None:
        parts.append(f"floor {row.roofline_floor_us:.2f} us (max of FLOPs/peak and bytes/bandwidth);")
    for name, stats, pct in (
        ("candidate", row.candidate, row.candidate_roofline_pct),
        ("baseline", row.baseline, row.baseline_roofline_pct),
    ):
        if stats is not None:
            parts.append(f"{name} median {stats.median_us:.2f} us" + (f" = {pct:.1f} % of roofline;" if pct is not None else ";"))
    if row.speedup is not None:
        parts.append(f"speedup {row.speedup:.2f}x")
    return " ".join(parts).rstrip(";")


def _metric_line(report: ProfileReport, raw: str) -> str:
    meaning = m.meaning(raw)
    return f"- {m.label(raw)}: {format_value(report.summary.get(raw))}" + (f" ({meaning})" if meaning else "")


def shown_metrics(report: ProfileReport, mode: str = DEFAULT_MODE) -> list[str]:
    """The raw metric names `render` shows in `mode`: the class's metrics (filtered), every one (full)."""
    if mode == "full":
        return sorted(report.summary)
    if mode == "filtered" and report.classification is not None:
        return list(CLASS_METRICS[report.classification.bottleneck])
    return []


def shown_values(report: ProfileReport, mode: str = DEFAULT_MODE) -> dict[str, float | None]:
    """What the LLM saw of the metrics, as numbers (raw name -> value; None when not collected)."""
    return {raw: (report.summary[raw].value if raw in report.summary else None) for raw in shown_metrics(report, mode)}


def render(report: ProfileReport, mode: str = DEFAULT_MODE, row: SizeRow | None = None) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown filter mode {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "none":
        return ""
    c = report.classification
    lines = []
    if c is not None:
        lines.append(f"Bottleneck: {c.bottleneck.title} ({c.rule} rule): {c.reason}")
    else:
        lines.append(f"Bottleneck: unknown ({report.classify_error or 'not classified'})")
    if mode == "filtered" and c is not None:
        lines.append(f"Metrics for a {c.bottleneck.title} kernel (Nsight Compute):")
        lines += [_metric_line(report, raw) for raw in shown_metrics(report, mode)]
    lines.append("Launch:")
    lines += _launch(report)
    if row is not None:
        lines.append(_roofline(row))
    if mode == "full":
        lines += full_lines(report)
    return "\n".join(lines)
