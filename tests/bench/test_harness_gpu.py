"""The harness on a real GPU (`pytest -m gpu`): baselines pass, adversarial candidates are caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tasks import all_tasks
from bench_tasks.harness import Verdict, evaluate

pytestmark = pytest.mark.gpu

CANDIDATES = Path(__file__).parent / "candidates"
SMALL = [{"N": 1000}, {"N": 65537}]
VARIANTS = [(t.name, p) for t in all_tasks() for p in t.prototypes]


def _eval(name: str, settings, sizes=SMALL, timing=True):
    return evaluate("vector_add", "fp32", (CANDIDATES / name).read_text(), sizes, settings=settings, timing=timing)


@pytest.mark.parametrize("name, precision", VARIANTS)
@pytest.mark.parametrize("size_set", ["paper", "edge"])
def test_every_baseline_passes_every_size_and_seed(name, precision, size_set, harness_settings):
    task = next(t for t in all_tasks() if t.name == name)
    if size_set not in task.sizes:
        pytest.skip(f"{name} has no {size_set} sizes")
    result = evaluate(name, precision, None, size_set, settings=harness_settings, timing=False)
    assert result.verdict == Verdict.ok, result.message
    for row in result.rows:
        assert row.passed
        seeds = {c.seed for c in row.checks}
        assert len(seeds) >= 4  # 3 check seeds + the fresh one after timing
        assert all(c.checked_elements > 0 for c in row.checks)


def test_correct_faster_candidate_is_ok_with_speedup(harness_settings):
    result = _eval("fast.cu", harness_settings, sizes=[{"N": 262144}, {"N": 4194304}])
    assert result.verdict == Verdict.ok, result.message
    assert all(r.speedup > 1 for r in result.rows)
    assert result.score > 1
    assert result.gpu is not None and result.gpu.name


def test_marked_format_candidate_evaluates(harness_settings):
    assert _eval("marked.cu", harness_settings, timing=False).verdict == Verdict.ok


@pytest.mark.parametrize(
    "name, verdict, words",
    [
        ("noop.cu", Verdict.wrong_answer, "not finite"),
        ("zeros.cu", Verdict.wrong_answer, "outside"),
        ("half.cu", Verdict.wrong_answer, "not finite"),
        ("cache_replay.cu", Verdict.wrong_answer, "outside"),
        ("modifies_input.cu", Verdict.wrong_answer, "modified input argument A"),
        ("write_past.cu", Verdict.runtime_error, "past the end of argument C"),
        ("bad_pointer.cu", Verdict.runtime_error, "cudaErrorIllegalAddress"),
        ("cublas_header.cu", Verdict.rejected, "cublas"),
        ("system_call.cu", Verdict.rejected, "system"),
    ],
)
def test_adversarial_candidates_get_the_right_verdict(name, verdict, words, harness_settings):
    result = _eval(name, harness_settings)
    assert result.verdict == verdict, result.message
    assert words in result.message


@pytest.mark.parametrize("name, stage", [("every_other_call.cu", "second run"), ("honest_then_idle.cu", "after_timing run")])
def test_call_count_tricks_are_caught_by_the_second_run_and_the_recheck(name, stage, harness_settings):
    result = _eval(name, harness_settings, sizes=[{"N": 65537}])
    assert result.verdict == Verdict.wrong_answer, result.message
    assert stage in result.message


def test_a_candidate_that_hangs_times_out_and_the_next_one_runs(harness_settings):
    settings = harness_settings.model_copy(update={"run_timeout_s": 20.0})
    result = _eval("spin.cu", settings)
    assert result.verdict == Verdict.timeout, result.message
    after = _eval("fast.cu", harness_settings, timing=False)
    assert after.verdict == Verdict.ok, "the GPU must be usable after a killed evaluation"


def test_work_hidden_on_a_side_stream_is_counted(harness_settings):
    # The candidate spins ~2 ms on its own non-blocking stream and returns at once. The harness
    # makes every candidate stream blocking, so its end event on the default stream waits for
    # those 2 ms; the tail after a device-wide synchronise would count them otherwise.
    result = _eval("side_stream.cu", harness_settings, sizes=[{"N": 65536}])
    assert result.verdict == Verdict.ok, result.message
    row = result.rows[0]
    assert row.candidate.median_us > 1000.0
    assert row.speedup < 1.0
    assert "late_work" not in row.flags  # caught by the blocking stream, not by the tail


def test_result_records_seeds_flags_and_environment(harness_settings):
    result = _eval("fast.cu", harness_settings, sizes=[{"N": 4096}])
    assert len(result.seeds) == 4 and result.seeds[:3] == [1, 2, 3]
    assert result.gpu.driver_version and result.gpu.runtime_version and result.gpu.sm_count > 0
    row = result.rows[0]
    assert row.roofline_floor_us > 0 and row.candidate_roofline_pct > 0
    assert row.baseline.samples >= harness_settings.min_pairs
