"""Every paid LLM call is on record before it is sent (fault 4 of issue 10), and none starts once the job is
stopping (fault 5): graph.llm.ask against the scripted OpenAI-compatible server (a real HTTP endpoint)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.errors import GraphDrained

from graph.contract import JobSpec
from graph.deps import Deps
from graph.llm import LlmError, ask, call_ledger, prompt_tokens
from profiling.tokens import count_tokens
from settings import AgentSettings
from tests.support.openai_stub import Reply, ScriptedOpenAI

PRICES = {"coder-model": {"input": 2.0, "output": 8.0}}


def _state() -> dict[str, Any]:
    spec = {"task": "vector_add", "precision": "fp32", "models": {"coder": "coder-model"}}
    return {"job_id": "job_0123456789abcdef", "spec": spec, "round": 1, "debug_step": 0, "llm_calls": []}


def _settings(server: ScriptedOpenAI, tmp_path: Path) -> Deps:
    """What graph.llm.ask is given: the agent's settings and the job's spec (no evaluator: no GPU work here)."""
    settings = AgentSettings(base_url=server.base_url, api_key="test-key", state_dir=tmp_path, prices=PRICES)
    return Deps(settings=settings, evaluator=None, spec=JobSpec.model_validate(_state()["spec"]))  # type: ignore[arg-type]


def test_a_call_is_recorded_sent_before_the_endpoint_sees_it_then_paid_with_fake_llm(tmp_path):
    with ScriptedOpenAI({"coder-model": [Reply("kernel", prompt_tokens=300, completion_tokens=40)]}, api_key="test-key") as server:
        seen: list[tuple[dict[str, Any], int]] = []

        def ledger(call: dict[str, Any]) -> bool:
            seen.append((call, len(server.requests)))  # how many requests the endpoint had when the call was recorded
            return True

        with call_ledger(ledger):
            text, record = ask(_state(), "coder", "system " * 50, "prompt " * 150, _settings(server, tmp_path))
        assert text == "kernel" and len(server.requests) == 1
    [(sent, requests_before)] = seen
    assert requests_before == 0 and sent["status"] == "sent"
    assert sent["send_id"] == record["send_id"] and sent["call_id"] == record["call_id"]
    counted = prompt_tokens("system " * 50, "prompt " * 150)  # the prompt's exact tokens (tiktoken) and the chat format's
    assert counted == count_tokens("system " * 50).tokens + count_tokens("prompt " * 150).tokens + 9
    assert sent["input_tokens"] == counted and sent["output_tokens"] == 0  # no cap: no output bound to reserve
    assert sent["cost_usd"] == pytest.approx(counted * 2.0 / 1e6)
    assert record["status"] == "paid" and record["input_tokens"] == 300 and record["output_tokens"] == 40


def test_a_call_the_endpoint_refused_is_recorded_failed_with_fake_llm(tmp_path):
    with ScriptedOpenAI({"coder-model": [Reply(status=400, error_message="bad request")]}, api_key="test-key") as server:
        seen: list[dict[str, Any]] = []
        with call_ledger(lambda call: seen.append(call) or True), pytest.raises(LlmError):
            ask(_state(), "coder", "s", "p", _settings(server, tmp_path))
    assert [c["status"] for c in seen] == ["sent", "failed"] and seen[0]["send_id"] == seen[1]["send_id"]


def test_no_call_is_sent_once_the_ledger_refuses_it_with_fake_llm(tmp_path):
    with ScriptedOpenAI({"coder-model": [Reply("kernel")]}, api_key="test-key") as server:
        with call_ledger(lambda call: False), pytest.raises(GraphDrained):
            ask(_state(), "coder", "s", "p", _settings(server, tmp_path))
        assert server.requests == []


def test_every_call_of_a_job_goes_through_the_ledger_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    """The ledger set around a run reaches the graph's nodes (their threads included)."""
    from graph.runner import JobSpec, start_job
    from tests.support import kernels as k

    from .conftest import MODELS, agent_settings

    server.add(MODELS["planner"], k.plan("Grid"), k.plan("Again"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.0)))
    ledger: list[tuple[str, int]] = []

    def record(call: dict[str, Any]) -> bool:
        ledger.append((call["status"], len(server.requests)))
        return True

    with call_ledger(record):
        out = start_job(
            JobSpec(task="vector_add", precision="fp32", rounds=2, debug=0),
            job_id="ledgered",
            checkpointer=checkpointer,
            evaluator=fake_gpu,
            settings=agent_settings(tmp_path, server),
        )
    assert out.status == "finished", out.message
    assert len(server.requests) == 4
    assert ledger == [("sent", n) for n in range(4)]  # each recorded before its request reached the endpoint
    assert sorted(c.send_id for c in out.llm_calls) == sorted({c.send_id for c in out.llm_calls})
