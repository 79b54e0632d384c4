"""Untrusted or long-running commands (nvcc, kernel drivers, ncu) as children in their own process group.

A child that outlives its time limit is killed with its whole group (a hung kernel's driver, ncu's
replay processes), and the caller gets `None` for its exit status instead of an exception.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


class Child:
    def __init__(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None):
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, text=True, errors="replace")

    def kill(self) -> None:
        """Kill the whole group now (the caller failed while the child ran)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()

    def kill_group(self) -> None:
        """Kill the whole group without waiting (another thread is in wait())."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self, timeout: float) -> tuple[int | None, str]:
        """(exit status, or None when killed at the time limit; stdout and stderr together)."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
            return self.proc.returncode, out
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, _ = self.proc.communicate()
            return None, out


def run_limited(argv: list[str], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    return Child(argv, env=env, cwd=cwd).wait(timeout)
