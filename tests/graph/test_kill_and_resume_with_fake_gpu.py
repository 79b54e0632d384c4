"""A real child process runs a job and is killed with SIGKILL while compiling; the job is resumed
in this process and finishes with every attempt and every LLM call present exactly once.
Compiles are real (nvcc); the GPU is FAKE (graph.testing.FakeGpuEvaluator)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from graph.runner import job_state, make_checkpointer, resume_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k

ROOT = Path(__file__).resolve().parents[2]


def test_process_killed_during_compile_resumes_without_losing_or_repeating_with_fake_gpu(tmp_path, server, fake_gpu, harness_cache):
    server.add(MODELS["planner"], k.plan("Grid"), k.plan("Again"))
    server.add(MODELS["coder"], k.reply(k.SYNTAX_ERROR_KERNEL), k.reply(k.fast_kernel(1.6)))
    server.add(MODELS["debugger"], k.reply(k.fast_kernel(2.4)))
    db, marker, state_dir = tmp_path / "checkpoints.db", tmp_path / "compiling", tmp_path / "state"
    child = subprocess.Popen([sys.executable, "-m", "tests.graph.killable_job", str(db), str(state_dir), str(harness_cache),
                              server.base_url, str(marker)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, f"child ended early: {child.stdout.read().decode()[-3000:]}"
            assert time.monotonic() < deadline, "the child never reached the compile step"
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "int i = blockIdx.x * blockDim.x + threadIdx.x\n" in marker.read_text()  # killed compiling round 1's kernel
    calls_before = len(server.answered())
    assert calls_before == 2  # planner and coder answered before the kill

    checkpointer = make_checkpointer(f"sqlite:///{db}")
    settings = agent_settings(tmp_path, server)
    before = job_state("killed", checkpointer, settings)
    assert before["next"] == ["compile"] and before["values"]["attempts"] == []
    assert [c["role"] for c in before["values"]["llm_calls"]] == ["planner", "coder"]

    out = resume_job("killed", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished", out.message
    ids = [a["attempt_id"] for a in out.attempts]
    assert ids == ["killed:r1:d0", "killed:r1:d1", "killed:r2:d0"] and len(set(ids)) == len(ids)
    assert [a["verdict"] for a in out.attempts] == ["compile_error", "ok", "ok"]
    call_ids = [c["call_id"] for c in out.llm_calls]
    assert len(call_ids) == len(set(call_ids)) == 5
    assert len(server.answered()) == 5 and server.remaining() == {}  # no LLM call was made twice
    # the resumed process started at the compile step: the baseline was not evaluated again
    assert None not in fake_gpu.evaluations and len(fake_gpu.evaluations) == 2
    assert out.best["attempt_id"] == "killed:r1:d1" and out.best["score"] == 2.4
