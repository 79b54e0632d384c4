"""The candidate sees the baseline, as in the published format (issue 29, class 4): it may declare and launch
the baseline's kernels, whose names and linkage follow the published baselines; its own names never collide
with the baseline's; it can neither call nor replace the baseline's entry point."""

from __future__ import annotations

import subprocess

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict
from bench_tasks.harness import compile as cc
from bench_tasks.harness import source as src
from bench_tasks.harness.driver import driver_source
from bench_tasks.harness.evaluate import compile_only
from tests.conftest import requires_nvcc

CONV_BF16 = 'extern "C" void conv_2d_bf16_optimized(const __nv_bfloat16* input, const __nv_bfloat16* kernel, __nv_bfloat16* output, int rows, int cols, int kr, int kc)'


def test_kernel_stubs_are_found_by_nvccs_device_stub_helpers_with_either_linkage():
    defined = {
        "_Z27__device_stub__Z4kernPKfPfiPKfPfi",  # extern "C" __global__ void kern(const float*, float*, int)
        "kern",
        "_Z28__device_stub__Z5kern2PKfPfiPKfPfi",  # __global__ void kern2(const float*, float*, int)
        "_Z5kern2PKfPfi",
        "_Z6helperf",  # a __device__ function's host stub: not a kernel
        "base",  # the entry point
    }
    assert cc.kernel_stub_names(defined) == {"kern", "_Z5kern2PKfPfi"}


def _compile(task: str, precision: str, code: str, settings) -> cc.CompileOutcome:
    """Compiled and checked (the object, for the driver's symbols); whether it links: _verdict."""
    return cc.compile_candidate(load_task(task).variant(precision), src.prepare(code, settings.max_source_bytes), settings)


def _verdict(task: str, precision: str, code: str, settings) -> tuple[Verdict, str]:
    """What `bench eval --compile-only` says: compiled, checked and linked."""
    verdict, message, _ = compile_only(task, precision, code, settings=settings)
    return verdict, message


def _driver_symbols(task: str, precision: str, outcome: cc.CompileOutcome, settings) -> list[str]:
    variant = load_task(task).variant(precision)
    exe = cc.build_driver(variant, driver_source(variant, True), cc.compile_baseline(variant, settings), outcome.object_path, settings)
    return subprocess.run(["nm", "-C", str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()


@requires_nvcc
@pytest.mark.parametrize(
    "task, kernel",
    [
        ("conv_2d", "conv_2d_bf16_kernel"),  # extern "C", as the published optimized kernel declares it
        ("spmv_coo", "_Z21spmv_coo_float_kerneliPK13__nv_bfloat16PKiS3_S1_Pf"),  # C++ linkage, the published name
    ],
)
def test_the_published_baseline_kernel_names_are_exported_and_nothing_else(task, kernel, harness_settings):
    variant = load_task(task).variant("bf16")
    kernels = cc.baseline_kernel_symbols(variant, harness_settings)
    assert kernel in kernels
    assert variant.entry not in kernels and load_task(task).variant("fp32").entry not in kernels


@requires_nvcc
def test_a_candidate_that_defines_the_baseline_kernels_name_keeps_its_own(harness_settings):
    """tests/bench/honest/conv_2d/bf16_own_kernel_same_name.cu's situation: both kernels are in the driver, the
    baseline's global (its entry launches it), the candidate's local (the candidate launches it)."""
    code = (
        "#include <cuda_bf16.h>\n"
        'extern "C" __global__ void conv_2d_bf16_kernel(const __nv_bfloat16* i, const __nv_bfloat16* k, __nv_bfloat16* o, int a, int b, int c, int d) {}\n'
        + CONV_BF16
        + " { conv_2d_bf16_kernel<<<1, 1>>>(input, kernel, output, rows, cols, kr, kc); }\n"
    )
    outcome = _compile("conv_2d", "bf16", code, harness_settings)
    assert outcome.ok, outcome.message
    kinds = sorted(
        line.split()[1] for line in _driver_symbols("conv_2d", "bf16", outcome, harness_settings) if line.endswith(" conv_2d_bf16_kernel")
    )
    assert kinds == ["T", "t"]


@requires_nvcc
def test_a_candidate_can_neither_call_nor_replace_the_baselines_entry_point(harness_settings):
    calls = _verdict(
        "conv_2d",
        "bf16",
        "#include <cuda_bf16.h>\n"
        'extern "C" void conv_2d_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int, int);\n'
        + CONV_BF16
        + " { conv_2d_bf16(input, kernel, output, rows, cols, kr, kc); }\n",
        harness_settings,
    )
    assert calls[0] == Verdict.rejected and "conv_2d_bf16" in calls[1]
    replaces = _compile(
        "conv_2d",
        "bf16",
        "#include <cuda_bf16.h>\n"
        'extern "C" void conv_2d_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int, int) {}\n'
        + CONV_BF16
        + " { conv_2d_bf16(input, kernel, output, rows, cols, kr, kc); }\n",
        harness_settings,
    )
    assert replaces.ok, replaces.message
    kinds = sorted(
        line.split()[1] for line in _driver_symbols("conv_2d", "bf16", replaces, harness_settings) if line.endswith(" conv_2d_bf16")
    )
    assert kinds == ["T", "t"]  # the baseline's, global, is what the driver calls; the candidate's is local


@requires_nvcc
def test_a_kernel_the_baseline_does_not_have_is_refused_by_name(harness_settings):
    code = (
        "#include <cuda_bf16.h>\n"
        "__global__ void no_such_baseline_kernel(const __nv_bfloat16* i, __nv_bfloat16* o);\n"
        + CONV_BF16
        + " { no_such_baseline_kernel<<<1, 1>>>(input, output); }\n"
    )
    verdict, message = _verdict("conv_2d", "bf16", code, harness_settings)
    assert verdict == Verdict.rejected and "no_such_baseline_kernel" in message


@requires_nvcc
def test_calling_a_device_function_of_another_file_says_to_copy_it(harness_settings):
    code = (
        "#include <cuda_bf16.h>\n"
        "__device__ float baseline_helper(float x);\n"
        "__global__ void k(__nv_bfloat16* o) { o[0] = __float2bfloat16(baseline_helper(1.0f)); }\n"
        + CONV_BF16
        + " { k<<<1, 1>>>(output); }\n"
    )
    verdict, message = _verdict("conv_2d", "bf16", code, harness_settings)
    assert verdict == Verdict.compile_error
    assert "baseline_helper(float)" in message and "copy the function into the candidate" in message
