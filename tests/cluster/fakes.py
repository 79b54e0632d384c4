"""A FAKE GPU evaluator for the Ray tests, with hooks that make its worker process die or wait.

Markers in a candidate's source (plain comments to nvcc):
    // RAY_TEST_GATE <dir>   -> writes <dir>/started-<pid>, then waits until <dir>/go exists (the test kills
                                the worker meanwhile); writes <dir>/finished-<pid> when its evaluation returns
    // RAY_TEST_ALWAYS_DIE   -> the worker process exits at once, every time (evaluate and sanitize)
    // RAY_TEST_BARRIER <dir> <n> -> writes <dir>/at-<pid>-<n>, then waits (at most 120 s) until n such files
                                exist: n evaluations must be running AT ONCE, on n different workers
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from bench_tasks.harness import EvaluationResult
from bench_tasks.harness.result import SanitizerVerdict
from gpu.fake import FakeGpuEvaluator
from gpu.protocol import EvaluateRequest, SanitizeRequest


class DyingFakeGpuEvaluator(FakeGpuEvaluator):
    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        source = request.source
        gate = re.search(r"RAY_TEST_GATE (\S+)", source or "")
        if source and "RAY_TEST_ALWAYS_DIE" in source:
            os._exit(3)
        barrier = re.search(r"RAY_TEST_BARRIER (\S+) (\d+)", source or "")
        if barrier:
            directory, n = Path(barrier.group(1)), int(barrier.group(2))
            (directory / f"at-{os.getpid()}-{uuid.uuid4().hex[:8]}").write_text("")
            deadline = time.monotonic() + 120
            while len(list(directory.glob("at-*"))) < n and time.monotonic() < deadline:
                time.sleep(0.05)
        if gate:
            directory = Path(gate.group(1))
            (directory / f"started-{os.getpid()}").write_text("")
            deadline = time.monotonic() + 120
            while not (directory / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        result = super().evaluate(request)
        if gate:
            (Path(gate.group(1)) / f"finished-{os.getpid()}").write_text("")
        return result

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        if request.source and "RAY_TEST_ALWAYS_DIE" in request.source:
            os._exit(3)
        return super().sanitize(request)
