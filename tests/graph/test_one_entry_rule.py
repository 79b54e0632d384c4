"""One rule for a candidate's entry point (issue 39): the agent's check before compiling
(graph/kernel_text.check_prototype) asks the harness's rule (bench_tasks/prototype.entry_refusal) and never
refuses what the harness's compile and link check accepts. Pinned on every kernel of the honest corpus, every
BF16 twin, and a reply with each variation of the prototype, accepted or refused, compiled by the harness."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict
from bench_tasks.harness.evaluate import compile_only
from graph.kernel_text import check_prototype
from tests.conftest import requires_nvcc

BENCH = Path(__file__).resolve().parents[1] / "bench"
HONEST = BENCH / "honest"
CORPUS = tomllib.loads((HONEST / "manifest.toml").read_text())["kernel"]
TWINS = sorted((BENCH / "bf16_twins").glob("*.cu"))

SELU = (HONEST / "selu" / "fp32_omitted_defaults.cu").read_text()
ENTRY = 'extern "C" void selu_optimized(float* output, const float* input, const int N) {'
assert ENTRY in SELU


def _entry(params: str) -> str:
    return SELU.replace(ENTRY, f'extern "C" void selu_optimized({params}) {{')


# name -> (source, whether the harness accepts it). Each is a reply whose entry point differs from the task's
# prototype `selu_optimized(float* output, const float* input, const int N, float alpha = 1.67, float lambda = 1.0)`.
VARIATIONS = {
    "defaulted trailing parameters omitted": (SELU, True),
    "every parameter, defaults used": (_entry("float* output, const float* input, const int N, float a, float l"), True),
    "one defaulted parameter omitted": (_entry("float* output, const float* input, int N, float a"), True),
    "by-value const dropped": (_entry("float* output, const float* input, int N"), True),
    "const added to the output pointer": (
        _entry("const float* output, const float* input, int N").replace("(output, input", "((float*)output, input"),
        True,
    ),
    "const dropped from the input pointer": (_entry("float* output, float* input, int N"), True),
    "restrict and const pointers": (_entry("float* __restrict__ const output, const float* __restrict__ input, int N"), True),
    "unnamed parameters": (
        _entry("float*, const float*, int").replace(
            "if (N > 0) selu_kernel<<<(N + 255) / 256, 256>>>(output, input, N,", "if (0) selu_kernel<<<1, 1>>>(nullptr, nullptr, 0,"
        ),
        True,
    ),
    "int32_t for int": ("#include <cstdint>\n" + _entry("float* output, const float* input, int32_t N"), True),
    "same-named __global__ kernel beside the entry": (SELU.replace("selu_kernel", "selu_optimized"), True),
    "a comment quoting another prototype": ("// void selu_optimized(double* x)\n" + SELU, True),
    "long for int": (_entry("float* output, const float* input, long N"), False),
    "double pointer for float pointer": (
        _entry("float* output, const double* input, int N").replace("(output, input,", "(output, (const float*)input,"),
        False,
    ),
    "a parameter without a default left out": (
        _entry("float* output, const float* input")
        .replace("N, 1.67f", "1, 1.67f")
        .replace("(N + 255) / 256", "1")
        .replace("if (N > 0)", "if (1)"),
        False,
    ),
    "one parameter too many": (_entry("float* output, const float* input, const int N, float a, float l, int extra"), False),
}


def _variant(task: str, precision: str):
    return load_task(task).variant(precision)


@pytest.mark.parametrize("kernel", CORPUS, ids=lambda k: k["file"])
def test_the_agent_accepts_every_honest_corpus_kernel_before_compiling(kernel):
    source = (HONEST / kernel["file"]).read_text()
    check = check_prototype(source, _variant(kernel["task"], kernel["precision"]))
    assert not check.changed, check.message  # the harness accepts each: tests/bench/test_honest_corpus.py


@pytest.mark.parametrize("twin", TWINS, ids=lambda p: p.stem)
def test_the_agent_accepts_every_bf16_twin_before_compiling(twin):
    check = check_prototype(twin.read_text(), _variant(twin.stem, "bf16"))
    assert not check.changed, check.message  # the harness accepts each: tests/bench/test_bf16_tolerance.py


@requires_nvcc
@pytest.mark.parametrize("name", VARIATIONS)
def test_the_agents_check_and_the_harnesss_agree_on_each_variation(name, harness_settings):
    source, accepted = VARIATIONS[name]
    verdict, message, log = compile_only("selu", "fp32", source, settings=harness_settings)
    assert (verdict == Verdict.ok) == accepted, f"{name}: the harness says {verdict}: {message}\n{log[-1500:]}"
    check = check_prototype(source, _variant("selu", "fp32"))
    if accepted:
        assert not check.changed, f"{name}: the agent refuses what the harness accepts: {check.message}"
    else:
        assert verdict in (Verdict.link_error, Verdict.compile_error), message
        if check.changed:  # told before compiling: the same rule, in the same words as the harness's
            assert "does not match the expected prototype" in check.message and "does not match the expected prototype" in message


def test_the_agent_refuses_before_compiling_what_the_text_settles():
    variant = _variant("selu", "fp32")
    for name in ("long for int", "double pointer for float pointer", "one parameter too many", "a parameter without a default left out"):
        check = check_prototype(VARIATIONS[name][0], variant)
        assert check.changed and 'expected:  extern "C" void selu_optimized(' in check.message, name
    assert "parameter 3 is `long N`" in check_prototype(VARIATIONS["long for int"][0], variant).message


def test_what_the_text_cannot_settle_is_left_to_the_compiler():
    variant = _variant("selu", "fp32")
    macro = "#define REAL float\n" + _entry("REAL* output, const REAL* input, long N")  # long: wrong, but behind a typedef-like macro
    assert not check_prototype(macro, variant).changed
    assert not check_prototype('#define ENTRY selu_optimized\nextern "C" void ENTRY(double* x) {}', variant).changed
    # a same-named kernel of another shape beside an entry that is wrong: one declaration fails, the other is
    # a kernel; the text cannot tell which one is the extern "C" entry, only that one of them may pass
    both = _entry("float* output, const float* input, long N") + "\n__global__ void selu_optimized(float* o, const float* i, int n) {}\n"
    assert not check_prototype(both, variant).changed
