"""The Nsight Compute metrics we collect, read and show: raw names, labels and meanings (ncu 2025.3).

"Memory Throughput" is a percentage in SpeedOfLight and bytes per second in MemoryWorkloadAnalysis;
the labels here always say which one.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTIONS = ("SpeedOfLight", "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats")


@dataclass(frozen=True)
class MetricInfo:
    raw: str
    label: str
    section: str
    meaning: str


SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
DURATION = "gpu__time_duration.sum"
SM_BUSY = "sm__instruction_throughput.avg.pct_of_peak_sustained_elapsed"
ISSUE_SLOTS_BUSY = "sm__inst_issued.avg.pct_of_peak_sustained_elapsed"
IPC_ACTIVE = "sm__inst_executed.avg.per_cycle_active"
IPC_ELAPSED = "sm__inst_executed.avg.per_cycle_elapsed"
DRAM_BYTES_PER_S = "dram__bytes.sum.per_second"
MEM_BUSY = "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed"
MAX_BANDWIDTH = "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed"
MEM_PIPES_BUSY = "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed"
L1_HIT_RATE = "l1tex__t_sector_hit_rate.pct"
L2_HIT_RATE = "lts__t_sector_hit_rate.pct"
ACHIEVED_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
REGISTERS_PER_THREAD = "launch__registers_per_thread"

KNOWN: dict[str, MetricInfo] = {
    m.raw: m
    for m in (
        MetricInfo(SM_THROUGHPUT, "Compute (SM) Throughput", "SpeedOfLight", "busiest SM pipeline or unit, as a share of its peak"),
        MetricInfo(
            MEMORY_THROUGHPUT_PCT,
            "Memory Throughput (SOL %)",
            "SpeedOfLight",
            "busiest memory unit (DRAM, L2, L1, shared), as a share of its peak",
        ),
        MetricInfo(DRAM_THROUGHPUT, "DRAM Throughput", "SpeedOfLight", "share of peak DRAM bandwidth used"),
        MetricInfo(DURATION, "Duration", "SpeedOfLight", "kernel run time on the GPU"),
        MetricInfo(SM_BUSY, "SM Busy", "ComputeWorkloadAnalysis", "busiest SM instruction pipeline, share of peak"),
        MetricInfo(
            ISSUE_SLOTS_BUSY, "Issue Slots Busy", "ComputeWorkloadAnalysis", "share of cycles the warp schedulers issued an instruction"
        ),
        MetricInfo(
            IPC_ACTIVE, "Executed Ipc Active", "ComputeWorkloadAnalysis", "instructions per cycle per SM while the SM had work (max 4)"
        ),
        MetricInfo(
            IPC_ELAPSED,
            "Executed Ipc Elapsed",
            "ComputeWorkloadAnalysis",
            "instructions per cycle per SM over the whole kernel; low with idle SMs or stalls",
        ),
        MetricInfo(DRAM_BYTES_PER_S, "Memory Throughput (bytes/s)", "MemoryWorkloadAnalysis", "DRAM bytes moved per second"),
        MetricInfo(MEM_BUSY, "Mem Busy", "MemoryWorkloadAnalysis", "busiest memory unit's occupancy (L1, L2, DRAM), share of peak"),
        MetricInfo(
            MAX_BANDWIDTH, "Max Bandwidth", "MemoryWorkloadAnalysis", "busiest memory interface's request throughput, share of peak"
        ),
        MetricInfo(MEM_PIPES_BUSY, "Mem Pipes Busy", "MemoryWorkloadAnalysis", "SM load/store and memory instruction pipes, share of peak"),
        MetricInfo(L1_HIT_RATE, "L1/TEX Hit Rate", "MemoryWorkloadAnalysis", "share of L1/TEX sector requests that hit"),
        MetricInfo(
            L2_HIT_RATE,
            "L2 Hit Rate",
            "MemoryWorkloadAnalysis",
            "share of L2 sector requests that hit (cold caches: ncu flushes before each pass)",
        ),
        MetricInfo(ACHIEVED_OCCUPANCY, "Achieved Occupancy", "Occupancy", "average active warps as a share of the SM's maximum"),
        MetricInfo(REGISTERS_PER_THREAD, "Registers Per Thread", "LaunchStats", "registers each thread uses; limits occupancy"),
    )
}

# --page details labels -> raw names. "Memory Throughput" is resolved by its unit (% or bytes/s).
DETAILS_LABELS: dict[str, str] = {
    "Compute (SM) Throughput": SM_THROUGHPUT,
    "DRAM Throughput": DRAM_THROUGHPUT,
    "Duration": DURATION,
    "SM Busy": SM_BUSY,
    "Issue Slots Busy": ISSUE_SLOTS_BUSY,
    "Executed Ipc Active": IPC_ACTIVE,
    "Executed Ipc Elapsed": IPC_ELAPSED,
    "Mem Busy": MEM_BUSY,
    "Max Bandwidth": MAX_BANDWIDTH,
    "Mem Pipes Busy": MEM_PIPES_BUSY,
    "L1/TEX Hit Rate": L1_HIT_RATE,
    "L2 Hit Rate": L2_HIT_RATE,
    "Achieved Occupancy": ACHIEVED_OCCUPANCY,
    "Registers Per Thread": REGISTERS_PER_THREAD,
}


def details_raw_name(section: str, label: str, unit: str) -> str | None:
    if label == "Memory Throughput":
        return MEMORY_THROUGHPUT_PCT if unit.strip() == "%" else DRAM_BYTES_PER_S
    return DETAILS_LABELS.get(label)


def label(raw: str) -> str:
    info = KNOWN.get(raw)
    return info.label if info else raw


def meaning(raw: str) -> str:
    info = KNOWN.get(raw)
    return info.meaning if info else ""
