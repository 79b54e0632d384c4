"""Where a command's CPU time goes, by kind of process: run it while sampling /proc, write a JSON record.

    python scripts/cpu_by_process.py --output docs/results/ci_cpu_SHA.json -- pytest -p no:cacheprovider

Every 0.2 s it reads utime + stime of every process on the machine (keyed by pid and start time, so a reused
pid is another process) and keeps the last value seen; a process already running before the command counts
only the CPU time it used after the command started. A process that lives less than a sample apart is not
seen (nvcc's short stages, sh, bwrap): `unseen_cpu_s` is the machine's busy time (/proc/stat) less what was
seen. Processes of other services on the machine count too (they compete for the same cores), each in its
own class. Issue 32 used it to find where the 2-core CI machine's time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench_tasks.provenance import provenance

TICK = os.sysconf("SC_CLK_TCK")
NVCC_STAGES = {"nvcc", "cicc", "cudafe++", "ptxas", "fatbinary", "nvlink", "cc1plus", "cc1", "gcc", "g++", "as", "ld", "collect2"}


def busy_seconds() -> float:
    """The machine's busy CPU time so far (user, nice, system, irq, softirq), in seconds."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / TICK


def process_class(comm: str, cmdline: str) -> str:
    """A process's kind, from its name and command line."""
    if comm in NVCC_STAGES:
        return f"nvcc: {comm}"
    if "forkserver" in cmdline:
        return "test servers (fork server and its forked uvicorn children)"
    if "exec(eval(" in cmdline:
        return "pytest-xdist workers"
    if "postgres" in comm or "postgres" in cmdline:
        return "postgresql"
    if "chrom" in comm or "chrom" in cmdline:
        return "chromium"
    if "/ray/" in cmdline or comm in ("raylet", "gcs_server"):
        return "ray"
    if comm.startswith("python"):
        words = cmdline.split()
        return "python: " + " ".join(w.rsplit("/", 1)[-1] for w in words[1:3])[:60]
    return comm


def _sample(seen: dict[tuple[str, str], list], me: int, before: bool = False) -> None:
    """Update `seen` ([comm, cmdline, cpu now, cpu when the command started]); `before`: the command has not started."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        end = stat.rfind(")")
        comm, fields = stat[stat.find("(") + 1 : end], stat[end + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        key = (pid, fields[19])  # the pid and its start time
        if key in seen:
            seen[key][2] = cpu
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = ""
        seen[key] = [comm, cmdline, cpu, cpu if before else 0.0]


def run(command: list[str], interval: float) -> dict:
    seen: dict[tuple[str, str], list] = {}
    stop = threading.Event()

    def sampler() -> None:
        while not stop.is_set():
            _sample(seen, os.getpid())
            stop.wait(interval)

    thread = threading.Thread(target=sampler, daemon=True)
    _sample(seen, os.getpid(), before=True)
    busy0, wall0 = busy_seconds(), time.monotonic()
    thread.start()
    rc = subprocess.call(command)
    stop.set()
    thread.join()
    _sample(seen, os.getpid())
    wall, busy = time.monotonic() - wall0, busy_seconds() - busy0
    classes: dict[str, dict[str, float]] = defaultdict(lambda: {"processes": 0, "cpu_s": 0.0})
    for comm, cmdline, cpu, start in seen.values():
        if cpu - start <= 0:
            continue
        entry = classes[process_class(comm, cmdline)]
        entry["processes"] += 1
        entry["cpu_s"] += cpu - start
    seen_cpu = sum(c["cpu_s"] for c in classes.values())
    ordered = {
        k: {"processes": v["processes"], "cpu_s": round(v["cpu_s"], 1)} for k, v in sorted(classes.items(), key=lambda kv: -kv[1]["cpu_s"])
    }
    return {
        "exit_status": rc,
        "wall_s": round(wall, 1),
        "machine_busy_cpu_s": round(busy, 1),
        "busy_cores": round(busy / wall, 2),
        "seen_cpu_s": round(seen_cpu, 1),
        "unseen_cpu_s": round(busy - seen_cpu, 1),
        "classes": {k: v for k, v in ordered.items() if v["cpu_s"] >= 0.5},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    record = {
        **provenance(command),  # the command, git commit, date, host and Python, as every result file records them
        "machine": {"cores": os.cpu_count(), "cpu": _cpu_model()},
        **run(command, args.interval),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "classes"}, indent=1))
    raise SystemExit(record["exit_status"])


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


if __name__ == "__main__":
    main()
