"""uvicorn factories for the service with the REAL agent (graph.runner).

- create_fake_gpu_app: real LangGraph agent, real nvcc compiles, FAKE GPU results
  (gpu.fake.FakeGpuEvaluator); the LLM endpoint comes from CUDAMASTER_AGENT__BASE_URL (the tests
  point it at tests/support/openai_stub.py).
- create_gpu_app: everything real (the service's default local GPU evaluator).
- create_harness_without_gpu_app: real agent, real harness in the real sandbox, FAKE GPU CHECK: evaluate()
  skips its GPU check, so kernels compile, link and their driver starts here (host code in constructors
  runs) until CUDA initialisation fails. The baseline-only evaluation before round 1 is a FAKE GPU RESULT
  (ok): without a GPU it cannot pass, and a job whose baseline fails ends there, before any candidate.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.main import create_app


def create_fake_gpu_app():
    from gpu.fake import FakeGpuEvaluator
    from settings import get_harness_settings

    cache = Path(os.environ.get("TEST_HARNESS_CACHE", "/tmp/cm-harness-cache"))
    return create_app(evaluator=FakeGpuEvaluator(get_harness_settings(cache_dir=cache)))


def create_gpu_app():
    return create_app()


def create_harness_without_gpu_app():
    import importlib

    from gpu.fake import FakeGpuEvaluator
    from gpu.local import LocalEvaluator
    from settings import get_harness_settings

    importlib.import_module("bench_tasks.harness.evaluate").require_gpu = lambda settings: None  # FAKE GPU CHECK

    class HarnessWithFakeBaselineResult(LocalEvaluator):
        """The real harness for candidates; a FAKE GPU RESULT (ok) for the baseline alone."""

        def evaluate(self, request):
            if request.source is None:
                return FakeGpuEvaluator(self.settings).evaluate(request)
            return super().evaluate(request)

    cache = Path(os.environ.get("TEST_HARNESS_CACHE", "/tmp/cm-harness-cache"))
    return create_app(evaluator=HarnessWithFakeBaselineResult(get_harness_settings(cache_dir=cache)))
