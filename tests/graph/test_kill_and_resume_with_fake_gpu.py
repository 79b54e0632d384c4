"""A real child process runs a job and is killed with SIGKILL while compiling; the job is resumed
in this process and finishes with every attempt and every LLM call present exactly once.
Compiles are real (nvcc); the GPU is FAKE (gpu.fake.FakeGpuEvaluator)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graph.contract import JobSpec
from graph.runner import _config, _graph, job_state, make_checkpointer, resume_job, start_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k

ROOT = Path(__file__).resolve().parents[2]


def test_process_killed_during_compile_resumes_without_losing_or_repeating_with_fake_gpu(tmp_path, server, fake_gpu, harness_cache):
    server.add(MODELS["planner"], k.plan("Grid"), k.plan("Again"))
    server.add(MODELS["coder"], k.reply(k.SYNTAX_ERROR_KERNEL), k.reply(k.fast_kernel(1.6)))
    server.add(MODELS["debugger"], k.reply(k.fast_kernel(2.4)))
    db, marker, state_dir = tmp_path / "checkpoints.db", tmp_path / "compiling", tmp_path / "state"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.graph.killable_job", str(db), str(state_dir), str(harness_cache), server.base_url, str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
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
    ids = [a.attempt_id for a in out.attempts]
    assert ids == ["killed:r1:d0", "killed:r1:d1", "killed:r2:d0"] and len(set(ids)) == len(ids)
    assert [a.verdict for a in out.attempts] == ["compile_error", "ok", "ok"]
    call_ids = [c.call_id for c in out.llm_calls]
    assert len(call_ids) == len(set(call_ids)) == 5
    assert len(server.answered()) == 5 and server.remaining() == {}  # no LLM call was made twice
    # the resumed process started at the compile step: the baseline was not evaluated again
    assert None not in fake_gpu.evaluations and len(fake_gpu.evaluations) == 2
    assert out.best.attempt_id == "killed:r1:d1" and out.best.score == 2.4


class _Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing in the runner catches it."""


def test_killed_after_a_steps_writes_before_its_checkpoint_resumes_and_finishes_with_fake_gpu(tmp_path, server, fake_gpu):
    """A kill after the verify task's writes were saved but before the checkpoint closing its step:
    a live get_state then shows no next step while the status is still "running". resume_job must
    continue the job (LangGraph applies the saved writes), not report it ended."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    class DiesBeforeCheckpointingTheFirstAttempt(SqliteSaver):
        armed = True

        def put(self, config, checkpoint, metadata, new_versions):
            if self.armed and "attempts" in new_versions and checkpoint["channel_values"].get("attempts"):
                raise _Killed("killed between the step's writes and its checkpoint")
            return super().put(config, checkpoint, metadata, new_versions)

    server.add(MODELS["planner"], k.plan("Grid"), k.plan("Vectorize"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel(1.5)), k.reply(k.fast_kernel(2.5)))
    saver = DiesBeforeCheckpointingTheFirstAttempt(sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False))
    saver.setup()
    settings = agent_settings(tmp_path, server)
    with pytest.raises(_Killed):
        start_job(
            JobSpec(task="vector_add", precision="fp32", rounds=2, debug=0),
            job_id="cut",
            checkpointer=saver,
            evaluator=fake_gpu,
            settings=settings,
        )
    saver.armed = False
    before = job_state("cut", saver, settings)
    assert before["next"] == [] and before["values"]["status"] == "running"  # the state that misled the runner
    assert [a["attempt_id"] for a in before["values"]["attempts"]] == ["cut:r1:d0"]

    events: list = []
    out = resume_job("cut", checkpointer=saver, evaluator=fake_gpu, settings=settings, on_event=events.append)
    assert out.status == "finished", out.message
    assert [a.attempt_id for a in out.attempts] == ["cut:r1:d0", "cut:r2:d0"]
    assert len(server.answered()) == 4 and server.remaining() == {}  # round 1's LLM calls were not made again
    assert out.best.attempt_id == "cut:r2:d0"
    assert "__metadata__" not in {e.node for e in events}
    assert resume_job("cut", checkpointer=saver, evaluator=fake_gpu, settings=settings).status == "finished"


def test_graph_ended_without_a_final_status_is_reported_not_raised_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    server.add(MODELS["planner"], k.plan("Grid"))
    server.add(MODELS["coder"], k.reply(k.fast_kernel(1.5)))
    settings = agent_settings(tmp_path, server)
    assert (
        start_job(
            JobSpec(task="vector_add", precision="fp32", rounds=1, debug=0),
            job_id="odd",
            checkpointer=checkpointer,
            evaluator=fake_gpu,
            settings=settings,
        ).status
        == "finished"
    )
    graph = _graph("odd", JobSpec(task="vector_add", precision="fp32", rounds=1, debug=0), settings, checkpointer, fake_gpu)
    graph.update_state(_config("odd", settings), {"status": "running"}, as_node="finish")
    out = resume_job("odd", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and "'running'" in out.message
