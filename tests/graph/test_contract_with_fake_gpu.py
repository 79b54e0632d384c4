"""The graph speaks the contract (graph.contract): what it emits and returns are the contract's models,
and the job spec is validated once per run, not rebuilt from the state in every node. Real nvcc,
FAKE GPU and a FAKE profiler replaying a saved ncu report (gpu.fake.FakeGpuEvaluator)."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from gpu.fake import FakeGpuEvaluator
from graph import contract
from graph.contract import JobSpec, parse_event
from graph.runner import resume_job, start_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k

FMA_NCU = Path(__file__).resolve().parents[1] / "fixtures" / "ncu" / "synthetic_fma_raw.csv"


@pytest.fixture
def spec_validations(monkeypatch) -> list[object]:
    """Every JobSpec.model_validate call (a spec rebuilt from a dict)."""
    calls: list[object] = []
    original = JobSpec.model_validate.__func__

    def counting(cls, obj, *args, **kwargs):
        calls.append(obj)
        return original(cls, obj, *args, **kwargs)

    monkeypatch.setattr(JobSpec, "model_validate", classmethod(counting))
    return calls


def test_events_and_outcome_are_contract_models_and_the_spec_is_validated_once_with_fake_gpu(
    tmp_path, server, harness_settings, checkpointer, spec_validations
):
    server.add(MODELS["planner"], k.plan("Grid"), k.plan("Unroll"))
    server.add(MODELS["coder"], k.reply(k.SYNTAX_ERROR_KERNEL), k.reply(k.fast_kernel(1.4)))
    server.add(MODELS["debugger"], k.reply(k.fast_kernel(2.0)))
    fake_gpu = FakeGpuEvaluator(harness_settings, ncu_report=FMA_NCU)
    events: list = []
    spec = JobSpec(task="vector_add", precision="fp32", rounds=2, debug=1)
    settings = agent_settings(tmp_path, server)
    out = start_job(
        spec,
        job_id="typed",
        checkpointer=checkpointer,
        evaluator=fake_gpu,
        settings=settings,
        should_stop=lambda: any(e.type == "attempt" and e.verdict == "ok" for e in events),
        on_event=events.append,
    )
    assert out.status == "stopped" and spec_validations == []  # the spec given is used as it is, by every node
    out = resume_job("typed", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings, on_event=events.append)
    assert out.status == "finished", out.message
    assert len(spec_validations) == 1  # once per run, from the checkpoint: not once per node

    assert isinstance(out, contract.Outcome)
    assert {e.type for e in events} == {"node", "attempt", "llm_call", "profile", "finished"}
    for e in events:  # each is the union's own model, and survives a trip through JSON
        assert parse_event(e.model_dump(mode="json")) == e
    # the profile of each correct attempt travels with it; failed attempts have none
    assert [(a.verdict, a.profile.bottleneck_class if a.profile else None) for a in out.attempts] == [
        ("compile_error", None),
        ("ok", "compute"),
        ("ok", "compute"),
    ]
    profile_events = [e for e in events if e.type == "profile"]
    taken = [e for e in profile_events if not e.sent]  # the profiles taken of correct kernels
    assert [e.attempt_id for e in taken] == ["typed:r1:d1", "typed:r2:d0"]
    assert taken[0].profile() == out.attempts[1].profile
    # sent: the baseline's (no attempt) and each new best kernel's, as the next planner got it
    assert next((e.of, e.attempt_id) for e in profile_events if e.sent) == ("baseline", None)
    assert all(e.mode == "filtered" and e.tokens > 0 for e in profile_events if e.sent and e.text)
    # what the planner of round 2 was shown is what the profile keeps
    planner_prompts = [r.prompt_text for r in server.answered() if r.model == MODELS["planner"]]
    assert out.attempts[1].profile.text in planner_prompts[1]
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in out.attempts[1].profile.metrics


def test_the_event_union_and_its_list_of_models_agree():
    union = typing.get_args(contract.Event)[0]
    assert set(typing.get_args(union)) == set(contract.EVENT_MODELS)
    assert len(set(contract.EVENT_TYPES)) == len(contract.EVENT_MODELS)  # one model per type
