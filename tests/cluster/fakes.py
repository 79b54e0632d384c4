"""A FAKE GPU evaluator for the Ray tests, with hooks that make its worker process die or wait.

Markers in a candidate's source (plain comments to nvcc):
    // RAY_TEST_GATE <dir>   -> writes <dir>/started-<pid>, then waits until <dir>/go exists (the test kills
                                the worker meanwhile); writes <dir>/finished-<pid> when its evaluation returns
    // RAY_TEST_ALWAYS_DIE   -> the worker process exits at once, every time
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from graph.testing import FakeGpuEvaluator


class DyingFakeGpuEvaluator(FakeGpuEvaluator):
    def evaluate(self, task, precision, source, sizes, flags):
        gate = re.search(r"RAY_TEST_GATE (\S+)", source or "")
        if source and "RAY_TEST_ALWAYS_DIE" in source:
            os._exit(3)
        if gate:
            directory = Path(gate.group(1))
            (directory / f"started-{os.getpid()}").write_text("")
            deadline = time.monotonic() + 120
            while not (directory / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        result = super().evaluate(task, precision, source, sizes, flags)
        if gate:
            (Path(gate.group(1)) / f"finished-{os.getpid()}").write_text("")
        return result
