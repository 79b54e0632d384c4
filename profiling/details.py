"""The `full` profile: every collected section's metrics as ncu's details page shows them.

ncu's raw page (what `profile_kernel` collects) holds ~720 columns for our five sections: the
section bodies, their min/max/sum twins, the SOL breakdown units, ~170 `device__attribute_*`,
`c2clink__*`, `nvlink__*`, `derived__*` and profiler bookkeeping. The details page shows, per
section, a short list of named metrics (the tables below, from ncu's .section files for our
sections; the raw names are checked against a real H200 report in tests/profiling). `full` renders
exactly those, section by section (section, name, value with unit, raw name), the device once in one
line, then the SOL breakdown (every other unit's `avg` % of peak, busiest first), so a token budget
(profiling/budget.py) cuts the least telling lines first.
"""

from __future__ import annotations

from . import metrics as m
from .report import Metric, ProfileReport, format_value

# (section title, [(label, raw metric)]) in the details page's order.
DETAILS_SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "GPU Speed Of Light Throughput",
        (
            ("DRAM Frequency", "dram__cycles_elapsed.avg.per_second"),
            ("SM Frequency", "gpc__cycles_elapsed.avg.per_second"),
            ("Elapsed Cycles", "gpc__cycles_elapsed.max"),
            ("Memory Throughput", m.MEMORY_THROUGHPUT_PCT),
            ("DRAM Throughput", m.DRAM_THROUGHPUT),
            ("Duration", m.DURATION),
            ("L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
            ("L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
            ("SM Active Cycles", "sm__cycles_active.avg"),
            ("Compute (SM) Throughput", m.SM_THROUGHPUT),
        ),
    ),
    (
        "Compute Workload Analysis",
        (
            ("Executed Ipc Active", m.IPC_ACTIVE),
            ("Executed Ipc Elapsed", m.IPC_ELAPSED),
            ("Issue Slots Busy", m.ISSUE_SLOTS_BUSY),
            ("Issued Ipc Active", "sm__inst_issued.avg.per_cycle_active"),
            ("SM Busy", m.SM_BUSY),
        ),
    ),
    (
        "Memory Workload Analysis",
        (
            ("Memory Throughput", m.DRAM_BYTES_PER_S),
            ("L1/TEX Hit Rate", m.L1_HIT_RATE),
            ("L2 Hit Rate", m.L2_HIT_RATE),
            ("Mem Busy", m.MEM_BUSY),
            ("Max Bandwidth", m.MAX_BANDWIDTH),
            ("Mem Pipes Busy", m.MEM_PIPES_BUSY),
        ),
    ),
    (
        "Occupancy",
        (
            ("Block Limit SM", "launch__occupancy_limit_blocks"),
            ("Block Limit Registers", "launch__occupancy_limit_registers"),
            ("Block Limit Shared Mem", "launch__occupancy_limit_shared_mem"),
            ("Block Limit Warps", "launch__occupancy_limit_warps"),
            ("Block Limit Barriers", "launch__occupancy_limit_barriers"),
            ("Theoretical Active Warps per SM", "sm__maximum_warps_avg_per_active_cycle"),
            ("Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct"),
            ("Achieved Occupancy", m.ACHIEVED_OCCUPANCY),
            ("Achieved Active Warps Per SM", "sm__warps_active.avg.per_cycle_active"),
        ),
    ),
    (
        "Launch Statistics",
        (
            ("Block Size", "launch__block_size"),
            ("Grid Size", "launch__grid_size"),
            ("Registers Per Thread", m.REGISTERS_PER_THREAD),
            ("Shared Memory Configuration Size", "launch__shared_mem_config_size"),
            ("Driver Shared Memory Per Block", "launch__shared_mem_per_block_driver"),
            ("Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic"),
            ("Static Shared Memory Per Block", "launch__shared_mem_per_block_static"),
            ("# SMs", "launch__sm_count"),
            ("Stack Size", "launch__stack_size"),
            ("Threads", "launch__thread_count"),
            ("Waves Per SM", "launch__waves_per_multiprocessor"),
        ),
    ),
)

DETAILS_METRICS = frozenset(raw for _, rows in DETAILS_SECTIONS for _, raw in rows)

# Columns that are not measurements of the kernel (never shown, not even in the breakdown).
HIDDEN_PREFIXES = ("device__attribute_", "c2clink__", "derived__", "nvlink__", "numa__", "profiler__", "idc__", "lrc__", "fbpa__", "sass__")

# The device line: (label, raw attribute), shown once.
DEVICE_ATTRIBUTES = (
    ("", "device__attribute_display_name"),
    ("SMs", "device__attribute_multiprocessor_count"),
    ("L2", "device__attribute_l2_cache_size"),
    ("max SM clock", "device__attribute_max_gpu_frequency_khz"),
    ("memory bus", "device__attribute_global_memory_bus_width"),
)

BREAKDOWN_TITLE = "SOL breakdown (every other unit's average % of peak, busiest first)"


def _value(metric: Metric | None) -> str:
    if metric is not None and metric.value is not None and metric.unit in ("cycle/second", "hz", "1/second"):
        return f"{metric.value / 1e9:.2f} GHz"
    return format_value(metric)


def _device_line(report: ProfileReport) -> str | None:
    k = report.kernels[0] if report.kernels else None
    if k is None:
        return None
    parts = []
    for label, raw in DEVICE_ATTRIBUTES:
        metric = k.metrics.get(raw)
        if metric is None:
            continue
        if raw.endswith("l2_cache_size") and metric.value:
            shown = f"{metric.value / 2**20:.0f} MiB"
        elif raw.endswith("frequency_khz") and metric.value:
            shown = f"{metric.value / 1e6:.2f} GHz"
        elif raw.endswith("bus_width") and metric.value:
            shown = f"{metric.value:.0f} bit"
        else:
            shown = metric.text or _value(metric)
        parts.append(f"{label} {shown}".strip())
    return "Device: " + ", ".join(parts) if parts else None


def breakdown(report: ProfileReport) -> list[tuple[str, float]]:
    """(raw name, value) of the `avg ... pct_of_peak` metrics outside the section bodies, busiest first."""
    out = []
    for name, metric in report.summary.items():
        if name in DETAILS_METRICS or name.startswith(HIDDEN_PREFIXES) or metric.value is None:
            continue
        if ".avg.pct_of_peak_sustained_" in name:
            out.append((name, metric.value))
    return sorted(out, key=lambda item: (-item[1], item[0]))


def full_lines(report: ProfileReport) -> list[str]:
    """The sections' lines (no bottleneck header, no launch block: filter.render adds those)."""
    lines = []
    device = _device_line(report)
    if device:
        lines.append(device)
    for title, rows in DETAILS_SECTIONS:
        present = [(label, raw) for label, raw in rows if raw in report.summary]
        if not present:
            continue
        lines.append(f"Section: {title}")
        lines += [f"- {label}: {_value(report.summary[raw])} [{raw}]" for label, raw in present]
    rest = breakdown(report)
    if rest:
        lines.append(f"Section: {BREAKDOWN_TITLE}")
        lines += [f"- {name.split('.avg.')[0]}: {value:.2f} %" for name, value in rest]
    return lines
