"""The Ray evaluator on a local Ray cluster (two GPUs declared, FAKE GPU results, real nvcc compiles):
work runs on the workers, the evaluation reuses the compile worker's object, a custom task runs on workers
that never saw it, a worker killed mid-evaluation is replaced and the evaluation retried once (nothing lost,
nothing run twice to the end), a worker that always dies gives `infrastructure_error`, a job stays on
one GPU model, and compute-sanitizer's verdicts come from a GPU worker (not_run, never clean, when it dies)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict
from bench_tasks.harness import source as harness_source
from bench_tasks.harness.result import SanitizerStatus
from bench_tasks.spec import custom_task, register_task
from bench_tasks.work import work_item
from gpu.fake import FAKE_GPU
from gpu.protocol import CompileRequest, EvaluateRequest, SanitizeRequest
from gpu.ray import RaySettings
from gpu.ray.queue import FairQueue
from settings import get_harness_settings
from tests.support import kernels as k

pytestmark = [pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def cluster(ray_address, tmp_path_factory):
    from gpu.ray import RaySettings
    from gpu.ray.evaluator import RayEvaluator

    base = tmp_path_factory.mktemp("ray-caches")
    settings = RaySettings(address=ray_address, compile_workers=1, worker_evaluator="tests.cluster.fakes:DyingFakeGpuEvaluator")
    # The GPU workers and the compile worker keep separate caches, as on separate machines.
    evaluator = RayEvaluator(settings, worker_local={"cache_dir": str(base / "gpu")}, compile_local={"cache_dir": str(base / "cpu")})
    yield evaluator
    evaluator.close()


def _prepared(text: str) -> str:
    return harness_source.prepare(text, get_harness_settings().max_source_bytes)


def _nvcc(cluster, role: str) -> int:
    return sum(w["nvcc_runs"].get("candidate", 0) for w in cluster.worker_info() if w["role"] == role)


def test_a_job_runs_on_the_cluster_and_its_evaluation_reuses_the_compile_workers_object_with_fake_gpu(cluster, tmp_path):
    status = cluster.status()
    assert [g["gpu_model"] for g in status["gpus"]] == [FAKE_GPU.name] * 2 and len(status["compile_workers"]) == 1
    source = _prepared(k.fast_kernel(2.5) + f"\n// {tmp_path.name}\n")
    job = cluster.for_job("job-compile-once")
    cpu_before, gpu_before = _nvcc(cluster, "cpu"), _nvcc(cluster, "gpu")

    report = job.compile(CompileRequest(task="vector_add", precision="fp32", source=source))
    assert report.ok and report.object_key
    result = job.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=source))

    assert result.verdict == Verdict.ok and result.score == 2.5
    assert result.gpu.name == FAKE_GPU.name and result.gpu.host  # what it was measured on, and where
    assert job.gpu_model == FAKE_GPU.name  # the job's later measurements stay on this model
    assert _nvcc(cluster, "cpu") == cpu_before + 1
    assert _nvcc(cluster, "gpu") == gpu_before, "the GPU worker compiled the candidate again"


def test_a_custom_task_runs_on_workers_that_never_saw_it_with_fake_gpu(cluster):
    proto = 'extern "C" void ray_scale(const float* X, float* Y, int N)'
    args = {"X": {"role": "input", "length": "N"}, "Y": {"role": "output", "length": "N"}, "N": {"role": "scalar", "value": "N"}}
    baseline = (
        "__global__ void k(const float* X, float* Y, int N) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
        "if (i < N) Y[i] = 2.0f * X[i]; }\n"
        'extern "C" void ray_scale(const float* X, float* Y, int N) { k<<<(N + 127) / 128, 128>>>(X, Y, N); }\n'
    )
    task = custom_task("ct_ray_never_seen", "fp32", proto, args, [{"N": 4096}], baseline)
    register_task(task)  # here, as the service does at start-up; the workers only get the work item
    candidate = _prepared(baseline.replace("void ray_scale(", "void ray_scale_optimized(") + "// FAKE_SPEEDUP 1.5\n")
    job = cluster.for_job("job-custom")
    assert job.compile(CompileRequest(task="ct_ray_never_seen", precision="fp32", source=candidate)).ok
    result = job.evaluate(EvaluateRequest(task="ct_ray_never_seen", precision="fp32", source=candidate))
    assert result.verdict == Verdict.ok and result.score == 1.5 and [r.params for r in result.rows] == [{"N": 4096}]


def test_a_worker_killed_mid_evaluation_is_replaced_and_the_evaluation_retried_once_with_fake_gpu(cluster, tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    source = _prepared(k.fast_kernel(3.0) + f"\n// RAY_TEST_GATE {gate}\n")
    replaced_before = sum(g["replaced"] for g in cluster.status()["gpus"])
    results = []
    caller = threading.Thread(
        target=lambda: results.append(
            cluster.for_job("job-killed").evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=source))
        )
    )
    caller.start()
    first = _wait_for(lambda: list(gate.glob("started-*")), "the first worker to start the evaluation")[0]
    os.kill(int(first.name.split("-")[1]), signal.SIGKILL)  # the worker process dies mid-evaluation
    second = _wait_for(lambda: [p for p in gate.glob("started-*") if p != first], "the retry to start")[0]
    (gate / "go").write_text("")
    caller.join(300)

    assert len(results) == 1 and results[0].verdict == Verdict.ok and results[0].score == 3.0  # not lost
    assert [p.name for p in gate.glob("finished-*")] == [f"finished-{second.name.split('-')[1]}"]  # run to the end once
    assert sum(g["replaced"] for g in cluster.status()["gpus"]) == replaced_before + 1
    assert all(g["alive"] for g in cluster.status()["gpus"])


def test_a_candidate_that_always_kills_its_worker_gets_an_infrastructure_verdict_after_one_retry_with_fake_gpu(cluster):
    source = _prepared(k.fast_kernel(2.0) + "\n// RAY_TEST_ALWAYS_DIE\n")
    replaced_before = sum(g["replaced"] for g in cluster.status()["gpus"])
    result = cluster.for_job("job-deadly").evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=source))
    assert result.verdict == Verdict.infrastructure_error and result.score is None
    assert result.message.count(" died during ") == 2  # tried twice, on two workers, then given up
    assert sum(g["replaced"] for g in cluster.status()["gpus"]) == replaced_before + 2
    # The cluster still works afterwards.
    assert cluster.for_job("job-after").evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=None)).verdict == Verdict.ok


def test_a_worker_that_hangs_is_replaced_and_the_item_answered_as_an_infrastructure_error_with_fake_gpu(cluster, tmp_path):
    gate = tmp_path / "hang"
    gate.mkdir()  # never opened: every worker that takes the item holds it
    source = _prepared(k.fast_kernel(2.0) + f"\n// RAY_TEST_GATE {gate}\n")
    replaced_before = sum(g["replaced"] for g in cluster.status()["gpus"])
    cluster.settings.item_timeout_s = 3.0  # the hang limit under test (restored below)
    try:
        result = cluster.for_job("job-hung").evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=source))
    finally:
        cluster.settings.item_timeout_s = RaySettings().item_timeout_s
    assert result.verdict == Verdict.infrastructure_error and result.message.count(" over 3 s") == 2
    assert len({p.name for p in gate.glob("started-*")}) == 2 and not list(gate.glob("finished-*"))
    assert sum(g["replaced"] for g in cluster.status()["gpus"]) == replaced_before + 2


def test_shutting_down_fails_queued_work_with_an_error_not_a_verdict():
    """A job waiting for a result when the service stops must not record a verdict: its step runs again on resume."""
    from gpu.ray.evaluator import ClusterError, RayEvaluator
    from gpu.ray.queue import Request

    evaluator = RayEvaluator.__new__(RayEvaluator)  # no workers: only the queues and shutdown
    evaluator.queues = {"gpu": FairQueue(), "cpu": FairQueue()}
    evaluator._stop, evaluator.slots, evaluator._ray = threading.Event(), [], None
    request = Request(work_item("evaluate", load_task("vector_add"), "fp32", None, settings=get_harness_settings(), job_id="j"))
    evaluator.queues["gpu"].put(request)
    evaluator.close()
    with pytest.raises(ClusterError, match="runs again when the job resumes"):
        request.future.result(timeout=5)


def test_a_job_pinned_to_a_gpu_model_the_cluster_lacks_is_answered_at_once_with_fake_gpu(cluster):
    job = cluster.for_job("job-pinned", gpu_model="NVIDIA H100 80GB HBM3")
    result = job.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=None))
    assert result.verdict == Verdict.infrastructure_error and "NVIDIA H100 80GB HBM3" in result.message
    assert job.gpu_model == "NVIDIA H100 80GB HBM3"  # an infrastructure verdict never re-pins the job


def _wait_for(found, what: str, timeout: float = 240.0):
    deadline = time.monotonic() + timeout
    while not (value := found()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.05)
    return value


def test_sanitizer_verdicts_come_from_a_gpu_worker_and_a_dying_worker_gives_not_run_never_clean_with_fake_gpu(cluster):
    # Issue 41: the Ray path of `sanitize` (the agent's sanitize step on a cluster). The FAKE verdicts exist only in the
    # workers' evaluator (the driver has none), so a FAKE finding shows the tools ran on a GPU worker.
    source = _prepared(k.fast_kernel(2.0) + "\n// FAKE_SANITIZER racecheck\n")
    verdicts = cluster.for_job("job-sanitize").sanitize(SanitizeRequest(task="vector_add", precision="fp32", source=source))
    assert {v.tool: v.status for v in verdicts} == {
        "memcheck": SanitizerStatus.clean,
        "racecheck": SanitizerStatus.findings,
        "initcheck": SanitizerStatus.clean,
        "synccheck": SanitizerStatus.clean,
    }
    assert next(v for v in verdicts if v.tool == "racecheck").report[0].startswith("FAKE racecheck finding")
    # A request for some tools gets those (the work item carries them to the worker).
    only = cluster.for_job("job-sanitize").sanitize(
        SanitizeRequest(task="vector_add", precision="fp32", source=source, tools=("racecheck",))
    )
    assert [(v.tool, v.status) for v in only] == [("racecheck", SanitizerStatus.findings)]

    deadly = _prepared(k.fast_kernel(2.0) + "\n// RAY_TEST_ALWAYS_DIE\n")
    verdicts = cluster.for_job("job-sanitize-deadly").sanitize(SanitizeRequest(task="vector_add", precision="fp32", source=deadly))
    assert verdicts and all(v.status == SanitizerStatus.not_run and "no sanitizer run" in v.reason for v in verdicts), verdicts
    assert (
        cluster.for_job("job-after-sanitize").evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=None)).verdict
        == Verdict.ok
    )
