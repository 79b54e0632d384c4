"""The job's spending cap (graph/spending.py) against the scripted OpenAI-compatible server (real client
path, real `usage` fields), real nvcc compiles and a FAKE GPU (graph.testing.FakeGpuEvaluator).

Every scripted reply costs 100 input + 50 output tokens unless it says otherwise."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graph.contract import JobSpec, SpendingCap
from graph.runner import start_job
from graph.settings import Price
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k
from tests.support.openai_stub import Reply


def spec(**kw) -> JobSpec:
    return JobSpec(**{"task": "vector_add", "precision": "fp32", **kw})


def test_token_cap_stops_before_the_next_call_would_pass_it_and_keeps_the_best_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    server.add(MODELS["planner"], *[k.plan(f"Plan {i}") for i in range(3)])
    server.add(MODELS["coder"], *[k.reply(k.fast_kernel(1.5 + i)) for i in range(3)])
    # 300 tokens after round 1; the second planner call (450 then) is allowed, a coder call would pass 500.
    out = start_job(
        spec(rounds=3, debug=0, spending_cap={"tokens": 500}),
        job_id="tokcap",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
    )
    assert out.status == "finished" and out.stop_reason == "spending_cap", out.message
    assert [c.role for c in out.llm_calls] == ["planner", "coder", "planner"]
    assert out.totals.input_tokens + out.totals.output_tokens == 450  # within the cap of 500
    assert out.best is not None and out.best.attempt_id == "tokcap:r1:d0" and out.best.score == 1.5
    assert [(r.round, r.verdict) for r in out.rounds] == [(1, "ok"), (2, "no_attempt")]
    assert "stopped at the spending cap after 2 of 3 round(s)" in out.message and "450 of 500 tokens" in out.message
    assert server.remaining() == {MODELS["planner"]: 1, MODELS["coder"]: 2}  # never asked


def test_dollar_cap_counts_priced_calls_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    # $1 per 1M input, $4 per 1M output: 100 + 50 tokens cost $0.0003 per call.
    server.add(MODELS["planner"], *[k.plan() for _ in range(4)])
    server.add(MODELS["coder"], *[k.reply(k.fast_kernel(2.0)) for _ in range(4)])
    prices = {m: Price(input=1.0, output=4.0) for m in MODELS.values()}
    out = start_job(
        spec(rounds=4, debug=0, spending_cap={"usd": 0.0013}),
        job_id="usdcap",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server, prices=prices),
    )
    assert out.status == "finished" and out.stop_reason == "spending_cap", out.message
    assert len(out.llm_calls) == 4 and out.totals.cost_usd == pytest.approx(0.0012)  # a fifth call would pass $0.0013
    assert len(out.rounds) == 2 and out.best.score == 2.0


def test_cap_reached_after_a_failing_kernel_ends_without_debugging_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    server.add(MODELS["planner"], k.plan())
    server.add(MODELS["coder"], k.reply(k.SYNTAX_ERROR_KERNEL))
    server.add(MODELS["debugger"], k.reply(k.fast_kernel(1.8)))
    out = start_job(
        spec(rounds=1, debug=2, spending_cap={"tokens": 400}),
        job_id="nodebug",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
    )
    assert out.status == "no_correct_kernel" and out.stop_reason == "spending_cap", out.message
    assert [a.verdict for a in out.attempts] == ["compile_error"]
    assert server.remaining() == {MODELS["debugger"]: 1}


def test_a_job_that_ends_within_its_cap_has_no_stop_reason_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    server.add(MODELS["planner"], Reply(k.plan(), prompt_tokens=10, completion_tokens=5))
    server.add(MODELS["coder"], Reply(k.reply(k.fast_kernel(1.2)), prompt_tokens=10, completion_tokens=5))
    out = start_job(
        spec(rounds=1, debug=0, spending_cap={"tokens": 1000, "usd": 5}),
        job_id="within",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server, prices={m: Price(input=1, output=1) for m in MODELS.values()}),
    )
    assert out.status == "finished" and out.stop_reason is None and "spending cap" not in out.message


def test_dollar_cap_with_an_unpriced_model_is_refused_before_any_call(tmp_path, server, fake_gpu, checkpointer):
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
