"""The fair queue (gpu/ray/queue.py): jobs take turns, so one job's many items do not starve the others."""

from __future__ import annotations

import threading

from bench_tasks import load_task
from bench_tasks.work import work_item
from gpu.ray.queue import FairQueue, Request
from settings import HarnessSettings

_DEFINITION = work_item("evaluate", load_task("vector_add"), "fp32", None, settings=HarnessSettings())


def _request(job: str, n: int, model: str | None = None) -> Request:
    return Request(_DEFINITION.model_copy(update={"job_id": job, "source": f"// {job} {n}", "gpu_model": model}))


def _order(queue: FairQueue, count: int, accepts=lambda r: True) -> list[str]:
    return [queue.take(accepts, timeout=0).item.source.removeprefix("// ") for _ in range(count)]


def test_a_job_with_twenty_items_does_not_starve_one_with_two():
    queue = FairQueue()
    for n in range(20):
        queue.put(_request("A", n))
    queue.put(_request("B", 0))
    queue.put(_request("B", 1))
    queue.put(_request("C", 0))
    # One item per job per turn (the job served least recently first); each job's own items in order.
    assert _order(queue, 7) == ["A 0", "B 0", "C 0", "A 1", "B 1", "A 2", "A 3"]
    assert queue.waiting() == {"A": 16}


def test_a_late_job_gets_the_next_turn_after_the_busy_one():
    queue = FairQueue()
    for n in range(5):
        queue.put(_request("A", n))
    assert _order(queue, 2) == ["A 0", "A 1"]
    queue.put(_request("B", 0))
    assert _order(queue, 3) == ["B 0", "A 2", "A 3"]


def test_a_retried_item_goes_first_in_its_job_and_items_a_worker_cannot_run_wait_for_one_that_can():
    queue = FairQueue()
    queue.put(_request("A", 0, model="H200"))
    queue.put(_request("A", 1))
    queue.put(_request("B", 0, model="H200"))

    def h100(request: Request) -> bool:
        return request.item.gpu_model in (None, "H100")

    assert _order(queue, 1, h100) == ["A 1"]  # A's H200 item is skipped, not lost
    assert queue.take(h100, timeout=0) is None
    retried = _request("B", 9, model="H200")
    queue.put(retried, front=True)
    assert _order(queue, 3) == ["B 9", "A 0", "B 0"]  # B has not had a turn yet; A had one


def test_a_waiting_worker_is_woken_by_a_new_item_and_close_returns_what_is_left():
    queue = FairQueue()
    got: list[Request | None] = []
    taker = threading.Thread(target=lambda: got.append(queue.take(timeout=30)))
    taker.start()
    queue.put(_request("A", 0))
    taker.join(30)
    assert got and got[0] is not None and got[0].job_id == "A"
    queue.put(_request("A", 1))
    left = queue.close()
    assert [r.item.source for r in left] == ["// A 1"] and queue.take(timeout=0) is None
