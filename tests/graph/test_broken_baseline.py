"""A baseline that fails on the GPU ends the job with a `baseline` failure before any LLM call (fault 3 of
issue 10): the planner is never given a broken baseline. FAKE GPU results (gpu.fake)."""

from __future__ import annotations

from bench_tasks.harness import EvaluationResult, Verdict
from gpu.fake import FakeGpuEvaluator
from gpu.protocol import EvaluateRequest
from graph.runner import JobSpec, start_job

from .conftest import agent_settings


class FakeGpuBaselineCrashes(FakeGpuEvaluator):
    """FAKE GPU on which the baseline (source None) crashes."""

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        result = super().evaluate(request)
        if request.source is None:
            result.verdict, result.message, result.rows = Verdict.runtime_error, "FAKE illegal memory access in the baseline", []
        return result


def test_a_baseline_failing_on_the_gpu_fails_the_job_before_the_planner_with_fake_gpu(tmp_path, server, harness_settings, checkpointer):
    events: list = []
    out = start_job(
        JobSpec(task="vector_add", precision="fp32", rounds=1, debug=0),
        job_id="broken-baseline",
        checkpointer=checkpointer,
        evaluator=FakeGpuBaselineCrashes(harness_settings),
        settings=agent_settings(tmp_path, server),
        on_event=events.append,
    )
    assert out.status == "failed"
    assert "baseline: runtime_error: FAKE illegal memory access in the baseline" in out.message, out.message
    assert server.requests == []  # no planner call, no call at all
    assert out.llm_calls == [] and out.attempts == []
    assert [e.node for e in events if e.type == "node"] == []  # no node finished: the job stopped at the baseline
