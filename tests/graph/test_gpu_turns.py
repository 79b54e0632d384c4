"""Jobs run side by side in the service, but their GPU evaluations must not: two evaluations timed on one GPU
at once would each count the other's kernels. LocalEvaluator takes the GPU in turns, across threads and processes
(the real harness is replaced by a FAKE evaluate that records when it ran; no GPU needed)."""

from __future__ import annotations

import multiprocessing
import threading
import time
from itertools import pairwise
from pathlib import Path

import gpu.local as ev
from gpu.protocol import EvaluateRequest
from settings import get_harness_settings


def _fake_evaluate(log: Path):
    def run(*args, **kwargs):
        start = time.monotonic()
        time.sleep(0.2)
        with open(log, "a") as f:
            f.write(f"{start} {time.monotonic()}\n")
        return None

    return run


def _overlaps(log: Path) -> int:
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    return sum(1 for (a0, a1), (b0, b1) in pairwise(spans) if b0 < a1)


def test_fake_evaluations_from_threads_take_turns_on_the_gpu(tmp_path, monkeypatch):
    log = tmp_path / "spans"
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate(log))
    evaluator = ev.LocalEvaluator(get_harness_settings(cache_dir=tmp_path / "cache"))
    threads = [threading.Thread(target=evaluator.evaluate, args=(EvaluateRequest(task="vector_add", precision="fp32"),)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(log.read_text().splitlines()) == 4
    assert _overlaps(log) == 0


def _in_child(cache: str, log: str) -> None:
    ev.evaluate = _fake_evaluate(Path(log))  # type: ignore[assignment]
    ev.LocalEvaluator(get_harness_settings(cache_dir=Path(cache))).evaluate(
        EvaluateRequest(task="vector_add", precision="fp32", source=None)
    )


def test_fake_evaluations_from_processes_sharing_a_cache_take_turns(tmp_path):
    log = tmp_path / "spans"
    ctx = multiprocessing.get_context("fork")
    children = [ctx.Process(target=_in_child, args=(str(tmp_path / "cache"), str(log))) for _ in range(3)]
    for c in children:
        c.start()
    for c in children:
        c.join(30)
        assert c.exitcode == 0
    assert len(log.read_text().splitlines()) == 3
    assert _overlaps(log) == 0


def test_a_turn_reports_its_wait(tmp_path):
    settings = get_harness_settings(cache_dir=tmp_path)
    held = threading.Event()

    def hold():
        with ev.gpu_turn(settings):
            held.set()
            time.sleep(0.3)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    with ev.gpu_turn(settings) as waited:
        assert waited > 0.1
    t.join()


def test_the_evaluator_reports_each_wait_for_the_gpu_to_whoever_keeps_figures_with_fake_evaluate(tmp_path, monkeypatch):
    log = tmp_path / "spans"
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate(log))
    waits: list[tuple[str, str, float]] = []
    evaluator = ev.LocalEvaluator(get_harness_settings(cache_dir=tmp_path / "cache"), on_gpu_wait=lambda *w: waits.append(w))
    threads = [
        threading.Thread(target=evaluator.evaluate, args=(EvaluateRequest(task="vector_add", precision=p),)) for p in ("fp32", "bf16")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(w[1] for w in waits) == ["bf16", "fp32"]
    assert max(w[2] for w in waits) > 0.1  # the second one waited for the first one's turn
