"""gpu.locked.GpuLockedEvaluator: each evaluate/profile call reports how long it waited for its GPU of the pool
to the evaluator of that GPU (`gpu_wait`), so figures can tell queueing from evaluation."""

from __future__ import annotations

import threading

from gpu.local import LocalEvaluator
from gpu.locked import GpuLockedEvaluator, GpuPool
from gpu.protocol import EvaluateRequest, ProfileRequest


class _HeldGpu:
    """An evaluator whose evaluate holds the GPU until `release` is set; keeps the waits it is told of."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started: list[str] = []
        self.waits: list[tuple[str, str, float]] = []
        self.first_running = threading.Event()

    def gpu_wait(self, task: str, precision: str, seconds: float) -> None:
        self.waits.append((task, precision, seconds))

    def evaluate(self, request: EvaluateRequest) -> str:
        self.started.append(request.precision)
        self.first_running.set()
        self.release.wait(30)
        return request.precision

    def profile(self, request: ProfileRequest) -> str:
        return "profiled"


def test_a_call_queued_for_the_one_gpu_reports_its_wait_before_it_runs():
    inner = _HeldGpu()
    pool = GpuPool(["0"])
    locked = GpuLockedEvaluator(inner, pool)
    first = threading.Thread(target=locked.evaluate, args=(EvaluateRequest(task="vector_add", precision="fp32"),))
    first.start()
    assert inner.first_running.wait(30)
    second = threading.Thread(target=locked.evaluate, args=(EvaluateRequest(task="vector_add", precision="bf16"),))
    second.start()
    second.join(0.2)
    assert second.is_alive() and inner.started == ["fp32"]  # queued for the GPU the first call holds
    inner.release.set()
    first.join(30)
    second.join(30)
    assert inner.started == ["fp32", "bf16"]
    assert [w[:2] for w in inner.waits] == [("vector_add", "fp32"), ("vector_add", "bf16")]
    assert inner.waits[1][2] > inner.waits[0][2]  # the queued call's wait is the longer one
    assert locked.profile(ProfileRequest(task="RELU", precision="fp16", source=None, mode="none")) == "profiled"
    assert inner.waits[-1][:2] == ("RELU", "fp16")


def test_the_pool_reports_nothing_to_an_evaluator_without_gpu_wait_and_is_not_a_wait_sink_itself():
    class Plain:
        def evaluate(self, request):
            return "ok"

        def gpu_wait_seconds(self):  # another attribute is forwarded as before
            return 0.0

    locked = GpuLockedEvaluator(Plain(), GpuPool(["0"]))
    assert locked.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=None)) == "ok"
    assert locked.gpu_wait_seconds() == 0.0
    over_a_sink = GpuLockedEvaluator(_HeldGpu(), GpuPool(["0"]))
    assert not hasattr(over_a_sink, "gpu_wait")  # a wait reported to the pool from outside has no GPU to go to


def test_a_local_evaluator_sends_the_pools_waits_where_its_file_lock_waits_go(tmp_path):
    from settings import get_harness_settings

    waits: list[tuple[str, str, float]] = []
    per_gpu = GpuLockedEvaluator(
        lambda gpu: LocalEvaluator(get_harness_settings(cache_dir=tmp_path), on_gpu_wait=lambda *w: waits.append(w)),
        GpuPool(["0", "1"]),
        per_gpu=True,
    )
    per_gpu.profile(
        ProfileRequest(task="vector_add", precision="fp32", source=None, mode="none")
    )  # profiling switched off: no harness, no file lock
    assert [w[:2] for w in waits] == [("vector_add", "fp32")] and waits[0][2] >= 0.0
