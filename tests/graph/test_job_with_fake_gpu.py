"""Full jobs against the scripted OpenAI-compatible server (real ChatOpenAI client path) with real nvcc
compiles and a FAKE GPU (gpu.fake.FakeGpuEvaluator): verdicts and speedups come from markers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graph.contract import Answer, JobSpec
from graph.runner import job_state, resume_job, start_job
from settings import Price
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k
from tests.support.openai_stub import Reply


def spec(**kw) -> JobSpec:
    return JobSpec(**{"task": "vector_add", "precision": "fp32", **kw})


def script(server, role: str, *replies) -> None:
    server.add(MODELS[role], *replies)


def verdicts(outcome) -> list[tuple[str, str]]:
    return [(a.attempt_id.split(":", 1)[1], a.verdict) for a in outcome.attempts]


def test_happy_path_over_three_rounds_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan("Grid"), k.plan("Vectorize"), k.plan("Unroll"))
    script(server, "coder", k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5)), k.reply(k.fast_kernel(2.0)))
    events = []
    out = start_job(
        spec(rounds=3),
        job_id="happy",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
        on_event=events.append,
    )
    assert out.status == "finished", out.message
    assert verdicts(out) == [("r1:d0", "ok"), ("r2:d0", "ok"), ("r3:d0", "ok")]
    assert out.best.attempt_id == "happy:r2:d0" and out.best.score == 2.5
    assert out.best.evaluation["rows"][0]["speedup"] == 2.5  # per-size measurements kept
    assert [r.strategy_title for r in out.rounds] == ["Grid", "Vectorize", "Unroll"]
    # baseline + one evaluation per round; the GPU was profiled for the baseline and each correct kernel
    assert fake_gpu.evaluations[0] is None and len(fake_gpu.evaluations) == 4
    assert len(fake_gpu.profiles) == 4
    # round 2's planner saw round 1's result and the best kernel so far
    planner_prompts = [r.prompt_text for r in server.answered() if r.model == MODELS["planner"]]
    assert "round 1: Grid -> ok, P = 1.500" in planner_prompts[1]
    assert "FAKE_SPEEDUP 1.5" in planner_prompts[1]
    assert "NVIDIA H200, compute capability 9.0, 132 SMs, 60 MiB L2" in planner_prompts[0]
    assert "FAKE PROFILE" in planner_prompts[0]
    # progress events
    types = {e.type for e in events}
    assert {"node", "attempt", "llm_call", "finished"} <= types
    attempt_events = [e for e in events if e.type == "attempt"]
    assert [e.attempt_id for e in attempt_events] == [a.attempt_id for a in out.attempts]
    assert all(e.evaluation["verdict"] == "ok" for e in attempt_events)
    verify_events = [e for e in events if e.type == "node" and e.node == "verify"]
    assert [(e.round, e.speedup) for e in verify_events] == [(1, 1.5), (2, 2.5), (3, 2.0)]
    assert events[-1].type == "finished" and events[-1].status == "finished"
    assert server.remaining() == {}


def test_compile_error_fixed_by_debug_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.SYNTAX_ERROR_KERNEL))
    script(server, "debugger", k.reply(k.fast_kernel(1.8), "Fixed the missing semicolon."))
    out = start_job(
        spec(rounds=1, debug=3), job_id="fix", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "finished", out.message
    assert verdicts(out) == [("r1:d0", "compile_error"), ("r1:d1", "ok")]
    assert out.attempts[0].role == "coder" and out.attempts[1].role == "debugger"
    assert "error" in out.attempts[0].compile_log
    debugger_prompt = next(r.prompt_text for r in server.answered() if r.model == MODELS["debugger"])
    assert "compile_error" in debugger_prompt and "int i = blockIdx.x * blockDim.x + threadIdx.x\n" in debugger_prompt
    assert out.best.attempt_id == "fix:r1:d1"


def test_debug_budget_runs_out_then_next_round_starts_from_best_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan("Grid"), k.plan("Broken idea"), k.plan("Another"))
    script(server, "coder", k.reply(k.fast_kernel(2.0)), k.reply(k.SYNTAX_ERROR_KERNEL), k.reply(k.fast_kernel(1.2)))
    script(server, "debugger", k.reply(k.SYNTAX_ERROR_KERNEL.replace("C[i]", "C[ i ]")), k.reply(k.WRONG_KERNEL))
    out = start_job(
        spec(rounds=3, debug=2), job_id="budget", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "finished", out.message
    assert verdicts(out) == [
        ("r1:d0", "ok"),
        ("r2:d0", "compile_error"),
        ("r2:d1", "compile_error"),
        ("r2:d2", "wrong_answer"),
        ("r3:d0", "ok"),
    ]
    assert out.rounds[1].verdict == "wrong_answer" and out.rounds[1].debug_steps == 2
    # round 3's coder got round 1's kernel (the best so far) as its starting point, not round 2's failure
    coder_prompts = [r.prompt_text for r in server.answered() if r.model == MODELS["coder"]]
    assert "FAKE_SPEEDUP 2.0" in coder_prompts[2] and "FAKE_WRONG" not in coder_prompts[2]
    assert out.best.attempt_id == "budget:r1:d0"  # P 2.0 beats round 3's 1.2


def test_one_round_without_debug_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan(), k.plan())
    script(server, "coder", k.reply(k.WRONG_KERNEL), k.reply(k.fast_kernel(1.3)))
    settings = agent_settings(tmp_path, server)
    out = start_job(spec(rounds=1, debug=0), job_id="r1d0-bad", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "no_correct_kernel"
    assert out.best is None and verdicts(out) == [("r1:d0", "wrong_answer")]
    assert "no correct kernel in 1 attempt" in out.message
    assert not any(r.model == MODELS["debugger"] for r in server.requests)
    out = start_job(spec(rounds=1, debug=0), job_id="r1d0-good", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished" and out.best.score == 1.3 and len(out.rounds) == 1


def test_no_correct_kernel_keeps_every_attempt_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan(), k.plan())
    script(server, "coder", k.reply(k.WRONG_KERNEL), k.reply(k.SYNTAX_ERROR_KERNEL))
    script(server, "debugger", k.reply(k.WRONG_KERNEL.replace("A[i] - B[i]", "A[i] * B[i]")), "I am not sure what to change.")
    out = start_job(
        spec(rounds=2, debug=1), job_id="none", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "no_correct_kernel"
    assert verdicts(out) == [("r1:d0", "wrong_answer"), ("r1:d1", "wrong_answer"), ("r2:d0", "compile_error"), ("r2:d1", "no_code")]
    assert all(a.source or a.verdict == "no_code" for a in out.attempts)


def test_token_and_cost_totals_equal_what_the_server_reported_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(
        server,
        "planner",
        Reply(k.plan(), prompt_tokens=1200, completion_tokens=300, cached_tokens=1000, reasoning_tokens=200),
        Reply(k.plan(), prompt_tokens=1500, completion_tokens=350, cached_tokens=0, reasoning_tokens=100),
    )
    script(
        server,
        "coder",
        Reply(k.reply(k.SYNTAX_ERROR_KERNEL), prompt_tokens=2000, completion_tokens=900, reasoning_tokens=600),
        Reply(k.reply(k.fast_kernel(1.4)), prompt_tokens=2100, completion_tokens=800, cached_tokens=512),
    )
    script(
        server,
        "debugger",
        Reply(k.reply(k.fast_kernel(1.1)), prompt_tokens=3000, completion_tokens=700, cached_tokens=64, reasoning_tokens=50),
    )
    prices = {
        MODELS["planner"]: Price(input=2.0, output=8.0, cached_input=0.5),
        MODELS["coder"]: Price(input=1.0, output=4.0),
        MODELS["debugger"]: Price(input=3.0, output=12.0, cached_input=0.3),
    }
    out = start_job(
        spec(rounds=2, debug=1),
        job_id="tokens",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server, prices=prices),
    )
    assert out.status == "finished", out.message
    reported = server.usage_totals()
    for key in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"):
        assert getattr(out.totals, key) == reported[key], key
    expected = (
        (1200 - 1000) * 2
        + 1000 * 0.5
        + 300 * 8
        + 1500 * 2
        + 350 * 8  # planner
        + 2000 * 1
        + 900 * 4
        + 2100 * 1
        + 800 * 4  # coder (cached input at the input price)
        + (3000 - 64) * 3
        + 64 * 0.3
        + 700 * 12
    ) / 1e6  # debugger
    assert out.totals.cost_usd == pytest.approx(expected, rel=1e-9)
    assert sum(r.cost_usd for r in out.rounds) == pytest.approx(expected, rel=1e-9)
    call = out.llm_calls[0]
    assert call.role == "planner" and call.model == MODELS["planner"] and call.latency_s >= 0
    assert (call.input_tokens, call.output_tokens, call.cached_tokens, call.reasoning_tokens) == (1200, 300, 1000, 200)


def test_rate_limit_and_server_error_then_success_are_retried_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", Reply(status=429), Reply(status=429), Reply(k.plan()))
    script(server, "coder", Reply(status=503), Reply(k.reply(k.fast_kernel(1.7))))
    out = start_job(
        spec(rounds=1, debug=0), job_id="retry", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "finished", out.message
    assert [r.status for r in server.requests] == [429, 429, 200, 503, 200]
    assert [c.role for c in out.llm_calls] == ["planner", "coder"]  # failed tries are not billed calls
    assert out.totals.input_tokens == server.usage_totals()["input_tokens"]


def test_transient_errors_that_persist_fail_the_job_resumably_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", *[Reply(status=500)] * 3)
    settings = agent_settings(tmp_path, server)
    settings.retry.max_attempts = 3
    out = start_job(spec(rounds=1, debug=0), job_id="down", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "kept failing after 3 attempts" in out.message
    assert "cudamaster resume down" in out.message
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.fast_kernel(1.2)))
    out = resume_job("down", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished" and len(fake_gpu.evaluations) == 2  # the baseline was not evaluated again


def test_compile_error_is_never_retried_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.SYNTAX_ERROR_KERNEL))
    out = start_job(
        spec(rounds=1, debug=0), job_id="noretry", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "no_correct_kernel" and verdicts(out) == [("r1:d0", "compile_error")]
    assert len(fake_gpu.compiles) == 1


def test_manual_mode_answered_through_the_graph_api_with_fake_gpu(tmp_path, fake_gpu, checkpointer):
    settings = agent_settings(tmp_path, None)  # no endpoint configured at all: every role asks a person
    events = []
    out = start_job(
        spec(rounds=1, debug=1), job_id="manual", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, on_event=events.append
    )
    assert out.status == "waiting_for_input"
    assert out.question.role == "planner" and "no LLM endpoint" in out.question.question
    assert "vector_add_optimized" in out.question.system
    assert events[-2].type == "interrupt" and events[-2].question.role == "planner"
    state = job_state("manual", checkpointer, settings)
    assert state["interrupt"]["role"] == "planner" and state["next"] == ["plan"]
    # resuming without an answer keeps waiting and runs nothing
    assert resume_job("manual", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings).status == "waiting_for_input"
    out = resume_job("manual", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, answer=k.plan("Manual plan"))
    assert out.status == "waiting_for_input" and out.question.role == "coder"
    assert "Manual plan" in out.question.prompt
    out = resume_job("manual", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, answer=k.reply(k.SYNTAX_ERROR_KERNEL))
    assert out.status == "waiting_for_input" and out.question.role == "debugger"
    out = resume_job("manual", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, answer=k.reply(k.fast_kernel(2.2)))
    assert out.status == "finished", out.message
    assert verdicts(out) == [("r1:d0", "compile_error"), ("r1:d1", "ok")]
    assert [c.model for c in out.llm_calls] == ["manual"] * 3 and out.totals.cost_usd == 0


def test_an_answer_is_fed_only_to_the_question_it_answers_with_fake_gpu(tmp_path, fake_gpu, checkpointer):
    settings = agent_settings(tmp_path, None)  # every role asks a person
    out = start_job(spec(rounds=1, debug=1), job_id="bound", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    planner_answer = Answer(question_id=out.question.question_id, text=k.plan("Manual plan"))
    out = resume_job("bound", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, answer=planner_answer)
    assert out.status == "waiting_for_input" and out.question.role == "coder"
    coder_question = out.question.question_id
    assert coder_question != planner_answer.question_id
    # The planner's answer again (a service that resumed the job with the answer it had): the coder never sees it.
    again = resume_job("bound", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, answer=planner_answer)
    assert again.status == "waiting_for_input" and again.question.question_id == coder_question
    assert f"was for question {planner_answer.question_id}" in again.message
    assert again.attempts == [] and [c.role for c in again.llm_calls] == ["planner"] and fake_gpu.compiles == []
    out = resume_job(
        "bound",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=settings,
        answer=Answer(question_id=coder_question, text=k.reply(k.fast_kernel(1.7))),
    )
    assert out.status == "finished" and [a.verdict for a in out.attempts] == ["ok"]
    assert [c.response for c in out.llm_calls] == [planner_answer.text, k.reply(k.fast_kernel(1.7))]


def test_manual_mode_on_request_even_with_an_endpoint_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    out = start_job(
        spec(rounds=1, manual=True),
        job_id="review",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
    )
    assert out.status == "waiting_for_input" and "manual mode" in out.question.question
    assert server.requests == []


def test_stop_at_a_step_boundary_and_resume_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan(), k.plan())
    script(server, "coder", k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(1.6)))
    settings = agent_settings(tmp_path, server)
    seen = []
    out = start_job(
        spec(rounds=2, debug=0),
        job_id="stop",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=settings,
        on_event=seen.append,
        should_stop=lambda: any(e.type == "node" and e.node == "verify" for e in seen),
    )
    assert out.status == "stopped" and [a.attempt_id for a in out.attempts] == ["stop:r1:d0"]
    # stopped at a step boundary shortly after verify (LangGraph drains before its next superstep)
    assert job_state("stop", checkpointer, settings)["next"] in (["profile"], ["filter"], ["round_end"])
    out = resume_job("stop", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished"
    assert [a.attempt_id for a in out.attempts] == ["stop:r1:d0", "stop:r2:d0"]
    assert len(fake_gpu.evaluations) == 3  # baseline + two kernels, nothing twice


def test_replay_reruns_a_job_from_recorded_responses_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    from graph.runner import export_responses

    script(server, "planner", k.plan("A"), k.plan("B"))
    script(server, "coder", k.reply(k.SYNTAX_ERROR_KERNEL), k.reply(k.fast_kernel(1.9)))
    script(server, "debugger", k.reply(k.fast_kernel(1.4)))
    settings = agent_settings(tmp_path, server)
    first = start_job(spec(rounds=2, debug=1), job_id="rec", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert first.status == "finished"
    replay = tmp_path / "responses.jsonl"
    assert export_responses("rec", checkpointer, replay, settings) == 5
    n_requests = len(server.requests)
    again = start_job(
        spec(rounds=2, debug=1, replay_file=str(replay)),
        job_id="replayed",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=settings,
    )
    assert again.status == "finished" and len(server.requests) == n_requests  # no endpoint call
    assert [(a.verdict, a.source) for a in again.attempts] == [(a.verdict, a.source) for a in first.attempts]
    assert {c.model for c in again.llm_calls} == {f"replay:{m}" for m in (MODELS["planner"], MODELS["coder"], MODELS["debugger"])}


def test_compiler_role_chooses_allowlisted_flags_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.fast_kernel(1.5)))
    script(server, "compiler", '{"flags": ["-use_fast_math", "-Xptxas=-O3,-v", "-lcublas", "--maxrregcount=64"]}')
    settings = agent_settings(tmp_path, server)
    settings.roles.compiler.structured_output = "json_mode"
    settings.roles.compiler.reasoning_effort = "high"
    out = start_job(spec(rounds=1, choose_flags=True), job_id="flags", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished", out.message
    compiler_request = next(r for r in server.answered() if r.model == MODELS["compiler"])
    assert compiler_request.body["response_format"] == {"type": "json_object"}
    assert compiler_request.body["reasoning_effort"] == "high"
    assert "response_format" not in next(r for r in server.answered() if r.model == MODELS["coder"]).body
    assert out.attempts[0].flags == ["-use_fast_math", "-Xptxas=-O3,-v", "--maxrregcount=64"]
    assert "-lcublas" in out.llm_calls[2].note
    assert "ptxas info" in out.attempts[0].compile_log  # -Xptxas=-v reached the real nvcc


# -- bad input ------------------------------------------------------------------------------------
def test_unknown_task_or_precision_fails_with_a_clear_message_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    settings = agent_settings(tmp_path, server)
    out = start_job(spec(task="no_such_op"), checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "unknown task 'no_such_op'" in out.message and "cudamaster bench list" in out.message
    out = start_job(spec(task="vector_ad"), checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "unknown task 'vector_ad': did you mean vector_add?" in out.message
    out = start_job(spec(precision="fp8"), checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "unknown precision 'fp8'" in out.message
    out = start_job(spec(sizes="huge"), checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "unknown size set 'huge'" in out.message
    assert server.requests == [] and fake_gpu.evaluations == []


@pytest.mark.parametrize("field,value", [("rounds", 0), ("rounds", 11), ("debug", -1), ("debug", 11)])
def test_rounds_and_debug_out_of_range_are_refused(field, value):
    with pytest.raises(ValidationError, match=field):
        spec(**{field: value})


def test_endpoint_refusing_the_key_fails_the_job_clearly_and_resumably_with_fake_gpu(tmp_path, fake_gpu, checkpointer):
    from tests.support.openai_stub import ScriptedOpenAI

    with ScriptedOpenAI({MODELS["planner"]: [k.plan()], MODELS["coder"]: [k.reply(k.fast_kernel(1.5))]}, api_key="right") as server:
        wrong = agent_settings(tmp_path, server, api_key="wrong")
        out = start_job(spec(rounds=1), job_id="auth", checkpointer=checkpointer, evaluator=fake_gpu, settings=wrong)
        assert out.status == "failed"
        assert "refused the key for the planner role (HTTP 401" in out.message and "API_KEY" in out.message
        assert [r.status for r in server.requests] == [401]  # a refused key is not retried
        assert "refused the key" in job_state("auth", checkpointer, wrong)["error"]
        out = resume_job("auth", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server, api_key="right"))
        assert out.status == "finished" and out.best.score == 1.5


def test_reply_without_code_gets_a_verdict_and_the_job_goes_on_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan())
    script(server, "coder", "I would use a grid-stride loop with 256-thread blocks.")
    script(server, "debugger", k.reply(k.fast_kernel(1.6)))
    out = start_job(
        spec(rounds=1, debug=1), job_id="nocode", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert verdicts(out) == [("r1:d0", "no_code"), ("r1:d1", "ok")]
    assert "contained no kernel source" in out.attempts[0].message
    assert "grid-stride loop" in out.attempts[0].compile_log  # the reply is kept
    assert out.status == "finished"


def test_reply_changing_the_prototype_gets_a_verdict_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.CHANGED_PROTOTYPE_KERNEL))
    script(server, "debugger", k.reply(k.fast_kernel(1.6)))
    out = start_job(
        spec(rounds=1, debug=1), job_id="proto", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert verdicts(out) == [("r1:d0", "prototype_changed"), ("r1:d1", "ok")]
    assert "long N" in out.attempts[0].message and "int N" in out.attempts[0].message
    debugger_prompt = next(r.prompt_text for r in server.answered() if r.model == MODELS["debugger"])
    assert "prototype_changed" in debugger_prompt
    assert len(fake_gpu.compiles) == 1  # the changed prototype never reached nvcc


def test_resume_of_unknown_or_finished_job_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    settings = agent_settings(tmp_path, server)
    out = resume_job("nope", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "no job nope" in out.message
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.fast_kernel(1.5)))
    start_job(spec(rounds=1), job_id="done", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    n = len(fake_gpu.evaluations)
    out = resume_job("done", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished" and len(fake_gpu.evaluations) == n
    again = start_job(spec(rounds=1), job_id="done", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert again.status == "failed" and "already exists" in again.message


def test_profile_events_and_tokens_sent_with_a_budget_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    from profiling.tokens import count_tokens

    script(server, "planner", k.plan("Grid"), k.plan("Vectorize"))
    script(server, "coder", k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5)))
    events = []
    out = start_job(
        spec(rounds=2, debug=0, profile_mode="full", profile_token_budget=300),
        job_id="budget",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=agent_settings(tmp_path, server),
        on_event=lambda e: events.append(e.model_dump(mode="json")),
    )
    assert out.status == "finished", out.message
    sent = [e for e in events if e["type"] == "profile" and e["sent"]]
    # the baseline's before round 1, then round 1's and round 2's kernels (each the new best)
    assert [e["of"] for e in sent] == ["baseline", "budget:r1:d0", "budget:r2:d0"]
    assert [e["bottleneck_class"] for e in sent] == ["memory_latency", "memory_bandwidth", "memory_bandwidth"]
    for e in sent:
        assert e["mode"] == "full" and e["budget"] == 300 and e["lines_cut"] > 0
        assert e["tokens"] == count_tokens(e["text"]).tokens <= 300 and "token budget" in e["text"]
    taken = [e for e in events if e["type"] == "profile" and not e["sent"]]
    assert [e["attempt_id"] for e in taken] == ["budget:r1:d0", "budget:r2:d0"]
    planner_calls = [c.model_dump() for c in out.llm_calls if c.role == "planner"]
    # each planner call records the tokens of the profile in its prompt, and that text is in the prompt
    assert [c["profile_tokens"] for c in planner_calls] == [sent[0]["tokens"], sent[1]["tokens"]]
    assert all(c["profile_mode"] == "full" for c in planner_calls)
    prompts = [r.prompt_text for r in server.answered() if r.model == MODELS["planner"]]
    assert sent[0]["text"] in prompts[0] and sent[1]["text"] in prompts[1]


class _LostWorkerFakeGpu:
    """FAKE GPU whose evaluation of a source marked FAKE_INFRA comes back as the Ray evaluator answers an item
    whose workers died twice (gpu/ray)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def evaluate(self, request):
        from bench_tasks.harness import EvaluationResult, Verdict

        if request.source is not None and "FAKE_INFRA" in request.source:
            return EvaluationResult(
                task=request.task,
                precision=request.precision,
                verdict=Verdict.infrastructure_error,
                size_set=request.sizes,
                message="the worker running it died or hung, twice",
            )
        return self.inner.evaluate(request)


def test_an_infrastructure_error_is_recorded_and_not_sent_to_the_debugger_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", k.plan("Grid"), k.plan("Again"))
    script(server, "coder", k.reply(k.fast_kernel(1.5) + "// FAKE_INFRA\n"), k.reply(k.fast_kernel(2.0)))
    out = start_job(
        spec(rounds=2, debug=2),
        job_id="infra",
        checkpointer=checkpointer,
        evaluator=_LostWorkerFakeGpu(fake_gpu),
        settings=agent_settings(tmp_path, server),
    )
    assert out.status == "finished", out.message
    assert verdicts(out) == [("r1:d0", "infrastructure_error"), ("r2:d0", "ok")]  # recorded, not lost
    assert not [r for r in server.answered() if r.model == MODELS["debugger"]]  # nothing in the kernel to debug
    assert out.best is not None and out.best.score == 2.0
