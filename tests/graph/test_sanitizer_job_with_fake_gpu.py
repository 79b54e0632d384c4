"""The job spec's `sanitize` with the scripted model and a FAKE GPU whose compute-sanitizer verdicts are planted by
markers (gpu/fake.py: `// FAKE_SANITIZER racecheck`, `// FAKE_SANITIZER_NOT_RUN`)."""

from __future__ import annotations

from gpu.fake import FakeGpuEvaluator
from graph.contract import JobSpec, SanitizerStatus
from graph.runner import start_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k


def spec(**kw) -> JobSpec:
    return JobSpec(**{"task": "vector_add", "precision": "fp32", **kw})


def script(server, role: str, *replies) -> None:
    server.add(MODELS[role], *replies)


RACY = "// FAKE_SANITIZER racecheck\n"


def test_a_faster_kernel_with_a_planted_race_is_kept_but_the_best_clean_kernel_is_the_result_with_fake_gpu(
    tmp_path, server, fake_gpu, checkpointer
):
    script(server, "planner", k.plan("Grid"), k.plan("Shared tiles"))
    script(server, "coder", k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(3.0) + RACY))
    script(server, "debugger", k.reply(k.fast_kernel(2.5) + RACY))  # the fix is still racy: the round ends with it
    out = start_job(
        spec(rounds=2, debug=1), job_id="race", checkpointer=checkpointer, evaluator=fake_gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "finished", out.message
    assert [(a.attempt_id.split(":", 1)[1], a.verdict, a.score) for a in out.attempts] == [
        ("r1:d0", "ok", 1.5),
        ("r2:d0", "ok", 3.0),
        ("r2:d1", "ok", 2.5),
    ]
    racy = out.attempts[1]
    assert racy.sanitizer_status == SanitizerStatus.findings
    race = next(v for v in racy.sanitizer if v.tool == "racecheck")
    assert race.status == SanitizerStatus.findings and "Race reported" in race.report[0]
    # the result is the best CLEAN kernel (P 1.5), not the faster racy one (P 3.0)
    assert out.best is not None and out.best.attempt_id == "race:r1:d0" and out.best.sanitizer_status == SanitizerStatus.clean
    assert "1 correct kernel(s) with sanitizer findings" not in out.message and "2 correct kernel(s) with sanitizer findings" in out.message
    # the debugger received the findings as it receives a compile error
    debugger_prompt = next(r.prompt_text for r in server.answered() if r.model == MODELS["debugger"])
    assert "sanitizer_findings" in debugger_prompt and "Race reported between Write access" in debugger_prompt
    # a kernel with findings is not profiled; the best-mode sanitizer ran on the three kernels that would have been best
    assert fake_gpu.sanitized == [out.attempts[0].source, out.attempts[1].source, out.attempts[2].source]


def test_a_gpu_that_cannot_run_the_sanitizer_says_not_run_on_the_result_never_clean_with_fake_gpu(
    tmp_path, server, checkpointer, harness_settings
):
    gpu = FakeGpuEvaluator(harness_settings, sanitizer_supported=False)
    script(server, "planner", k.plan())
    script(server, "coder", k.reply(k.fast_kernel(1.5)))
    out = start_job(
        spec(rounds=1, debug=0), job_id="refused", checkpointer=checkpointer, evaluator=gpu, settings=agent_settings(tmp_path, server)
    )
    assert out.status == "finished" and out.best is not None
    assert out.best.sanitizer_status == SanitizerStatus.not_run
    assert all(v.status == SanitizerStatus.not_run and "Device not supported" in v.reason for v in out.best.sanitizer)
    assert "compute-sanitizer: not_run" in out.message


def test_sanitize_off_never_calls_the_sanitizer_and_every_checks_each_correct_kernel_with_fake_gpu(
    tmp_path, server, checkpointer, harness_settings
):
    script(server, "planner", k.plan(), k.plan(), k.plan(), k.plan())
    script(
        server,
        "coder",
        k.reply(k.fast_kernel(2.0)),
        k.reply(k.fast_kernel(1.2) + RACY),
        k.reply(k.fast_kernel(2.0)),
        k.reply(k.fast_kernel(1.2)),
    )
    settings = agent_settings(tmp_path, server)
    off = FakeGpuEvaluator(harness_settings)
    out = start_job(spec(rounds=2, debug=0, sanitize="off"), job_id="off", checkpointer=checkpointer, evaluator=off, settings=settings)
    assert off.sanitized == [] and all(a.sanitizer == [] for a in out.attempts) and out.best.sanitizer_status is None
    every = FakeGpuEvaluator(harness_settings)
    out = start_job(
        spec(rounds=2, debug=0, sanitize="every"), job_id="every", checkpointer=checkpointer, evaluator=every, settings=settings
    )
    assert len(every.sanitized) == 2  # the second kernel would not have been the best: `best` would have skipped it
    assert [a.sanitizer_status for a in out.attempts] == [SanitizerStatus.clean, SanitizerStatus.clean]


def test_a_ray_worker_runs_a_sanitize_item_with_fake_gpu(tmp_path):
    """The self-contained work item of kind `sanitize`, run by the Ray worker's engine (no cluster needed) with the FAKE
    GPU: the planted finding comes back in the outcome."""
    from bench_tasks import load_task
    from bench_tasks.work import work_item
    from gpu.ray.worker import WorkerEngine
    from settings import HarnessSettings

    engine = WorkerEngine("gpu-0", "gpu", "gpu.fake:FakeGpuEvaluator", {"cache_dir": str(tmp_path)})
    item = work_item("sanitize", load_task("vector_add"), "fp32", k.fast_kernel(2.0) + RACY, settings=HarnessSettings(cache_dir=tmp_path))
    out = engine.run(item)
    assert out.sanitizer is not None and [v.status for v in out.sanitizer] == ["clean", "findings", "clean", "clean"]
