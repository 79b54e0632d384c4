"""Figure for docs/results (issue 30): the peak resident memory of compile bombs refused at the sandbox's memory
limit (default sandbox_max_memory_bytes), measured by polling the sandboxed step's process tree every 20 ms.

    CUDAMASTER_HARNESS__SANDBOX_BWRAP=... python scripts/memory_limit_figure.py docs/results/memory_limit_<commit>.json
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_tasks.harness import compile as harness_compile
from bench_tasks.harness import sandbox as sb
from settings import get_harness_settings
from tests.bench.test_memory_limits import PREPROCESSOR_BOMB, TEMPLATE_BOMB


def measure(box: sb.Sandbox, settings, source: str) -> dict:
    with sb.scratch(settings, "cm-figure-") as tmp:
        src = tmp / "bomb.cu"
        src.write_text(source)
        argv = ["nvcc", *harness_compile.candidate_flags(settings), "-std=c++17", "-c", str(src), "-o", str(tmp / "bomb.o")]
        started = time.monotonic()
        child = box.start(argv, scratch=tmp, read_only=[src], what="the compiler")
        peak, done = 0, threading.Event()

        def poll() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, sb.tree_rss(child.proc.pid))
                done.wait(0.02)

        poller = threading.Thread(target=poll)
        poller.start()
        rc, out = child.wait(settings.compile_timeout_s)
        done.set()
        poller.join()
        return {
            "exit": rc,
            "seconds": round(time.monotonic() - started, 2),
            "peak_rss_bytes": peak,
            "verdict": out.splitlines()[0] if out else "",
            "command": " ".join(argv[:-4]) + " -c bomb.cu",
        }


def main(path: str) -> None:
    settings = get_harness_settings()
    box = sb.sandbox_for(settings)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    figure = {
        "what": "peak resident memory of compile bombs refused at the sandbox memory limit",
        "limit_bytes": settings.sandbox_max_memory_bytes,
        "commit": commit,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": "CPU (no GPU)",
        "sandbox": sb.describe(settings),
        "reproduce": "CUDAMASTER_HARNESS__SANDBOX_BWRAP=<bwrap> python scripts/memory_limit_figure.py " + path,
        "bombs": {"template_2^22": measure(box, settings, TEMPLATE_BOMB), "preprocessor_2^30": measure(box, settings, PREPROCESSOR_BOMB)},
    }
    Path(path).write_text(json.dumps(figure, indent=2) + "\n")
    print(json.dumps(figure, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
