"""Children run in their own process group; a time limit kills the whole group."""

import os
import time

from bench_tasks.harness.child import Child, run_limited


def test_exit_status_and_output_come_back():
    assert run_limited(["sh", "-c", "echo out; echo err >&2; exit 3"], 10) == (3, "out\nerr\n")


def test_a_hang_is_killed_with_its_grandchildren(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    rc, _ = Child(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"]).wait(timeout=1.0)
    assert rc is None
    assert time.monotonic() - started < 30
    pid = int(pidfile.read_text())
    for _ in range(50):  # the kill is delivered; give the kernel a moment (a zombie counts as dead)
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the grandchild survived the group kill")


def test_kill_ends_a_running_child_at_once():
    child = Child(["sleep", "60"])
    started = time.monotonic()
    child.kill()
    assert child.proc.returncode is not None and time.monotonic() - started < 10
