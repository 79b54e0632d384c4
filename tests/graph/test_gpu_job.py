"""On a real GPU (`pytest -m gpu`): one full job on vector_add fp32 with the real LocalEvaluator.
The scripted server gives a correct, faster kernel in round 1 and a broken one in round 2."""

from __future__ import annotations

import pytest

from bench_tasks.harness import gpu_status
from gpu.local import LocalEvaluator
from graph.contract import JobSpec
from graph.runner import start_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_status()[0], reason="no NVIDIA GPU: " + gpu_status()[1])]


def test_job_on_vector_add_keeps_the_faster_round_one_kernel_with_fake_llm(tmp_path, server, harness_settings, checkpointer):
    server.add(MODELS["planner"], k.plan("Whole grid"), k.plan("Break it"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel()), k.reply(k.WRONG_KERNEL))
    out = start_job(
        JobSpec(task="vector_add", precision="fp32", rounds=2, debug=0, profile_mode="none"),
        job_id="gpu",
        checkpointer=checkpointer,
        evaluator=LocalEvaluator(harness_settings),
        settings=agent_settings(tmp_path, server),
    )
    assert out.status == "finished", out.message
    assert [a.verdict for a in out.attempts] == ["ok", "wrong_answer"]
    assert out.best.attempt_id == "gpu:r1:d0"
    assert out.best.score > 1.0
    rows = out.best.evaluation["rows"]
    assert rows and all(r["speedup"] is not None for r in rows)
    assert out.best.evaluation["gpu"]["name"]


def test_job_with_a_real_ncu_profile_sends_the_measured_profile_to_the_planner_with_fake_llm(
    tmp_path, server, harness_settings, checkpointer
):
    """profile_mode "filtered" on the real GPU: the baseline and the round's kernel are profiled with ncu, classified,
    and the baseline's profile (metrics measured, not made up) is what the scripted planner is sent."""
    server.add(MODELS["planner"], k.plan("Whole grid"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel()))
    events: list[dict] = []
    out = start_job(
        JobSpec(task="vector_add", precision="fp32", rounds=1, debug=0, profile_mode="filtered"),
        job_id="gpu-ncu",
        checkpointer=checkpointer,
        evaluator=LocalEvaluator(harness_settings),
        settings=agent_settings(tmp_path, server),
        on_event=lambda e: events.append(e.model_dump(mode="json")),
    )
    assert out.status == "finished", out.message
    profiles = [e for e in events if e["type"] == "profile"]
    sent = [e for e in profiles if e["sent"]]
    taken = [e for e in profiles if not e["sent"]]
    assert [e["of"] for e in sent] == ["baseline"] and [e["attempt_id"] for e in taken] == ["gpu-ncu:r1:d0"]
    for e in sent + taken:
        assert e["mode"] == "filtered" and e["bottleneck_class"] in {"compute", "memory_latency", "memory_bandwidth"}, e["note"]
        assert e["text"].strip() and any(v is not None for v in e["metrics"].values()), e["note"]
    prompts = [r.prompt_text for r in server.answered() if r.model == MODELS["planner"]]
    assert len(prompts) == 1 and sent[0]["text"] in prompts[0]
