"""The job's spending cap (graph/spending.py) against the scripted OpenAI-compatible server (real client
path, real `usage` fields), real nvcc compiles and a FAKE GPU (gpu.fake.FakeGpuEvaluator).

The server bills like a real endpoint (`count_prompts`): a reply's prompt tokens are the request's, counted
with tiktoken, and its completion tokens (50 unless a reply says otherwise) never pass the request's
`max_tokens`. The job's prompts are about 1,000 tokens each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

import graph.llm
from graph.contract import JobSpec, SpendingCap
from graph.runner import start_job
from settings import AgentSettings, Price
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k
from tests.support.openai_stub import Reply, ScriptedOpenAI


def spec(**kw) -> JobSpec:
    return JobSpec(**{"task": "vector_add", "precision": "fp32", **kw})


@pytest.fixture
def billed() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI({}, count_prompts=True) as s:
        yield s


def _tokens(server: ScriptedOpenAI) -> int:
    usage = server.usage_totals()
    return usage["input_tokens"] + usage["output_tokens"]


def test_token_cap_stops_before_the_next_call_would_pass_it_and_keeps_the_best_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer):
    billed.add(MODELS["planner"], *[k.plan(f"Plan {i}") for i in range(3)])
    billed.add(MODELS["coder"], *[k.reply(k.fast_kernel(1.5 + i)) for i in range(3)])
    # Round 1 costs about 2,200 tokens; the second planner call fits within 3,500, a coder call after it would not.
    out = start_job(
        spec(rounds=3, debug=0, spending_cap={"tokens": 3500}),
        job_id="tokcap",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed),
    )
    assert out.status == "finished" and out.stop_reason == "spending_cap", out.message
    assert [c.role for c in out.llm_calls] == ["planner", "coder", "planner"]
    spent = out.totals.input_tokens + out.totals.output_tokens
    assert spent == _tokens(billed) <= 3500
    assert out.best is not None and out.best.attempt_id == "tokcap:r1:d0" and out.best.score == 1.5
    assert [(r.round, r.verdict) for r in out.rounds] == [(1, "ok"), (2, "no_attempt")]
    assert "stopped at the spending cap after 2 of 3 round(s)" in out.message and f"{spent} of 3500 tokens" in out.message
    assert billed.remaining() == {MODELS["planner"]: 1, MODELS["coder"]: 2}  # never asked


def test_dollar_cap_counts_priced_calls_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer):
    # $1 per 1M input, $4 per 1M output: a call of about 1,000 + 50 tokens costs about $0.0012.
    billed.add(MODELS["planner"], *[k.plan() for _ in range(4)])
    billed.add(MODELS["coder"], *[k.reply(k.fast_kernel(2.0)) for _ in range(4)])
    prices = {m: Price(input=1.0, output=4.0) for m in MODELS.values()}
    out = start_job(
        spec(rounds=4, debug=0, spending_cap={"usd": 0.0055}),
        job_id="usdcap",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed, prices=prices),
    )
    assert out.status == "finished" and out.stop_reason == "spending_cap", out.message
    usage = billed.usage_totals()
    assert len(out.llm_calls) == 4 and out.totals.cost_usd == pytest.approx((usage["input_tokens"] + 4 * usage["output_tokens"]) / 1e6)
    assert out.totals.cost_usd <= 0.0055  # a fifth call would pass it
    assert len(out.rounds) == 2 and out.best.score == 2.0


def test_cap_reached_after_a_failing_kernel_ends_without_debugging_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer):
    billed.add(MODELS["planner"], k.plan())
    billed.add(MODELS["coder"], k.reply(k.SYNTAX_ERROR_KERNEL))
    billed.add(MODELS["debugger"], k.reply(k.fast_kernel(1.8)))
    out = start_job(
        spec(rounds=1, debug=2, spending_cap={"tokens": 2500}),
        job_id="nodebug",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed),
    )
    assert out.status == "no_correct_kernel" and out.stop_reason == "spending_cap", out.message
    assert [a.verdict for a in out.attempts] == ["compile_error"]
    assert billed.remaining() == {MODELS["debugger"]: 1}


def test_a_job_that_ends_within_its_cap_has_no_stop_reason_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer):
    billed.add(MODELS["planner"], Reply(k.plan(), completion_tokens=5))
    billed.add(MODELS["coder"], Reply(k.reply(k.fast_kernel(1.2)), completion_tokens=5))
    out = start_job(
        spec(rounds=1, debug=0, spending_cap={"tokens": 10_000, "usd": 5}),
        job_id="within",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed, prices={m: Price(input=1, output=1) for m in MODELS.values()}),
    )
    assert out.status == "finished" and out.stop_reason is None and "spending cap" not in out.message
    first, second = billed.requests  # every capped call is sent with its answer bounded by what is left,
    most = AgentSettings.model_fields["max_output_tokens"].default  # and by what one call may use (issue 40)
    assert first.body["max_completion_tokens"] == min(10_000 - first.reply.prompt_tokens, most)
    assert second.body["max_completion_tokens"] == min(10_000 - first.reply.prompt_tokens - 5 - second.reply.prompt_tokens, most)


def _padded_prompts(monkeypatch, first: int, growth: int) -> list[int]:
    """Make the n-th LLM call's prompt exactly `first + (n - 1) * growth` tokens (as graph.llm.prompt_tokens
    counts them) by padding its system prompt; returns the list of the counts asked for."""
    asked: list[int] = []
    real_ask = graph.llm.ask

    def padded_ask(state, role, system, user, deps, schema=None):
        target = first + len(asked) * growth
        asked.append(target)
        padded = system + "\n"
        while (short := target - graph.llm.prompt_tokens(padded, user)) > 0:
            padded += " pad" * short  # one token each
        assert graph.llm.prompt_tokens(padded, user) == target
        return real_ask(state, role, padded, user, deps, schema)

    monkeypatch.setattr(graph.llm, "ask", padded_ask)
    return asked


def test_a_first_prompt_larger_than_the_cap_is_never_sent_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer, monkeypatch):
    asked = _padded_prompts(monkeypatch, first=1400, growth=0)
    billed.add(MODELS["planner"], k.plan())
    billed.add(MODELS["coder"], k.reply(k.fast_kernel(1.5)))
    out = start_job(
        spec(rounds=2, debug=0, spending_cap={"tokens": 1000}),
        job_id="toobig",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed),
    )
    assert asked == [1400]  # the planner's call was prepared, then refused
    assert billed.requests == []  # no call went out
    assert out.status == "no_correct_kernel" and out.stop_reason == "spending_cap", out.message
    assert out.llm_calls == [] and "spent 0 of 1000 tokens" in out.message


def test_growing_prompts_end_within_the_cap_with_fake_gpu(tmp_path, billed, fake_gpu, checkpointer, monkeypatch):
    asked = _padded_prompts(monkeypatch, first=1350, growth=1000)  # 1,400 tokens a call with its answer, +1,000 a call
    billed.add(MODELS["planner"], *[k.plan(f"Plan {i}") for i in range(4)])
    billed.add(MODELS["coder"], *[k.reply(k.fast_kernel(1.5 + i)) for i in range(4)])
    out = start_job(
        spec(rounds=4, debug=0, spending_cap={"tokens": 11_000}),
        job_id="growing",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, billed),
    )
    assert out.status == "finished" and out.stop_reason == "spending_cap", out.message
    spent = out.totals.input_tokens + out.totals.output_tokens
    assert spent == _tokens(billed) <= 11_000  # what the endpoint billed, and what the job says
    assert f"spent {spent} of 11000 tokens" in out.message
    assert len(billed.requests) == 3 and len(asked) == 4  # the fourth call (4,350 tokens of prompt) did not fit


def test_dollar_cap_with_an_unpriced_model_is_refused_before_any_call_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    out = start_job(
        spec(rounds=1, spending_cap={"usd": 1.0}),
        job_id="unpriced",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
    )  # prices={}: nothing is priced
    assert out.status == "failed" and "has no price" in out.message and "CUDAMASTER_AGENT__PRICES" in out.message
    assert server.requests == [] and fake_gpu.evaluations == []


@pytest.mark.parametrize(
    "cap", [{}, {"usd": 0}, {"usd": -1}, {"usd": float("inf")}, {"usd": float("nan")}, {"tokens": 0}, {"tokens": -5}, {"dollars": 3}]
)
def test_bad_spending_caps_are_refused(cap):
    with pytest.raises(ValidationError, match="spending_cap"):
        spec(spending_cap=cap)


def test_spending_cap_needs_dollars_or_tokens():
    with pytest.raises(ValidationError, match="needs `usd`"):
        SpendingCap()
