"""The harness on a real GPU (`pytest -m gpu`): baselines pass, adversarial candidates are caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tasks import all_tasks
from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness.cpus import split, usable

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
        ("modifies_input_later.cu", Verdict.wrong_answer, "modified input argument A"),
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


@pytest.mark.parametrize("name", ["modifies_input.cu", "modifies_input_later.cu"])
def test_inputs_compared_on_the_host_catch_a_modified_input_as_the_device_comparison_does(name, harness_settings):
    """The fallback for an input whose pristine device copy does not fit: copied back and compared on the host
    after every call (forced here by input_checks_on_host); an honest candidate still passes."""
    settings = harness_settings.model_copy(update={"input_checks_on_host": True})
    result = _eval(name, settings)
    assert result.verdict == Verdict.wrong_answer, result.message
    assert "modified input argument A" in result.message
    assert _eval("fast.cu", settings, timing=False).verdict == Verdict.ok


@pytest.mark.parametrize(
    "name, stage, timing",
    [
        ("every_other_call.cu", "second run", True),
        ("honest_then_idle.cu", "timed call", True),
        ("honest_then_idle.cu", "after_timing run", False),
    ],
)
def test_call_count_tricks_are_caught_by_the_second_run_the_timed_calls_and_the_recheck(name, stage, timing, harness_settings):
    result = _eval(name, harness_settings, sizes=[{"N": 65537}], timing=timing)
    assert result.verdict == Verdict.wrong_answer, result.message
    assert stage in result.message


def test_a_candidate_that_hangs_times_out_and_the_next_one_runs(harness_settings):
    settings = harness_settings.model_copy(update={"run_timeout_s": 20.0})
    result = _eval("spin.cu", settings)
    assert result.verdict == Verdict.timeout, result.message
    after = _eval("fast.cu", harness_settings, timing=False)
    assert after.verdict == Verdict.ok, "the GPU must be usable after a killed evaluation"


def test_a_spinning_kernel_is_stopped_by_the_call_limit_in_seconds_and_the_next_evaluation_is_fine(harness_settings):
    # At the default run timeout (300 s): the driver's call watchdog ends the run at max(10 s, 20x the baseline's call).
    assert harness_settings.run_timeout_s == 300 and harness_settings.call_timeout_floor_s == 10
    result = evaluate("vector_add", "fp32", (CANDIDATES / "spin.cu").read_text(), "paper", settings=harness_settings)
    assert result.verdict == Verdict.timeout, result.message
    assert "ran past 10.0 s" in result.message
    assert result.wall_seconds < 30  # issue 29: a hung candidate costs seconds of a GPU, not run_timeout_s
    after = _eval("fast.cu", harness_settings, timing=False)
    assert after.verdict == Verdict.ok, "the GPU must be usable after a stopped evaluation"


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
    # the real driver pinned itself to the cores the split gave it (every core of the machine where none is split)
    parts = split(harness_settings)
    assert result.driver_cpus == (parts[0] if parts else usable())
    assert 0 < result.stages["driver_startup"] < result.stages["driver"]


# -- timed calls that cannot be replayed (issue 13) -------------------------------------------------
# Every timed pair's inputs are redrawn on the device; timed calls chosen at random are checked against a
# float64 reference for exactly those inputs. The adversaries below pass every correctness run (first,
# second) and cheat only in the timing loop.

MM = [{"M": 256, "N": 1024, "K": 1024}]


def _eval_task(task: str, name: str, settings, sizes, timing=True):
    return evaluate(task, "fp32", (CANDIDATES / name).read_text(), sizes, settings=settings, timing=timing)


def _timed_checks(result):
    return [c for row in result.rows for c in row.checks if c.stage == "timed_call"]


def test_an_honest_faster_matrix_mul_stays_ok_and_its_timed_calls_are_checked(harness_settings):
    result = _eval_task("matrix_mul", "mm_honest_tiled.cu", harness_settings, [*MM, {"M": 500, "N": 1000, "K": 777}])
    assert result.verdict == Verdict.ok, result.message
    assert result.refreshed_inputs == ["A", "B"] and len(result.refresh_key) == 16
    for row in result.rows:
        timed = [c for c in row.checks if c.stage == "timed_call"]
        assert len(timed) >= 3 and all(c.passed and c.impl == "candidate" for c in timed)
        assert row.speedup > 1 and "inputs_not_refreshed" not in row.flags
    assert {"compile", "inputs", "references", "gpu_checks", "timing", "output_checks"} <= set(result.stages)


def test_every_baseline_timed_call_checked_matches_the_reference_for_its_redrawn_inputs(harness_settings):
    # The baselines alone: their checked timed calls (inputs drawn on the device, compared with the
    # numpy twin on a sample, reference computed in float64) pass, so the path itself is right.
    for task, sizes in (("matrix_mul", MM), ("spmv_csr", [{"rows": 4096, "cols": 2048}]), ("stencil_2d", [{"nx": 300, "ny": 257}])):
        for precision in ("fp32", "bf16"):
            result = evaluate(task, precision, None, sizes, settings=harness_settings)
            assert result.verdict == Verdict.ok, (task, precision, result.message)
            timed = _timed_checks(result)
            assert len(timed) >= 3 and all(c.passed and c.impl == "baseline" for c in timed)


def test_the_device_draws_are_the_numpy_twins_bit_for_bit(harness_settings, monkeypatch, tmp_path):
    import tempfile

    import numpy as np

    from bench_tasks import load_task
    from bench_tasks.harness.datacache import DataCache
    from bench_tasks.refresh import refresh_draw, refresh_values, shuffled_values, stream_id

    # The kept work directories land in a scratch root of their own, traversable by the sandbox's uid.
    root = Path(tempfile.mkdtemp(prefix="cm-draws-"))
    root.chmod(0o755)
    harness_settings = harness_settings.model_copy(update={"scratch_root": root})
    for task, precision, size in (
        ("vector_add", "bf16", {"N": 300001}),
        ("stencil_2d", "fp32", {"nx": 1000, "ny": 999}),
        ("spmv_csr", "fp32", {"rows": 3000, "cols": 2048}),
        ("cross_entropy_loss", "bf16", {"C": 100003}),
    ):
        variant = load_task(task).variant(precision)
        result = evaluate(task, precision, None, [size], settings=harness_settings, keep_workdir=True)
        assert result.verdict == Verdict.ok, result.message
        key = int(result.refresh_key, 16)
        (out,) = [d / "out" for d in root.glob("cm-eval-*") if (d / "plan.txt").read_text().find(f"refresh_key {key & 0xFFFFFFFF} ") >= 0]
        names = [p.name for p in variant.prototype.params]
        lengths = variant.task.lengths(size, precision)
        checked = 0
        for path in out.glob("c0_t*_input_*.bin"):
            pair, name = int(path.name.split("_")[1][1:]), path.name.split("_input_")[1][:-4]
            dtype = variant.prototype.param(name).dtype
            stream, everywhere = stream_id(0, names.index(name)), np.arange(lengths[name])
            draw = refresh_draw(variant, name)
            if draw.kind == "shuffle":  # the timed pairs' dataset's own values (the last check seed), permuted
                original = np.fromfile(
                    DataCache(harness_settings).entry(variant, size, harness_settings.seeds[-1]) / f"{name}.bin",
                    dtype={"float32": np.float32, "bfloat16": np.uint16}[dtype],
                )
                got, want = np.fromfile(path, dtype=original.dtype), shuffled_values(original, key, pair + 1, stream, everywhere)
            else:
                want = refresh_values(dtype, draw, key, pair + 1, stream, everywhere)
                got = np.fromfile(path, dtype=want.dtype)
            assert np.array_equal(got, want), (task, pair, name)
            checked += 1
        assert checked >= 3 * len(result.refreshed_inputs)


@pytest.mark.parametrize(
    "name",
    ["mm_replay_sticky.cu", "mm_replay_sticky_padded.cu", "mm_pointer_cache.cu", "mm_rotation_cache.cu", "mm_skip_every_other.cu"],
)
def test_replays_and_skipped_work_in_timed_calls_are_caught_by_the_timed_call_checks(name, harness_settings):
    result = _eval_task("matrix_mul", name, harness_settings, MM)
    assert result.verdict == Verdict.wrong_answer, result.message
    assert "timed call" in result.message and "inputs redrawn on the device" in result.message
    # it passed every correctness run: only the timed-call check catches it
    assert all(c.passed for row in result.rows for c in row.checks if c.stage in ("first", "second"))


def test_a_candidate_that_turns_lazy_late_in_the_timing_loop_is_caught(harness_settings):
    # Lazy after 200 calls of a size; the loop runs at least 400 pairs, and the pair after the loop
    # decides to stop is always checked.
    settings = harness_settings.model_copy(update={"min_pairs": 400, "max_seconds_per_size": 3.0})
    result = _eval_task("matrix_mul", "mm_lazy_late.cu", settings, MM)
    assert result.verdict == Verdict.wrong_answer, result.message
    assert "timed call" in result.message


def test_a_cache_keyed_on_the_kept_sparse_structure_is_caught(harness_settings):
    result = _eval_task("spmv_csr", "spmv_structure_cache.cu", harness_settings, [{"rows": 4096, "cols": 2048}])
    assert result.verdict == Verdict.wrong_answer, result.message
    assert "timed call" in result.message


def test_the_issue_fingerprint_replay_finds_no_timed_call_to_replay(harness_settings):
    # Issue 13's candidate replays only when the inputs match the previous call's: with every pair's
    # inputs redrawn, no timed call matches, so it computes them all, right (it is honest now).
    result = _eval_task("matrix_mul", "mm_replay_on_match.cu", harness_settings, MM)
    assert result.verdict == Verdict.ok, result.message
    timed = _timed_checks(result)
    assert len(timed) >= 3 and all(c.passed for c in timed)


INOUT_PROTO = 'extern "C" void ct_axpy_inplace(const float* X, float* Y, float a, int N)'
INOUT_ARGS = {
    "X": {"role": "input", "length": "N"},
    "Y": {"role": "inout", "length": "N"},
    "a": {"role": "scalar", "value": "0.5"},
    "N": {"role": "scalar", "value": "N"},
}
INOUT_BASELINE = """
__global__ void axpy(const float* X, float* Y, float a, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) Y[i] = a * X[i] + Y[i];
}
extern "C" void ct_axpy_inplace(const float* X, float* Y, float a, int N) {
  axpy<<<(N + 127) / 128, 128>>>(X, Y, a, N);
  cudaDeviceSynchronize();
}
"""
# Replays the Y it produced on its 7th call (after the correctness runs) for every later call.
INOUT_REPLAY = INOUT_BASELINE.replace("ct_axpy_inplace(", "ct_axpy_inplace_optimized(").replace(
    "  axpy<<<(N + 127) / 128, 128>>>(X, Y, a, N);\n  cudaDeviceSynchronize();",
    "  static int calls = 0; static float* saved = nullptr;\n"
    "  if (!saved) cudaMalloc(&saved, sizeof(float) * N);\n"
    "  if (++calls > 7) { cudaMemcpy(Y, saved, sizeof(float) * N, cudaMemcpyDeviceToDevice); return; }\n"
    "  axpy<<<(N + 127) / 128, 128>>>(X, Y, a, N);\n"
    "  cudaMemcpy(saved, Y, sizeof(float) * N, cudaMemcpyDeviceToDevice);",
)


def test_inout_data_is_redrawn_and_checked_in_timed_calls_of_a_custom_task(harness_settings):
    # In-out data is restored before every call from its source, which every pair redraws; a custom
    # task's oracle is the baseline's output of the same checked pair.
    from bench_tasks.spec import custom_task

    task = custom_task("ct_test_inout", "fp32", INOUT_PROTO, INOUT_ARGS, [{"N": 100003}], INOUT_BASELINE)
    honest = INOUT_BASELINE.replace("ct_axpy_inplace(", "ct_axpy_inplace_optimized(").replace("127) / 128, 128", "255) / 256, 256")
    ok = evaluate(task, "fp32", honest, settings=harness_settings)
    assert ok.verdict == Verdict.ok, ok.message
    assert ok.refreshed_inputs == ["X", "Y"]
    timed = _timed_checks(ok)
    assert len(timed) >= 3 and all(c.passed and c.impl == "candidate" for c in timed)
    replay = evaluate(task, "fp32", INOUT_REPLAY, settings=harness_settings)
    assert replay.verdict == Verdict.wrong_answer and "timed call" in replay.message, replay.message
