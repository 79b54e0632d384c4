"""Host<->device copy bandwidth on this GPU machine, recorded by script (scripts/copy_bandwidth.cu: pageable vs
page-locked vs registered memory, 16 MiB to 1 GiB, and the cost of page-locking). Regenerates what
docs/results/copy_bandwidth_dd9f04a.json holds, which was assembled by hand from a device call's printed lines.

    python3 scripts/copy_bandwidth.py --output OUT/copy_bandwidth.json      # on the device (nvcc, a GPU)
    (scripts/device_gpu_suite.sh copy-bandwidth runs it; scripts/record_device_run.sh records it)

--binary runs a program built elsewhere instead of compiling scripts/copy_bandwidth.cu here.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_tasks.provenance import provenance  # noqa: E402

SOURCE = REPO / "scripts" / "copy_bandwidth.cu"
ARCH = "-gencode=arch=compute_90,code=sm_90"
REP = re.compile(
    r"(?P<mib>\d+) MiB rep (?P<rep>\d+): pageable H2D (?P<pageable_h2d>[\d.]+) GB/s D2H (?P<pageable_d2h>[\d.]+) GB/s; "
    r"pinned H2D (?P<pinned_h2d>[\d.]+) D2H (?P<pinned_d2h>[\d.]+) GB/s; host memcpy (?P<host_memcpy>[\d.]+) GB/s; "
    r"cudaMallocHost (?P<malloc_host_s>[\d.]+) s"
)
REGISTER = re.compile(
    r"(?P<mib>\d+) MiB: cudaHostRegister (?P<register_s>[\d.]+) s, H2D registered (?P<registered_h2d>[\d.]+) GB/s, "
    r"unregister (?P<unregister_s>[\d.]+) s"
)


def parse(lines: list[str]) -> dict[str, list[dict[str, float]]]:
    """The program's printed lines as numbers (GB/s and seconds); a line of neither form is an error."""
    reps: list[dict[str, float]] = []
    registered: list[dict[str, float]] = []
    for line in lines:
        if m := REP.fullmatch(line.strip()):
            reps.append({k: float(v) for k, v in m.groupdict().items()})
        elif m := REGISTER.fullmatch(line.strip()):
            registered.append({k: float(v) for k, v in m.groupdict().items()})
        else:
            raise ValueError(f"copy_bandwidth printed a line this script does not know: {line!r}")
    return {"copies": reps, "registered": registered}


def build(workdir: Path, nvcc: str) -> Path:
    binary = workdir / "copy_bandwidth"
    subprocess.run([nvcc, "-O2", ARCH, "-o", str(binary), str(SOURCE)], check=True, timeout=300)
    return binary


def gpu_and_driver() -> tuple[str, str]:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown", "unknown"
    first = out.stdout.strip().splitlines()[:1]
    if out.returncode != 0 or not first:
        return "unknown", "unknown"
    name, driver = (s.strip() for s in first[0].split(",")[:2])
    return name, driver


def record(binary: Path, command: list[str]) -> dict:
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise SystemExit(f"{binary} failed (exit {run.returncode}): {run.stdout[-2000:]}{run.stderr[-2000:]}")
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    gpu, driver = gpu_and_driver()
    return {
        "provenance": {**provenance(command), "gpu": gpu, "driver": driver},
        "hand_made": False,
        "output_lines": lines,
        **parse(lines),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--binary", type=Path, help="a copy_bandwidth program built already (default: build it here)")
    args = ap.parse_args(argv)
    command = [sys.argv[0], *(argv if argv is not None else sys.argv[1:])]
    with tempfile.TemporaryDirectory() as tmp:
        binary = args.binary or build(Path(tmp), args.nvcc)
        doc = record(binary, command)
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}: {len(doc['copies'])} copy lines, {len(doc['registered'])} registered lines")


if __name__ == "__main__":
    main()
