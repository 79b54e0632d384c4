from __future__ import annotations

from pathlib import Path

import pytest

from gpu.fake import FakeGpuEvaluator
from graph.runner import make_checkpointer
from settings import AgentSettings, HarnessSettings, RetrySettings, get_harness_settings
from tests.support.machine_env import clear_settings_env
from tests.support.openai_stub import ScriptedOpenAI
from tests.support.workers import compile_cache

MODELS = {"planner": "planner-model", "coder": "coder-model", "compiler": "compiler-model", "debugger": "debugger-model"}


@pytest.fixture(scope="session")
def harness_cache(tmp_path_factory) -> Path:
    # The run's one nvcc object cache (for all xdist workers and test modules): the same source compiles once.
    return compile_cache(tmp_path_factory)


@pytest.fixture
def harness_settings(harness_cache) -> HarnessSettings:
    return get_harness_settings(cache_dir=harness_cache)


@pytest.fixture
def fake_gpu(harness_settings) -> FakeGpuEvaluator:
    return FakeGpuEvaluator(harness_settings)


@pytest.fixture
def checkpointer(tmp_path):
    return make_checkpointer(f"sqlite:///{tmp_path / 'checkpoints.db'}")


def agent_settings(tmp_path: Path, server: ScriptedOpenAI | None, api_key: str | None = "test-key", **extra) -> AgentSettings:
    roles = {role: {"model": model} for role, model in MODELS.items()}
    values = dict(
        state_dir=tmp_path / "state",
        roles=roles,
        retry=RetrySettings(initial_interval_s=0.01, max_interval_s=0.05, jitter=False),
        prices={},
        base_url=server.base_url if server else None,
        api_key=api_key if server else None,
    )
    values.update(extra)
    return AgentSettings(**values)


@pytest.fixture
def server():
    s = ScriptedOpenAI({})
    s.start()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _no_ambient_llm_env(monkeypatch):
    # The tests configure endpoints explicitly; a developer's CUDAMASTER_* environment must not leak in.
    # The machine's own harness facts stay (nvcc, and where bubblewrap is: the H200 carries it unpacked).
    clear_settings_env(monkeypatch)
