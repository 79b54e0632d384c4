"""Checkpointer selection (SQLite, PostgreSQL), the per-job evaluation cache, reply parsing."""

from __future__ import annotations

import uuid

import pytest

from bench_tasks import load_task
from gpu.cache import CachingEvaluator
from gpu.protocol import CompileRequest, EvaluateRequest, ProfileRequest
from graph.contract import JobSpec
from graph.kernel_text import check_prototype, extract_code, parse_flags
from graph.runner import close_checkpointer, make_checkpointer, start_job
from tests.graph.conftest import MODELS, agent_settings
from tests.support import kernels as k
from tests.support.workers import postgres_url

PG_BASE = "postgresql://postgres@127.0.0.1:5432/test"


def _postgres_up() -> bool:
    try:
        import psycopg

        with psycopg.connect(postgres_url(PG_BASE), connect_timeout=3):
            return True
    except Exception:  # noqa: BLE001
        return False


def test_sqlite_urls(tmp_path, monkeypatch):
    from langgraph.checkpoint.sqlite import SqliteSaver

    assert isinstance(make_checkpointer(f"sqlite:///{tmp_path}/a/b.db"), SqliteSaver)
    assert (tmp_path / "a" / "b.db").exists()
    assert isinstance(make_checkpointer("sqlite:///:memory:"), SqliteSaver)
    monkeypatch.setenv("CUDAMASTER_AGENT__STATE_DIR", str(tmp_path / "state"))  # no CUDAMASTER_CHECKPOINT_URL: SQLite there
    default = make_checkpointer()
    assert isinstance(default, SqliteSaver) and (tmp_path / "state" / "checkpoints.db").exists()
    with pytest.raises(ValueError, match="unsupported database URL"):
        make_checkpointer("mysql://x")


@pytest.mark.skipif(not _postgres_up(), reason="no PostgreSQL on 127.0.0.1:5432")
def test_job_on_postgres_checkpointer_with_fake_gpu(tmp_path, server, fake_gpu):
    from langgraph.checkpoint.postgres import PostgresSaver

    saver = make_checkpointer(postgres_url(PG_BASE))
    assert isinstance(saver, PostgresSaver)
    server.add(MODELS["planner"], k.plan())
    server.add(MODELS["coder"], k.reply(k.fast_kernel(1.9)))
    job_id = "pg-" + uuid.uuid4().hex[:8]
    try:
        out = start_job(
            JobSpec(task="vector_add", precision="fp32", rounds=1, debug=0),
            job_id=job_id,
            checkpointer=saver,
            evaluator=fake_gpu,
            settings=agent_settings(tmp_path, server),
        )
    finally:
        close_checkpointer(saver)
    assert out.status == "finished" and out.best.score == 1.9
    reopened = make_checkpointer(postgres_url(PG_BASE))
    try:
        assert reopened.get_tuple({"configurable": {"thread_id": job_id}}) is not None
    finally:
        close_checkpointer(reopened)
    assert reopened._cudamaster_pool.closed  # its worker threads stopped: nothing left for the garbage collector


def test_closing_a_sqlite_checkpointer_closes_its_connection(tmp_path):
    import sqlite3

    saver = make_checkpointer(f"sqlite:///{tmp_path}/c.db")
    saver.conn.execute("select 1")
    close_checkpointer(saver)
    with pytest.raises(sqlite3.ProgrammingError):
        saver.conn.execute("select 1")


def test_evaluation_cache_keyed_by_source_and_flags_with_fake_gpu(tmp_path, fake_gpu):
    cached = CachingEvaluator(fake_gpu, tmp_path / "job")
    src = k.fast_kernel(1.5)
    first = cached.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=src))
    again = CachingEvaluator(fake_gpu, tmp_path / "job").evaluate(
        EvaluateRequest(task="vector_add", precision="fp32", source=src)
    )  # a new process
    assert again == first and len(fake_gpu.evaluations) == 1
    cached.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=src, sizes="paper", flags=["-use_fast_math"]))
    cached.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=src, sizes="edge"))
    cached.evaluate(EvaluateRequest(task="vector_add", precision="fp32", source=src + "\n"))
    assert len(fake_gpu.evaluations) == 4
    cached.compile(CompileRequest(task="vector_add", precision="fp32", source=src))
    cached.compile(CompileRequest(task="vector_add", precision="fp32", source=src))
    assert len(fake_gpu.compiles) == 1


def test_extract_code_and_prototype_check():
    variant = load_task("vector_add").variant("fp32")
    entry = variant.candidate_entry
    assert extract_code(k.reply(k.fast_kernel()), entry).startswith("#include <cuda_runtime.h>")
    assert extract_code("Use more blocks.", entry) == ""
    assert extract_code("```python\nprint(1)\n```", entry) == ""
    assert "vector_add_optimized" in extract_code(k.fast_kernel(), entry)  # an unfenced source is taken whole
    two = "```cuda\n__device__ int f() { return 1; }\n```\nand\n```cuda\n" + k.fast_kernel() + "```"
    assert "vector_add_grid" in extract_code(two, entry)
    assert not check_prototype(k.fast_kernel(), variant).changed  # __restrict__ is fine
    changed = check_prototype(k.CHANGED_PROTOTYPE_KERNEL, variant)
    assert changed.changed and "parameter 4 is `long N`" in changed.message  # the harness's rule and words
    # const on an input pointer may differ (the harness accepts it: tests/graph/test_one_entry_rule.py)
    assert not check_prototype(
        k.fast_kernel().replace(
            "const float* A, const float* B, float* C, int N) {\n  if", "float* A, const float* B, float* C, int N) {\n  if"
        ),
        variant,
    ).changed


def test_flag_allowlist():
    assert parse_flags('{"flags": ["-use_fast_math", "-maxrregcount=300", "-Xptxas=-O3,-v", "-Xptxas=--foo", "-o/etc/x"]}') == (
        ["-use_fast_math", "-Xptxas=-O3,-v"],
        ["-maxrregcount=300", "-Xptxas=--foo", "-o/etc/x"],
    )
    assert parse_flags("-use_fast_math --extra-device-vectorization -Xptxas -O3") == (
        ["-use_fast_math", "--extra-device-vectorization", "-Xptxas=-O3"],
        [],
    )
    assert parse_flags("none needed") == ([], [])


def test_local_evaluator_profile_without_a_profiler_gives_a_note_not_a_crash(harness_settings, monkeypatch):
    from gpu.local import LocalEvaluator

    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", "/nonexistent/ncu")  # no Nsight Compute, as on a CPU machine
    result = LocalEvaluator(harness_settings).profile(ProfileRequest(task="vector_add", precision="fp32", source=None, mode="filtered"))
    assert result.text == "" and result.note.startswith("no profile (")
    assert (
        LocalEvaluator(harness_settings).profile(ProfileRequest(task="vector_add", precision="fp32", source=None, mode="none")).text == ""
    )


def test_local_evaluator_profile_shows_the_roofline_row_at_the_profiled_size_with_a_recorded_h200_profile(harness_settings, monkeypatch):
    # The ncu run is replaced by a real H200 profile (a committed CSV); the rendering path is the real one.
    from pathlib import Path

    import profiling.ncu
    from gpu.local import LocalEvaluator
    from profiling.parse import parse_report
    from profiling.report import ProfileReport

    csv = (Path(__file__).parents[1] / "fixtures" / "ncu" / "labelled" / "copy_fp32.csv").read_text()
    report = ProfileReport.from_kernels(parse_report(csv), csv, task="vector_add", precision="fp32", impl="baseline", params={"N": 262144})
    monkeypatch.setattr(profiling.ncu, "profile_kernel", lambda *a, **k: report)
    rows = [
        {"params": {"N": 1024}, "complexity": 1024, "passed": True, "roofline_floor_us": 0.01},
        {
            "params": {"N": 262144},
            "complexity": 262144,
            "passed": True,
            "roofline_floor_us": 0.66,
            "baseline": {"median_us": 126.0, "iqr_us": 1.0, "min_us": 125.0, "samples": 10, "wall_median_us": 132.0},
            "baseline_roofline_pct": 0.52,
        },
    ]
    text = (
        LocalEvaluator(harness_settings)
        .profile(ProfileRequest(task="vector_add", precision="fp32", source=None, mode="filtered", rows=rows))
        .text
    )
    assert "Roofline at {'N': 262144}" in text and "0.66 us" in text
    assert (
        "Roofline"
        not in LocalEvaluator(harness_settings)
        .profile(ProfileRequest(task="vector_add", precision="fp32", source=None, mode="filtered"))
        .text
    )
