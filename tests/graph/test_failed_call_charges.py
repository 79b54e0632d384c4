"""Spending on calls that fail (issue 40, fault 4): a call that reached the endpoint and then failed is charged an
estimate (its prompt; and its `max_tokens` when the endpoint may have generated: a timeout, a truncated or
unreadable reply), recorded on its `failed` record; one that never reached it (or was refused at once) costs
nothing. Under a cap a call reserves what it can use (prompt + `max_output_tokens`), not everything left: a call
lost in flight (kill -9) keeps that estimate. graph.llm.ask against the scripted OpenAI-compatible server (a FAKE
model) and a closed port."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from graph.contract import JobSpec
from graph.deps import Deps
from graph.llm import ask, call_ledger, prompt_tokens
from settings import AgentSettings
from tests.support.openai_stub import Reply, ScriptedOpenAI

PRICES = {"coder-model": {"input": 2.0, "output": 8.0}}
CAP, MAX_OUT = 100_000, 500
SYSTEM, USER = "system " * 40, "prompt " * 120


def _deps(base_url: str, tmp_path: Path) -> Deps:
    spec = JobSpec(task="vector_add", precision="fp32", models={"coder": "coder-model"}, spending_cap={"tokens": CAP})
    settings = AgentSettings(
        base_url=base_url, api_key="test-key", state_dir=tmp_path, prices=PRICES, max_output_tokens=MAX_OUT, llm_timeout_s=0.5
    )
    return Deps(settings=settings, evaluator=None, spec=spec)  # type: ignore[arg-type]


def _ledger_of(base_url: str, tmp_path: Path) -> list[dict[str, Any]]:
    state = {"job_id": "job_0123456789abcdef", "spec": {}, "round": 1, "debug_step": 0, "llm_calls": []}
    seen: list[dict[str, Any]] = []
    with call_ledger(lambda call: seen.append(call) or True), pytest.raises(Exception):  # noqa: B017 - any failure
        ask(state, "coder", SYSTEM, USER, _deps(base_url, tmp_path))
    return seen


@pytest.mark.parametrize(
    ("reply", "charged_output"),
    [
        (Reply("late", delay_s=3.0), MAX_OUT),  # a client timeout: it may have generated
        (Reply(raw_body="<html>502</html>"), MAX_OUT),  # an unreadable 200: it generated something
        (Reply(status=500), 0),  # it took the prompt and answered an error
        (Reply(status=400, error_message="bad"), None),  # refused before any work: nothing
    ],
    ids=["timeout", "garbled", "server_error", "refused"],
)
def test_a_call_that_failed_is_charged_its_estimate(tmp_path, reply, charged_output):
    with ScriptedOpenAI({"coder-model": [reply]}, api_key="test-key") as server:
        sent, failed = _ledger_of(server.base_url, tmp_path)
    prompt = prompt_tokens(SYSTEM, USER)
    assert sent["status"] == "sent" and sent["input_tokens"] == prompt
    assert sent["output_tokens"] == MAX_OUT  # reserved what the call can use, not everything left under the cap
    assert failed["status"] == "failed" and failed["send_id"] == sent["send_id"]
    if charged_output is None:
        assert (failed["input_tokens"], failed["output_tokens"], failed["cost_usd"]) == (0, 0, 0.0)
        return
    assert (failed["input_tokens"], failed["output_tokens"]) == (prompt, charged_output)
    assert failed["cost_usd"] == pytest.approx((prompt * 2.0 + charged_output * 8.0) / 1e6)
    assert "charged an estimate" in failed["message"]


def test_a_call_that_never_reached_the_endpoint_costs_nothing(tmp_path):
    # Bound but never listening, and held for the whole call: connections are refused, and no other test's server
    # can take the port meanwhile (a port closed before the call could be).
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        sent, failed = _ledger_of(f"http://127.0.0.1:{s.getsockname()[1]}/v1", tmp_path)
    assert sent["status"] == "sent" and failed["status"] == "failed"
    assert (failed["input_tokens"], failed["output_tokens"], failed["cost_usd"]) == (0, 0, 0.0)
