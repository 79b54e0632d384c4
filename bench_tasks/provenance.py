"""Where a figure came from: command, git commit, date, host. Recorded with every result file."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path


def git_commit(cwd: Path | None = None) -> str:
    """HEAD of the checkout (with -dirty), or CUDAMASTER_GIT_COMMIT where the tree has no .git (the device copy)."""
    if os.environ.get("CUDAMASTER_GIT_COMMIT"):
        return os.environ["CUDAMASTER_GIT_COMMIT"]
    cwd = cwd or Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if out.returncode != 0:
        return "unknown"
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def provenance(command: list[str] | None = None) -> dict[str, str]:
    return {
        "command": shlex.join(command if command is not None else sys.argv),
        "git_commit": git_commit(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
    }
