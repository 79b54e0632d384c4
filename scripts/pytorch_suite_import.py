"""`cudamaster bench import` of a folder of PyTorch references, recorded (issue 42, item 5); CPU only, no GPU needed.

    python3 scripts/pytorch_suite_import.py [--folder examples/pytorch_suite] --output docs/results/pytorch_suite_import_<commit>.json

Runs the CLI as a user would (`cudamaster bench import FOLDER --json`: every file in the sandbox, float64 on the
CPU), and writes its JSON with the command, git commit, machine (CPU only: no GPU is used), date and wall time,
and the verdict of each file. `bench run --suite FOLDER` (the eager and torch.compile baselines) needs the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from bench_tasks.provenance import provenance

ROOT = Path(__file__).resolve().parent.parent


def run_import(folder: Path, precision: str) -> tuple[list[str], dict, float, int]:
    """(the command, its JSON output, its wall seconds, its exit status)."""
    command = [sys.executable, "-m", "app.cli", "bench", "import", str(folder), "--json", "--precision", precision]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600, env=os.environ | {"PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - started
    if not done.stdout.strip():
        raise SystemExit(f"bench import printed nothing (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return ["cudamaster", *command[3:]], json.loads(done.stdout), wall, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path("examples/pytorch_suite"))
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    command, imported, wall, status = run_import(args.folder, args.precision)
    verdicts = {Path(t["file"]).name: "task" for t in imported["tasks"]} | {
        Path(r["file"]).name: f"refused ({r['kind']})" for r in imported["refused"]
    }
    record = {
        "provenance": provenance(command) | {"script": shlex.join(["python3", *sys.argv])},
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "gpu": None,
            "note": "CPU only: no GPU used",
        },
        "exit_status": status,
        "wall_seconds": round(wall, 1),
        "files": len(verdicts),
        "tasks_made": len(imported["tasks"]),
        "refused": len(imported["refused"]),
        "verdicts": dict(sorted(verdicts.items())),
        "bench_import": imported,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['tasks_made']} tasks, {record['refused']} refused, {wall:.0f} s -> {args.output}")


if __name__ == "__main__":
    main()
