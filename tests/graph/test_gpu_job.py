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


def test_job_on_vector_add_keeps_the_faster_round_one_kernel(tmp_path, server, harness_settings, checkpointer):
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
