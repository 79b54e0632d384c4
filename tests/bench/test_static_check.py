"""Issue 29's classes of honest code the harness used to refuse, as own reproductions (no GPU): each compiles,
passes the static checks and links into its driver through the `--compile-only` path; and what is still
refused says what to change. The rule: bench_tasks/harness/symbols.py and bench_tasks/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench_tasks import load_task
from bench_tasks.harness import Verdict
from bench_tasks.harness.driver import driver_source
from bench_tasks.harness.evaluate import compile_only
from bench_tasks.harness.symbols import refusal
from bench_tasks.prototype import abi_mismatch, parse_abi_params
from tests.conftest import requires_nvcc

CLASSES = Path(__file__).parent / "candidates" / "issue29"
FORTIFY = ["-Xcompiler", "-D_FORTIFY_SOURCE=2"]  # what distributions' host compilers do by default at -O2 and above


def _check(name: str, settings, task: str = "vector_add", flags: list[str] | None = None):
    return compile_only(task, "fp32", (CLASSES / name).read_bytes(), settings=settings, extra_flags=flags)


@requires_nvcc
@pytest.mark.parametrize(
    "name, task, flags",
    [
        ("class1_device_function.cu", "vector_add", None),
        ("class2_host_runtime.cu", "vector_add", FORTIFY),
        ("class3_cub.cu", "vector_add", None),
        ("class3_thrust.cu", "vector_add", None),
        ("class5_selu_defaults.cu", "selu", None),
        ("class5_const_restrict.cu", "vector_add", None),
        ("class6_marked_preamble.cu", "vector_add", None),
    ],
)
def test_honest_code_of_each_class_compiles_passes_the_checks_and_links(name, task, flags, harness_settings):
    verdict, message, log = _check(name, harness_settings, task, flags)
    assert verdict == Verdict.ok, (message, log[-2000:])


@requires_nvcc
def test_the_cli_compile_only_links_a_candidate_that_leaves_out_defaulted_parameters(harness_settings, monkeypatch):
    from app.cli import cli

    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(harness_settings.cache_dir))
    result = CliRunner().invoke(cli, ["bench", "eval", "selu", "-c", str(CLASSES / "class5_selu_defaults.cu"), "--compile-only"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok") and "linked" in result.stdout


@requires_nvcc
def test_a_different_pointer_type_is_refused_with_both_prototypes_side_by_side(harness_settings):
    verdict, message, _ = _check("wrong_pointer_type.cu", harness_settings)
    assert verdict == Verdict.link_error
    assert "parameter 2 is `double const*` where the task has `const float* B`" in message
    assert 'expected:  extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N);' in message
    assert 'candidate: extern "C" void vector_add_optimized(float const*, double const*, float*, int);' in message


@requires_nvcc
def test_an_environment_read_on_purpose_is_refused_even_next_to_cub(harness_settings):
    verdict, message, _ = _check("refused_getenv_with_cub.cu", harness_settings)
    assert verdict == Verdict.rejected
    assert "forbidden symbol getenv: host function `getenv` is not allowed" in message
    assert "dlopen" not in message  # CUB's NVTX loader is compiled out, not allowed


SELU = load_task("selu").variant("fp32")


@pytest.mark.parametrize(
    "params, why",
    [
        ("float*, float const*, int", None),
        ("float*, float*, int, float", None),
        ("float* __restrict__, float const* __restrict__, int, float, float", None),
        ("float*, float const*", "leaves out `const int N, float alpha, float lambda`"),
        ("float const*, float*, long", "parameter 3 is `long` where the task has `const int N`"),
        ("float*, float const*, int, float, float, int", "takes 6 parameters; the task's prototype has 5"),
        ("float*, int, float const*", "parameter 2 is `int`"),
        ("float&, float const*, int", "parameter 1 is `float&`"),
    ],
)
def test_prototypes_are_compared_by_abi(params, why):
    got = abi_mismatch(SELU.prototype, parse_abi_params(params))
    assert got == why if why is None else why in got


def test_a_baseline_must_take_every_parameter():
    assert "a baseline takes every parameter" in abi_mismatch(SELU.prototype, parse_abi_params("float*, float const*, int"), False)


def test_the_driver_calls_the_candidate_with_the_parameters_it_declares():
    text = driver_source(SELU, True, candidate_params=3)
    assert 'extern "C" void selu_optimized(float* output, const float* input, const int N);' in text
    assert "selu_optimized((float*)a.ptr(0), (const float*)a.ptr(1), a.i32(2));" in text
    assert "selu((float*)a.ptr(0), (const float*)a.ptr(1), a.i32(2), a.f32(3), a.f32(4));" in text  # the baseline: all


@pytest.mark.parametrize(
    "symbol, verdict_says",
    [
        ("cublasSgemm_v2", "is cuBLAS, a vendor library: write the GEMM"),
        ("cublasLtMatmul", "cuBLASLt, a vendor library: write the GEMM yourself"),
        ("cudnnConvolutionForward", "cuDNN, a vendor library"),
        ("cusparseSpMV", "cuSPARSE, a vendor library"),
        ("cufftExecC2C", "cuFFT, a vendor library"),
        ("curandGenerateUniform", "cuRAND's host API, a vendor library"),
        ("sgemm_", "host BLAS/LAPACK routine"),
        ("_ZN7cutlass4gemm6device4GemmIfEC1Ev", "CUTLASS"),
        ("fopen", "host function `fopen` is not allowed: candidate code may not open or write files"),
        ("__fread_chk", "host function `fread` is not allowed"),
        ("system", "may not start, signal or replace processes"),
        ("connect", "may not use the network"),
        ("getenv", "may not read or change the environment"),
        ("dlopen", "may not read or change the environment or load libraries"),
        ("GOMP_parallel", "compute on host threads"),
        ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", "compute on host threads"),
        ("_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", "open or write files"),
        ("cudaDeviceReset", "destroy the harness's CUDA context"),
        ("_ZN2cm20launch_l2_scrub_readEiPK4int4mPi", "the harness's own code"),
        ("some_unknown_function", "not on the allowlist"),
    ],
)
def test_refusals_name_the_construct_and_the_fix(symbol, verdict_says):
    assert verdict_says in (refusal(symbol) or "")


@pytest.mark.parametrize(
    "symbol",
    [
        "exit",  # nvcc's host stub of a plain __device__ function; the error-check macro
        "__memcpy_chk",
        "__fprintf_chk",
        "__snprintf_chk",
        "__printf_chk",
        "__isoc23_strtol",
        "__cxa_throw_bad_array_new_length",
        "_ZNSt8ios_base4InitC1Ev",
        "_ZSt4cerr",
        "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
        "_ZNSt13runtime_errorC1EPKc",
        "_ZTVN10__cxxabiv117__class_type_infoE",
        "cudaLaunchKernel",
        "__cudaRegisterFatBinary",
        "expf",
    ],
)
def test_what_compilers_and_toolkit_headers_emit_for_honest_code_is_allowed(symbol):
    assert refusal(symbol) is None
