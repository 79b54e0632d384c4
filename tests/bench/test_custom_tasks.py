"""Custom tasks (a team's own kernel): built from a submission, registered by id, baseline as the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness import compile as cc
from bench_tasks.harness.driver import driver_source
from bench_tasks.spec import TaskError, custom_task, register_task
from tests.conftest import gpu_present, requires_nvcc

PROTO = 'extern "C" void scale(const float* X, float* Y, float a, int N)'
ARGS = {
    "X": {"role": "input", "length": "N"},
    "Y": {"role": "output", "length": "N"},
    "a": {"role": "scalar", "value": "0.5"},
    "N": {"role": "scalar", "value": "N"},
}
BASELINE = """
__global__ void scale_kernel(const float* X, float* Y, float a, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) Y[i] = a * X[i];
}
extern "C" void scale(const float* X, float* Y, float a, int N) {
  scale_kernel<<<(N + 127) / 128, 128>>>(X, Y, a, N);
  cudaDeviceSynchronize();
}
"""
CANDIDATE = BASELINE.replace('extern "C" void scale(', 'extern "C" void scale_optimized(').replace("127) / 128, 128", "255) / 256, 256")


def _task(name="ct_test_scale", baseline=BASELINE):
    return custom_task(name, "fp32", PROTO, ARGS, [{"N": 1000}, {"N": 1 << 20}], baseline)


def test_a_custom_task_is_built_and_loadable_by_id_once_registered():
    task = _task("ct_test_registry")
    with pytest.raises(TaskError):
        load_task("ct_test_registry")
    register_task(task)
    loaded = load_task("ct_test_registry")
    assert loaded is task and loaded.custom and loaded.oracle == "baseline" and loaded.reference_module is None
    variant = loaded.variant("fp32")
    assert variant.entry == "scale" and variant.candidate_entry == "scale_optimized"
    assert loaded.size_list("paper") == loaded.size_list("large") == [{"N": 1000}, {"N": 1 << 20}]
    assert loaded.complexity_of({"N": 1000}) == 1000
    assert loaded.work({"N": 1000}, "fp32") == (0.0, 8000.0)
    with pytest.raises(TaskError, match="unknown precision"):
        loaded.variant("bf16")


def test_custom_tasks_without_an_output_or_with_a_bad_role_are_refused():
    with pytest.raises(TaskError, match="at least one output"):
        custom_task("ct_x", "fp32", PROTO, {**ARGS, "Y": {"role": "input", "length": "N"}}, [{"N": 4}], BASELINE)
    with pytest.raises(TaskError, match="role"):
        custom_task("ct_x", "fp32", PROTO, {**ARGS, "Y": {"role": "sideways", "length": "N"}}, [{"N": 4}], BASELINE)


@requires_nvcc
def test_a_custom_baseline_is_compiled_with_the_candidate_checks(harness_settings):
    variant = _task().variant("fp32")
    obj = cc.compile_baseline(variant, harness_settings)
    assert cc.build_driver(
        variant, driver_source(variant, True), obj, cc.compile_candidate(variant, CANDIDATE, harness_settings).object_path, harness_settings
    ).exists()
    evil = _task("ct_test_evil", BASELINE.replace("cudaDeviceSynchronize();", 'cudaDeviceSynchronize(); system("id");'))
    result = evaluate(evil, "fp32", CANDIDATE, settings=harness_settings)
    assert result.verdict == Verdict.rejected
    assert "the task's baseline" in result.message and "system" in result.message


@requires_nvcc
@pytest.mark.skipif(gpu_present()[0], reason="checks the no-GPU path")
def test_custom_task_evaluation_compiles_then_needs_a_gpu(harness_settings):
    from bench_tasks.harness import NoGpuError

    with pytest.raises(NoGpuError):
        evaluate(_task("ct_test_nogpu"), "fp32", CANDIDATE, settings=harness_settings)


@pytest.mark.gpu
def test_custom_task_candidates_are_checked_against_the_baseline_output(harness_settings):
    task = _task("ct_test_gpu")
    ok = evaluate(task, "fp32", CANDIDATE, settings=harness_settings)
    assert ok.verdict == Verdict.ok, ok.message
    assert all(r.speedup and r.speedup > 0 for r in ok.rows)
    assert not any(c.impl == "baseline" for r in ok.rows for c in r.checks)  # the oracle is not checked against itself
    wrong = evaluate(task, "fp32", CANDIDATE.replace("a * X[i]", "a * X[i] + 1e-3f"), settings=harness_settings)
    assert wrong.verdict == Verdict.wrong_answer, wrong.message


def test_compare_refuses_a_non_finite_oracle():
    from bench_tasks.compare import compare
    from bench_tasks.spec import Tolerance

    result = compare("Y", np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), Tolerance(1e-5, 1e-4))
    assert not result.passed and "non-finite reference" in result.message
