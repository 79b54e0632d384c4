"""Untrusted or long-running commands (nvcc, kernel drivers, ncu) as children in their own process group.

A child that outlives its time limit is killed with its whole group (a hung kernel's driver, ncu's
replay processes), and the caller gets `None` for its exit status instead of an exception.
Code we did not write starts through bench_tasks.harness.sandbox, which builds on this class.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any


class Child:
    def __init__(
        self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, merge_stderr: bool = True, **popen: Any
    ):
        """`merge_stderr=False` keeps stderr apart (in `stderr` after `wait`); `popen` goes to Popen
        (user, group, extra_groups, pass_fds)."""
        self.stderr = ""
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True,
            text=True,
            errors="replace",
            **popen,
        )

    def kill(self) -> None:
        """Kill the whole group now (the caller failed while the child ran)."""
        if self.proc.poll() is None:
            self.kill_group()
            self.proc.communicate()

    def kill_group(self) -> None:
        """SIGKILL the whole group without waiting (another thread may be in wait()); a sandbox kills its
        namespace's first process first."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> tuple[int | None, str]:
        """(exit status, or None when killed at the time limit; stdout, with stderr unless kept apart)."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
            self.stderr = err or ""
            return self.proc.returncode, out
        except subprocess.TimeoutExpired:
            self.kill_group()
            out, err = self.proc.communicate()
            self.stderr = err or ""
            return None, out


def run_limited(argv: list[str], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    return Child(argv, env=env, cwd=cwd).wait(timeout)
