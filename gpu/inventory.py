"""The GPUs this machine has, as nvidia-smi lists them (or why there is none)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GpuInventory:
    """What nvidia-smi lists: GPU indexes (and their UUIDs and names), or why there is none."""

    indexes: list[str] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    note: str = ""


def detect_gpus(timeout_s: float = 20.0) -> GpuInventory:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return GpuInventory(note="no GPU found: nvidia-smi is not installed (no NVIDIA driver on this machine)")
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"], capture_output=True, text=True, timeout=timeout_s
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return GpuInventory(note=f"no GPU found: nvidia-smi failed ({exc})")
    rows = [[part.strip() for part in line.split(",", 2)] for line in out.stdout.splitlines() if line.strip()]
    rows = [r for r in rows if len(r) == 3 and r[0].isdigit()]
    if out.returncode != 0 or not rows:
        why = " ".join((out.stdout + out.stderr).split())[:200]
        return GpuInventory(note=f"no GPU found: nvidia-smi lists none ({why or f'exit status {out.returncode}'})")
    return GpuInventory(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        "found " + ", ".join(f"GPU {i} ({n})" for i, n in zip((r[0] for r in rows), (r[2] for r in rows), strict=True)),
    )
