"""Harness behaviour that needs no GPU: compile verdicts, the symbol allowlist, bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import CandidateError, NoGpuError, TaskError, Verdict, compile_candidate, evaluate
from bench_tasks.harness import source as src
from bench_tasks.harness.result import EvaluationResult
from tests.conftest import gpu_present, requires_nvcc

CANDIDATES = Path(__file__).parent / "candidates"


def _compile(name: str, settings, task="vector_add", precision="fp32"):
    variant = load_task(task).variant(precision)
    return compile_candidate(variant, src.prepare((CANDIDATES / name).read_text(), settings.max_source_bytes), settings)


@requires_nvcc
def test_correct_candidate_compiles_and_passes_symbol_checks(harness_settings):
    outcome = _compile("fast.cu", harness_settings)
    assert outcome.ok, outcome.message
    assert outcome.object_path.exists()
    assert "-O3" in outcome.flags and any("sm_90" in f for f in outcome.flags)


@requires_nvcc
def test_syntax_error_is_compile_error_with_location(harness_settings):
    outcome = _compile("syntax_error.cu", harness_settings)
    assert outcome.verdict == Verdict.compile_error
    assert "candidate.cu(1): error" in outcome.message
    assert "expected an expression" in outcome.log


@requires_nvcc
def test_wrong_prototype_is_link_error_naming_the_expected_one(harness_settings):
    outcome = _compile("wrong_prototype.cu", harness_settings)
    assert outcome.verdict == Verdict.link_error
    assert 'extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N);' in outcome.message


@requires_nvcc
def test_missing_entry_is_link_error(harness_settings):
    outcome = _compile("missing_entry.cu", harness_settings)
    assert outcome.verdict == Verdict.link_error
    assert "missing entry point vector_add_optimized" in outcome.message


@requires_nvcc
@pytest.mark.parametrize(
    "name, symbol",
    [("cublas_decl.cu", "cublasCreate_v2"), ("system_call.cu", "system"), ("file_write.cu", "fopen")],
)
def test_forbidden_symbols_are_rejected_by_name(harness_settings, name, symbol):
    outcome = _compile(name, harness_settings)
    assert outcome.verdict == Verdict.rejected
    assert f"forbidden symbol {symbol}" in outcome.message or symbol in outcome.message


@requires_nvcc
def test_inline_syscall_is_rejected(harness_settings):
    outcome = _compile("raw_syscall.cu", harness_settings)
    assert outcome.verdict == Verdict.rejected
    assert "system calls" in outcome.message


@requires_nvcc
def test_marked_format_compiles_the_preamble_and_the_block_not_what_follows(harness_settings):
    text = (CANDIDATES / "marked.cu").read_text()
    code = src.extract(text)
    assert "int main()" not in code and "unused_helper" not in code and "vector_add_origin" not in code
    assert "vadd_kernel" in code and "#include <cuda_runtime.h>" in code and "#define THREADS 256" in code
    assert _compile("marked.cu", harness_settings).ok


def test_marked_format_with_one_marker_is_a_clear_error():
    with pytest.raises(CandidateError, match="OPTIMIZED KERNEL END"):
        src.extract("// ==== OPTIMIZED KERNEL START ====\nint x;\n")


@pytest.mark.parametrize(
    "source, match",
    [("", "empty"), ("   \n\t", "empty"), (b"\xff\xfe bad", "not UTF-8"), ("x" * 300_000, "limit")],
)
def test_bad_sources_raise_candidate_error(source, match):
    with pytest.raises(CandidateError, match=match):
        src.prepare(source, 256 * 1024)


def test_unknown_task_and_precision_are_clear_errors(harness_settings):
    with pytest.raises(TaskError, match=r"unknown task 'no_such_task': the tasks are listed by `cudamaster bench list`"):
        evaluate("no_such_task", "fp32", "x", settings=harness_settings)
    with pytest.raises(TaskError, match=r"unknown task 'vector_ad': did you mean vector_add\?"):
        evaluate("vector_ad", "fp32", "x", settings=harness_settings)
    with pytest.raises(TaskError, match=r"unknown precision 'fp16'.*fp32, bf16"):
        evaluate("vector_add", "fp16", "x", settings=harness_settings)
    with pytest.raises(TaskError, match="unknown size set"):
        evaluate("vector_add", "fp32", None, "huge", settings=harness_settings)


@requires_nvcc
def test_compile_verdicts_come_back_as_results_without_a_gpu(harness_settings):
    result = evaluate("vector_add", "fp32", (CANDIDATES / "system_call.cu").read_bytes(), settings=harness_settings)
    assert result.verdict == Verdict.rejected
    doc = EvaluationResult.model_validate_json(result.model_dump_json())
    assert doc.schema_version and doc.harness_version and doc.compile_flags and doc.nvcc_version.startswith("V")


@requires_nvcc
@pytest.mark.skipif(gpu_present()[0], reason="checks the no-GPU message")
def test_no_gpu_is_a_clear_error_after_compiling(harness_settings):
    with pytest.raises(NoGpuError, match=r"No NVIDIA GPU found.*--compile-only"):
        evaluate("vector_add", "fp32", (CANDIDATES / "fast.cu").read_text(), settings=harness_settings)


@requires_nvcc
def test_compiled_objects_are_cached_by_source_and_flags(harness_settings):
    first = _compile("fast.cu", harness_settings)
    second = _compile("fast.cu", harness_settings)
    assert first.object_path == second.object_path
    variant = load_task("vector_add").variant("fp32")
    other = compile_candidate(variant, (CANDIDATES / "fast.cu").read_text(), harness_settings, ["-use_fast_math"])
    assert other.ok and other.object_path != first.object_path


@requires_nvcc
def test_a_source_and_its_stripped_copy_from_a_reply_are_one_compile(harness_settings):
    from bench_tasks.harness import compile as cc

    variant = load_task("vector_add").variant("fp32")
    text = (CANDIDATES / "fast.cu").read_text() + "// one compile, read from a file or a reply\n"
    first = compile_candidate(variant, text + "\n  \n", harness_settings)
    runs = cc.NVCC_RUNS["candidate"]
    second = compile_candidate(variant, text.strip(), harness_settings)  # as graph/kernel_text.extract_code gives it
    assert first.ok and second.ok and second.object_path == first.object_path and cc.NVCC_RUNS["candidate"] == runs


@requires_nvcc
def test_candidate_streams_are_created_through_the_blocking_wrappers(harness_settings):
    # side_stream.cu asks for a cudaStreamNonBlocking stream; the linked object must call the
    # runtime's wrapper instead, which drops the flag, so its work stays inside the timed events.
    import subprocess

    outcome = _compile("side_stream.cu", harness_settings)
    assert outcome.ok, outcome.message
    undefined = subprocess.run(["nm", "-u", str(outcome.object_path)], capture_output=True, text=True).stdout
    assert "cm_stream_create_with_flags" in undefined
    assert "cudaStreamCreateWithFlags" not in undefined
    runtime = (Path(__file__).parents[2] / "bench_tasks/harness/runtime/cm_runtime.h").read_text()
    assert 'extern "C" cudaError_t cm_stream_create_with_flags' in runtime


ADVERSARIES = {  # tests/bench/test_harness_gpu.py runs them; here: they build, so the GPU time is not wasted on a typo
    "matrix_mul": [
        "mm_honest_tiled.cu",
        "mm_replay_on_match.cu",
        "mm_replay_sticky.cu",
        "mm_replay_sticky_padded.cu",
        "mm_pointer_cache.cu",
        "mm_rotation_cache.cu",
        "mm_skip_every_other.cu",
        "mm_lazy_late.cu",
    ],
    "spmv_csr": ["spmv_structure_cache.cu"],
    "vector_add": ["modifies_input_later.cu"],
}


@requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("task, name", [(t, n) for t, names in ADVERSARIES.items() for n in names])
def test_the_timed_call_adversaries_compile_pass_the_symbol_checks_and_link(task, name, harness_settings):
    from bench_tasks.harness import compile as cc
    from bench_tasks.harness.driver import driver_source

    outcome = _compile(name, harness_settings, task=task)
    assert outcome.ok, outcome.message
    variant = load_task(task).variant("fp32")
    exe = cc.build_driver(
        variant, driver_source(variant, True), cc.compile_baseline(variant, harness_settings), outcome.object_path, harness_settings
    )
    assert exe.exists()


_SHARED_TEMPLATE = "template <class T> struct Box { T v; __attribute__((noinline, noipa)) T get() const { return v * 3; } };\n"


@requires_nvcc
def test_a_template_shared_with_the_harness_objects_still_links(harness_settings, tmp_path):
    """A candidate's inline/template functions are COMDAT groups; the harness's own objects may hold the same
    group (a std::vector<int> destructor did, on the H200 image). Localised but still grouped, the candidate's
    copy was discarded by the linker and its references left dangling ("defined in discarded section")."""
    source = (
        _SHARED_TEMPLATE
        + """
#include <cuda_runtime.h>
__global__ void add_kernel(const float* A, const float* B, float* C, int N, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i] + 0.0f * k;
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  Box<int> box{N};
  add_kernel<<<(N + 255) / 256, 256>>>(A, B, C, N, box.get());
}
"""
    )
    variant = load_task("vector_add").variant("fp32")
    outcome = compile_candidate(variant, src.prepare(source, harness_settings.max_source_bytes), harness_settings)
    assert outcome.ok, outcome.message
    harness_side = tmp_path / "harness_side.cpp"  # holds the same group, and comes first in the link
    harness_side.write_text(
        _SHARED_TEMPLATE
        + "int harness_side(int x) { Box<int> b{x}; return b.get(); }\nint main() { return harness_side(1) == 3 ? 0 : 1; }\n"
    )
    subprocess.run(["g++", "-O3", "-c", str(harness_side), "-o", str(tmp_path / "harness_side.o")], check=True)
    link = subprocess.run(
        ["nvcc", "-o", str(tmp_path / "exe"), str(tmp_path / "harness_side.o"), str(outcome.object_path)], capture_output=True, text=True
    )
    assert link.returncode == 0, link.stderr
    assert "defined in discarded section" not in link.stderr


@requires_nvcc
def test_the_runtime_is_two_objects_host_code_without_device_code_and_the_kernels(harness_settings):
    from bench_tasks.harness.compile import compile_runtime

    host, kernels = compile_runtime(harness_settings)

    def sections(obj: Path) -> str:
        return subprocess.run(["objdump", "-h", str(obj)], capture_output=True, text=True, check=True).stdout

    def defined(obj: Path) -> str:
        return subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout

    assert ".nv_fatbin" not in sections(host) and ".nv_fatbin" in sections(kernels)
    assert "cm::run_driver(" in defined(host) and "cm::run_driver(" not in defined(kernels)
    assert "cm::launch_l2_scrub_read(" in defined(kernels) and "cm::launch_l2_scrub_read(" not in defined(host)


def test_the_runtimes_two_objects_compile_at_the_same_time(harness_settings, monkeypatch):
    """One nvcc run over the whole runtime ran its device passes and the host compiler's pass one after the
    other; the two parts now compile side by side (each one's nvcc is replaced here by a wait that records
    when it ran)."""
    import threading
    import time

    from bench_tasks.harness import compile as cc

    spans: dict[str, tuple[float, float]] = {}
    both_started = threading.Barrier(2, timeout=30)

    def fake_nvcc_object(source_text, name, flags, settings, kind, includes=(), suffix=".cu"):
        start = time.monotonic()
        both_started.wait()  # raises BrokenBarrierError if the other part never starts while this one runs
        spans[name + suffix] = (start, time.monotonic())
        return 0, "", Path(f"/nowhere/{name}.o")

    monkeypatch.setattr(cc, "_nvcc_object", fake_nvcc_object)
    host, kernels = cc.compile_runtime(harness_settings)
    assert (host.name, kernels.name) == ("cm_runtime.o", "cm_kernels.o")
    assert set(spans) == {"cm_runtime.cpp", "cm_kernels.cu"}


@pytest.mark.parametrize(
    "setting, default, runtime_reads",
    [
        # the GPU test test_inputs_compared_on_the_host_catch_a_modified_input_as_the_device_comparison_does runs it;
        # without a pristine device copy the inputs are compared on the host
        ("input_checks_on_host", False, "!p.input_checks_on_host && cudaMalloc(&b.pristine"),
        # cm_host.h's allocator is tested in test_throughput, the runtime with it by every GPU test
        ("pinned_staging", True, "if (p.pinned_staging)"),
    ],
)
def test_a_driver_switch_in_the_settings_reaches_the_driver_as_a_plan_token_its_runtime_reads(tmp_path, setting, default, runtime_reads):
    from bench_tasks.harness.compile import RUNTIME_DIR
    from bench_tasks.harness.evaluate import _cases, _plan
    from bench_tasks.harness.plan import Plan
    from settings import HarnessSettings

    variant = load_task("vector_add").variant("fp32")
    assert getattr(HarnessSettings(), setting) is default
    for on in (False, True):
        settings = HarnessSettings(cache_dir=tmp_path / "cache", **{setting: on})
        cases = _cases(variant, [{"N": 100}], [1], 5, tmp_path, settings, True)
        text = _plan(variant, cases, tmp_path, settings).to_text()
        assert (f"{setting} 1" in text.splitlines()) == on
        assert getattr(Plan.from_text(text), setting) == on
    runtime = (RUNTIME_DIR / "cm_runtime.h").read_text()
    assert f'tok == "{setting}") in >> p.{setting}' in runtime
    assert runtime_reads in runtime


def _driver_symbols(candidate, settings) -> list[str]:
    """`nm -C` of the vector_add FP32 driver linked with this compiled candidate."""
    from bench_tasks.harness import compile as cc
    from bench_tasks.harness.driver import driver_source

    variant = load_task("vector_add").variant("fp32")
    exe = cc.build_driver(variant, driver_source(variant, True), cc.compile_baseline(variant, settings), candidate.object_path, settings)
    return subprocess.run(["nm", "-C", str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()


@requires_nvcc
def test_a_candidate_can_neither_call_nor_replace_the_runtimes_l2_scrub(harness_settings):
    """The runtime's kernels sit behind exported launch_* functions (cm_kernels.h). A candidate that calls one is
    rejected by the symbol allowlist; one that defines its own (a no-op scrub would leave L2 warm for its timed
    calls) keeps it local: the driver's runtime still calls the harness's."""
    calls = _compile("calls_harness_scrub.cu", harness_settings)
    assert calls.verdict == Verdict.rejected and "launch_l2_scrub_read" in calls.message
    replaces = _compile("replaces_harness_scrub.cu", harness_settings)
    assert replaces.ok, replaces.message
    symbols = _driver_symbols(replaces, harness_settings)
    kinds = sorted(line.split()[1] for line in symbols if "cm::launch_l2_scrub_read(" in line)
    assert kinds == ["T", "t"]  # the harness's, global; the candidate's, local


@requires_nvcc
def test_a_candidate_that_defines_the_runtimes_staging_hooks_links_and_keeps_its_own_copies(harness_settings):
    """cm_host.h's HostMemory (the page-locking hooks and the timing guard) has internal linkage: a candidate that
    defines a class of that name links (it is not turned into a link error) and its members are its own, local,
    while the runtime's stay the runtime's."""
    outcome = _compile("replaces_harness_staging_hooks.cu", harness_settings)
    assert outcome.ok, outcome.message
    symbols = _driver_symbols(outcome, harness_settings)
    for member in ("HostMemory::timing", "HostMemory::pin_alloc"):
        kinds = sorted(line.split()[1] for line in symbols if line.endswith(member))
        assert len(kinds) == 2 and all(k.islower() for k in kinds), (member, kinds)  # two copies, both local
