"""The ABI probe (bench_tasks/harness/compile.py, issue 39): the entry point's type is read back from the object
even when a `__global__` kernel or helper has the same name as the extern "C" entry (a C++ overload: the
published top_k BF16 kernel), and a missing or wrong-typed entry is still refused with what to change."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict
from bench_tasks.harness import source as harness_source
from bench_tasks.harness.compile import compile_candidate
from tests.conftest import requires_nvcc

SELU = (Path(__file__).parent / "honest" / "selu" / "fp32_omitted_defaults.cu").read_text()
ENTRY = 'extern "C" void selu_optimized(float* output, const float* input, const int N) {'
# the kernel takes the task's five parameters: the entry's overload of the full shape
OVERLOADED = SELU.replace("selu_kernel", "selu_optimized")


def _compile(source: str, settings):
    variant = load_task("selu").variant("fp32")
    return compile_candidate(variant, harness_source.prepare(source, 1 << 20), settings)


pytestmark = [requires_nvcc]


@pytest.mark.parametrize(
    "source",
    [
        OVERLOADED,
        OVERLOADED.replace(ENTRY, 'extern "C" void selu_optimized(float* const output, const float* input, int N) {'),
        SELU + "\n__host__ __device__ inline float selu_optimized(float x) { return x; }\n",  # a same-named helper
    ],
    ids=["kernel_of_the_full_shape", "kernel_and_const_entry", "helper"],
)
def test_an_entry_beside_a_same_named_kernel_or_helper_is_accepted(source, harness_settings):
    outcome = _compile(source, harness_settings)
    assert outcome.ok, f"{outcome.verdict}: {outcome.message}"
    assert outcome.params == 3  # the extern "C" entry's type was read, not the kernel's (5 parameters)


def test_a_wrong_typed_entry_beside_a_same_named_kernel_is_refused_with_what_to_change(harness_settings):
    wrong = OVERLOADED.replace(ENTRY, 'extern "C" void selu_optimized(float* output, const float* input, long N) {')
    outcome = _compile(wrong, harness_settings)
    assert outcome.verdict == Verdict.link_error
    assert "overloaded" in outcome.message and 'keep one extern "C" function' in outcome.message
    assert 'Expected: extern "C" void selu_optimized(float* output, const float* input, const int N' in outcome.message


def test_a_same_named_kernel_of_the_entrys_shape_does_not_hide_the_entry(harness_settings):
    # both are types the rule accepts (const on a pointer may differ): the C++ overload is set aside by its mangled name
    same_shape = SELU + "\n__global__ void selu_optimized(float* o, float* i, int n) {}\n"
    outcome = _compile(same_shape, harness_settings)
    assert outcome.ok and outcome.params == 3, outcome.message
    wrong = same_shape.replace(ENTRY, 'extern "C" void selu_optimized(float* output, const float* input, long N) {')
    assert _compile(wrong, harness_settings).verdict == Verdict.link_error


def test_a_missing_or_wrong_typed_entry_is_still_refused(harness_settings):
    missing = _compile(SELU.replace("void selu_optimized(", "void selu_other("), harness_settings)
    assert missing.verdict == Verdict.link_error and missing.message.startswith("missing entry point selu_optimized")
    cxx = _compile(SELU.replace('extern "C" ', ""), harness_settings)
    assert cxx.verdict == Verdict.link_error and 'declare it extern "C"' in cxx.message
    long_n = _compile(SELU.replace(ENTRY, 'extern "C" void selu_optimized(float* output, const float* input, long N) {'), harness_settings)
    assert long_n.verdict == Verdict.link_error and "parameter 3 is `long` where the task has `const int N`" in long_n.message


def test_a_probe_symbol_of_the_candidates_own_is_refused(harness_settings):
    # a wrong entry beside a same-named kernel, and a forged probe symbol (an asm label) claiming an accepted type
    forged = (
        OVERLOADED.replace(ENTRY, 'extern "C" void selu_optimized(float* output, const float* input, long N) {')
        + '\nvoid forged_probe() __asm__("_ZN14cudamaster_abi5probeIPFvPfPKfiELi99EEEvv");\nvoid forged_probe() {}\n'
    )
    outcome = _compile(forged, harness_settings)
    assert outcome.verdict == Verdict.rejected and "may not define that namespace" in outcome.message
