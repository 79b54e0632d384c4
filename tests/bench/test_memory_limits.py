"""Every compile and every sandboxed process has a memory limit (issue 30, defect 2): a template bomb, a
preprocessor-doubling bomb and an `#include "/dev/zero"` are stopped at the compiler's address-space limit
(sandbox_max_memory_bytes, RLIMIT_AS inherited by cicc, ptxas and the host compiler) with a verdict that says
so, three at once, while an honest kernel still compiles under the same limit; a GPU step (the timing driver)
is stopped at its resident-memory limit (sandbox_max_run_memory_bytes) by the watchdog; without bubblewrap the
address-space limit still holds. A small limit keeps these fast; the defaults are in settings/harness.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from bench_tasks.harness import compile as harness_compile
from bench_tasks.harness import sandbox as sb
from bench_tasks.harness.result import Verdict
from bench_tasks.spec import custom_task

from .sandbox_support import bwrap_works, have_nvcc, scratch_root, settings_with

pytestmark = pytest.mark.timeout(240)
LIMIT = 512 << 20  # an honest small kernel compiles within 256 MiB of address space (measured with nvcc 13.0)
SAYS = "the compiler used more than 0.5 GiB of memory"

TEMPLATE_BOMB = """
template <int N, unsigned long long M> struct B { static constexpr unsigned long long v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + 1>::v; };
template <unsigned long long M> struct B<0, M> { static constexpr unsigned long long v = M; };
__global__ void k(float* o) { *o = (float)B<22, 1>::v; }
extern "C" void bomb_optimized(float* O) { k<<<1, 1>>>(O); }
"""
PREPROCESSOR_BOMB = (
    "#define A0 x\n"
    + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 31))
    + '__global__ void k(float* o) { float x = 1; *o = (A30); }\nextern "C" void bomb_optimized(float* O) { k<<<1, 1>>>(O); }\n'
)
ZERO_INCLUDE = '#include "/dev/zero"\nextern "C" void bomb_optimized(float* O) {}\n'
HONEST = '__global__ void k(float* o) { *o = 1.0f; }\nextern "C" void bomb_optimized(float* O) { k<<<1, 1>>>(O); }\n'


@pytest.fixture
def settings(harness_settings):
    with scratch_root() as root:
        s = settings_with(harness_settings, root, sandbox_max_memory_bytes=LIMIT)
        ok, why = bwrap_works(s)
        if not ok:
            pytest.skip(f"no working bubblewrap here ({why}); CI installs it (apt-get install bubblewrap)")
        yield s


def _variant():
    task = custom_task("ct_bomb", "fp32", 'extern "C" void bomb(float* O)', {"O": {"role": "output", "length": "1"}}, [{"N": 1}], "")
    return task.variant("fp32")


@pytest.mark.skipif(not have_nvcc(), reason="nvcc not installed")
def test_compile_bombs_are_stopped_at_the_memory_limit_three_at_once(settings):
    variant = _variant()
    sources = {"template": TEMPLATE_BOMB, "preprocessor": PREPROCESSOR_BOMB, "dev_zero": ZERO_INCLUDE, "honest": HONEST}
    with ThreadPoolExecutor(len(sources)) as pool:
        futures = {name: pool.submit(harness_compile.compile_candidate, variant, src, settings) for name, src in sources.items()}
        outcomes = {name: f.result() for name, f in futures.items()}
    for name in ("template", "preprocessor", "dev_zero"):
        outcome = outcomes[name]
        assert outcome.verdict is Verdict.compile_error, (name, outcome.verdict, outcome.message, outcome.log[-500:])
        assert outcome.message.startswith(SAYS) and "CUDAMASTER_HARNESS__SANDBOX_MAX_MEMORY_BYTES" in outcome.message, (
            name,
            outcome.message,
        )
    assert outcomes["honest"].ok, outcomes["honest"].log[-2000:]


def test_a_fake_gpu_step_is_stopped_at_its_resident_memory_limit(settings):
    """FAKE GPU STEP: a python process stands for the driver (gpu=True: no address-space limit, the watchdog's)."""
    s = settings.model_copy(update={"sandbox_max_run_memory_bytes": 128 << 20})
    box = sb.sandbox_for(s)
    with sb.scratch(s, "cm-mem-") as tmp:
        child = box.start(
            ["/usr/bin/python3", "-c", "import time\nx = bytearray(400 << 20)\ntime.sleep(60)"],
            scratch=tmp,
            gpu=True,
            what="the timing driver",
        )
        rc, out = child.wait(60)
    assert rc is not None and rc < 0, (rc, out)
    assert out.startswith("CMERR sandbox the timing driver used more than 0.125 GiB of memory and was stopped"), out
    assert child.peak_rss > 128 << 20


def test_the_address_space_limit_holds_without_bubblewrap(harness_settings, tmp_path):
    """Opted out of the sandbox (allow_unsandboxed), a step without the GPU still runs under prlimit --as."""
    s = harness_settings.model_copy(update={"sandbox": "none", "allow_unsandboxed": True, "sandbox_max_memory_bytes": 256 << 20})
    box = sb.sandbox_for(s)
    rc, out = box.run(["/usr/bin/python3", "-c", "x = bytearray(600 << 20)"], scratch=tmp_path, timeout=60, what="the compiler")
    assert rc not in (0, None)
    assert out.startswith("CMERR sandbox the compiler used more than 0.25 GiB of memory"), out
    rc, out = box.run(["/usr/bin/python3", "-c", "x = bytearray(64 << 20)"], scratch=tmp_path, timeout=60)
    assert rc == 0, out
